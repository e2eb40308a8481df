import { keptBody, keptContentType, REDACTED, redactValues, RESPONSE_BODY_LIMIT, shownRequestHeaders } from './bodies';

describe('keptBody', () => {
  it('keeps a whole body that ended within the limit', () => {
    expect(keptBody(Buffer.from('{"ok":true}'), true)).toEqual({ body: '{"ok":true}', truncated: false });
    expect(keptBody(Buffer.alloc(RESPONSE_BODY_LIMIT, 'a'), true)).toEqual({ body: 'a'.repeat(RESPONSE_BODY_LIMIT), truncated: false });
  });

  it('cuts at the limit, marks it, and leaves out a character cut in two', () => {
    expect(keptBody(Buffer.alloc(RESPONSE_BODY_LIMIT + 1, 'a'), false)).toEqual({ body: 'a'.repeat(RESPONSE_BODY_LIMIT), truncated: true });
    // 'é' is two bytes: the limit falls between them.
    const read = Buffer.concat([Buffer.alloc(9, 'x'), Buffer.from('é'), Buffer.from('tail')]);
    expect(keptBody(read, true, 10)).toEqual({ body: 'x'.repeat(9), truncated: true });
  });

  it('marks a body that stopped before its end, and keeps no NUL', () => {
    expect(keptBody(Buffer.from('part'), false)).toEqual({ body: 'part', truncated: true });
    expect(keptBody(Buffer.from([0x61, 0x00, 0xff, 0x62]), true).body).toBe('a\uFFFD\uFFFDb');
  });
});

describe('keptContentType', () => {
  it('trims and bounds what the receiver sent, null for nothing', () => {
    expect(keptContentType(' application/json; charset=utf-8 ')).toBe('application/json; charset=utf-8');
    expect(keptContentType(undefined)).toBeNull();
    expect(keptContentType('')).toBeNull();
    expect(keptContentType('x'.repeat(500))).toHaveLength(200);
  });
});

describe('redactValues', () => {
  it('replaces every occurrence, longest value first, and leaves short values alone', () => {
    expect(redactValues('token=abcd1234 again abcd1234, sub abcd', ['abcd', 'abcd1234', 'ab'])).toBe(`token=${REDACTED} again ${REDACTED}, sub ${REDACTED}`);
    expect(redactValues('a b ab', ['ab'])).toBe('a b ab');
    expect(redactValues('nothing here', [])).toBe('nothing here');
  });
});

describe('shownRequestHeaders', () => {
  it('shows the destination’s headers with secret references redacted, and both signatures redacted', () => {
    const headers = shownRequestHeaders({
      deliveryId: 'dlv_x',
      destinationHeaders: { Authorization: 'Bearer {{secrets.TOKEN}}', 'X-Team': 'ops', 'Service-Signature': 'forged' },
    });
    expect(headers).toEqual({
      authorization: REDACTED,
      'x-team': 'ops',
      'content-type': 'application/json',
      'user-agent': 'DecisionService-Webhooks/1.0',
      'service-delivery-id': 'dlv_x',
      'service-signature': REDACTED,
      'webhook-id': 'dlv_x',
      'webhook-signature': REDACTED,
    });
  });
});

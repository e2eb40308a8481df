import type { DeliveryDetailView } from '@ds/contracts';
import { keptBody, keptContentType, RESPONSE_BODY_LIMIT, shownRequestHeaders, withheldBodies } from './bodies';
import { REDACTED } from './redaction';

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

describe('withheldBodies', () => {
  const view: DeliveryDetailView = {
    id: 'dlv_x',
    decision_id: 'dec_x',
    decision_slug: 'triage',
    execution_id: 'exec_x',
    destination_key: 'ops',
    kind: 'webhook',
    url: 'https://example.com/hook',
    livemode: true,
    status: 'succeeded',
    sequence: 1,
    attempt_count: 2,
    next_attempt_at: null,
    created_at: '2026-01-01T00:00:00.000Z',
    completed_at: '2026-01-01T00:00:01.000Z',
    bodies_shown: true,
    request: { method: 'POST', headers: { 'x-team': 'ops' }, body: '{"é":1}', body_bytes: 8 },
    attempts: [
      {
        sequence: 1,
        attempt: 1,
        started_at: '2026-01-01T00:00:00.000Z',
        outcome: 'timeout',
        response_status: null,
        duration_ms: 10_000,
        error: 'no answer',
        response: null,
      },
      {
        sequence: 1,
        attempt: 2,
        started_at: '2026-01-01T00:00:01.000Z',
        outcome: 'succeeded',
        response_status: 200,
        duration_ms: 12,
        error: null,
        response: { content_type: 'text/plain', body: 'ok ✓', body_bytes: 6, truncated: true },
      },
    ],
  };

  it('keeps status, timing and sizes, and drops headers, bodies and content types', () => {
    const withheld = withheldBodies(view);
    expect(withheld).toEqual({
      ...view,
      bodies_shown: false,
      request: { method: 'POST', headers: null, body: null, body_bytes: 8 },
      attempts: [view.attempts[0], { ...view.attempts[1], response: { content_type: null, body: null, body_bytes: 6, truncated: true } }],
    });
    expect(JSON.stringify(withheld)).not.toContain('ok ✓');
    expect(withheldBodies(withheld)).toEqual(withheld);
  });

  it('counts the sizes a reply of an earlier version did not carry, in UTF-8 bytes', () => {
    const earlier = JSON.parse(JSON.stringify(view)) as DeliveryDetailView;
    delete (earlier.request as Partial<DeliveryDetailView['request']>).body_bytes;
    delete (earlier.attempts[1]!.response as Partial<NonNullable<DeliveryDetailView['attempts'][number]['response']>>).body_bytes;
    const withheld = withheldBodies(earlier);
    expect(withheld.request.body_bytes).toBe(8);
    expect(withheld.attempts[1]!.response!.body_bytes).toBe(6);
  });
});

import { decodeAnswer, encodeRequest, JsonText } from './nats';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('the encoded request', () => {
  it('is what Nest’s NATS server reads: the id and the payload as data', () => {
    expect(JSON.parse(text(encodeRequest('7', { workspaceId: 'ws_1', n: [1, 2] })))).toEqual({ id: '7', data: { workspaceId: 'ws_1', n: [1, 2] } });
    expect(JSON.parse(text(encodeRequest('8', undefined)))).toEqual({ id: '8', data: null });
    expect(JSON.parse(text(encodeRequest('9', 'plain')))).toEqual({ id: '9', data: 'plain' });
  });

  it('carries a JSON text field as the very text it was given, whitespace and escapes included', () => {
    const received = '{ "state": {"message": "caf\\u00e9 \\"x\\"", "amount": 120} }\n';
    const encoded = text(encodeRequest('1', { slug: 'triage', body: new JsonText(received), livemode: false }));
    expect(encoded).toContain(`"body":${received}`);
    expect(JSON.parse(encoded)).toEqual({ id: '1', data: { slug: 'triage', livemode: false, body: { state: { message: 'café "x"', amount: 120 } } } });
  });

  it('carries a payload made of JSON text fields only', () => {
    const encoded = text(encodeRequest('2', { body: new JsonText('[1]'), other: new JsonText('{"a":null}') }));
    expect(JSON.parse(encoded)).toEqual({ id: '2', data: { body: [1], other: { a: null } } });
  });

  it('quotes the names of JSON text fields', () => {
    expect(JSON.parse(text(encodeRequest('3', { 'we"ird': new JsonText('1') })))).toEqual({ id: '3', data: { 'we"ird': 1 } });
  });
});

describe('the decoded answer', () => {
  it('gives the handler’s response or its error', () => {
    const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    expect(decodeAnswer(encode({ id: '1', response: { body: '{"a":1}' }, isDisposed: true })).response).toEqual({ body: '{"a":1}' });
    expect(decodeAnswer(encode({ id: '1', err: { code: 'NOT_FOUND', status: 404, message: 'x' }, isDisposed: true })).err).toMatchObject({ code: 'NOT_FOUND' });
  });
});

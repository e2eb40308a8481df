import { parseDelivery } from './delivery-worker';

const valid = {
  deliveryId: 'dlv_abcdefghij0123456789',
  workspaceId: 'ws_1',
  decisionId: 'dec_1',
  decisionSlug: 'triage',
  executionId: 'exec_1',
  destinationKey: 'ops',
  kind: 'webhook',
  livemode: true,
  url: 'https://hooks.example.com/in',
  method: 'POST',
  headers: { 'x-a': '1' },
  body: '{}',
  createdAt: '2026-01-01T00:00:00Z',
};

const encode = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

describe('a delivery message', () => {
  it('is read when every field is present and well formed', () => {
    expect(parseDelivery(encode(valid))).toEqual(valid);
    expect(parseDelivery(encode({ ...valid, headers: undefined }))).toEqual({ ...valid, headers: {} });
  });

  it.each([
    ['not JSON', '{'],
    ['null', 'null'],
    ['a bad id', { ...valid, deliveryId: 'dlv_short' }],
    ['an unknown kind', { ...valid, kind: 'email' }],
    ['livemode not boolean', { ...valid, livemode: 'yes' }],
    ['a lower-case method', { ...valid, method: 'post' }],
    ['a missing body', { ...valid, body: undefined }],
    ['headers not strings', { ...valid, headers: { a: 1 } }],
    ['headers an array', { ...valid, headers: ['a'] }],
    ['a missing workspace', { ...valid, workspaceId: undefined }],
  ])('is refused with %s', (_what, value) => {
    expect(parseDelivery(encode(value))).toBeNull();
  });
});

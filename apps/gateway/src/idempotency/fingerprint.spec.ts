import { canonicalJson, requestFingerprint } from './fingerprint';

describe('requestFingerprint', () => {
  const body = { state: { message: 'hi', amount: 3, tags: ['a', 'b'] } };

  it('is the same for the same JSON in another key order and spacing', () => {
    const reordered = JSON.parse('{ "state": { "tags": ["a","b"], "amount": 3, "message": "hi" } }');
    expect(requestFingerprint('POST', '/v1/decisions/x', body)).toBe(requestFingerprint('post', '/v1/decisions/x', reordered));
  });

  it('is the same for the same query in another order', () => {
    expect(requestFingerprint('POST', '/v1/decisions/x?b=2&a=1', body)).toBe(requestFingerprint('POST', '/v1/decisions/x?a=1&b=2', body));
  });

  it.each([
    ['another method', 'PUT', '/v1/decisions/x', body],
    ['another slug', 'POST', '/v1/decisions/y', body],
    ['another query', 'POST', '/v1/decisions/x?include=probabilities', body],
    ['another value', 'POST', '/v1/decisions/x', { state: { ...body.state, amount: 4 } }],
    ['another array order', 'POST', '/v1/decisions/x', { state: { ...body.state, tags: ['b', 'a'] } }],
  ])('differs for %s', (_what, method, url, other) => {
    expect(requestFingerprint(method, url, other)).not.toBe(requestFingerprint('POST', '/v1/decisions/x', body));
  });

  it('writes canonical JSON', () => {
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: true })).toBe('{"a":true,"b":[1,{"c":"x","d":null}]}');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

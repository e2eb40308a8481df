import fc from 'fast-check';
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

  it('tells pinned versions apart and leaves an unpinned request as it always was', () => {
    const unpinned = requestFingerprint('POST', '/v1/decisions/x', body);
    expect(requestFingerprint('POST', '/v1/decisions/x', body, [])).toBe(unpinned);
    const one = requestFingerprint('POST', '/v1/decisions/x', body, ['decision-version:1']);
    expect(one).not.toBe(unpinned);
    expect(one).not.toBe(requestFingerprint('POST', '/v1/decisions/x', body, ['decision-version:2']));
    expect(one).toBe(requestFingerprint('POST', '/v1/decisions/x', body, ['decision-version:1']));
  });

  it('writes canonical JSON', () => {
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: true })).toBe('{"a":true,"b":[1,{"c":"x","d":null}]}');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('canonicalJson at any depth', () => {
  // The plain recursive definition, safe here because fast-check's values are shallow.
  function recursiveCanonical(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(recursiveCanonical).join(',')}]`;
    if (value !== null && typeof value === 'object') {
      const entries = Object.keys(value)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${recursiveCanonical((value as Record<string, unknown>)[key])}`);
      return `{${entries.join(',')}}`;
    }
    return JSON.stringify(value) ?? 'null';
  }

  it('is the recursive definition, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(recursiveCanonical(value));
      }),
      { numRuns: 500 },
    );
  });

  it('writes nesting far deeper than the call stack allows', () => {
    const depth = 200_000;
    let value: unknown = 'core';
    for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { z: value, a: 1 };
    const text = canonicalJson(value);
    expect(text.startsWith('{"a":1,"z":[{"a":1,"z":[')).toBe(true);
    expect(text).toHaveLength(depth / 2 + (depth / 2) * '{"a":1,"z":}'.length + '"core"'.length + depth / 2);
    expect(requestFingerprint('POST', '/v1/decisions/x', value)).toMatch(/^[0-9a-f]{64}$/);
  });
});

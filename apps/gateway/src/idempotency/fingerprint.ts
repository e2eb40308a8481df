import { createHash } from 'node:crypto';

/**
 * What makes two requests "the same request" for an Idempotency-Key: the method, the path (so the
 * decision slug), the query with its parameters in order of name, and the body as JSON with object keys
 * sorted — so a retry that re-serialises the same JSON with other spacing or key order is the same
 * request, and any change of value is a different one.
 */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  const [path, query = ''] = url.split('?', 2);
  const params = new URLSearchParams(query);
  params.sort();
  return createHash('sha256')
    .update(`${method.toUpperCase()}\n${path}\n${params.toString()}\n${canonicalJson(body)}`)
    .digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

import { createHash } from 'node:crypto';

/**
 * What makes two requests "the same request" for an Idempotency-Key: the method, the path (so the
 * decision slug), the query with its parameters in order of name, and the body as JSON with object keys
 * sorted — so a retry that re-serialises the same JSON with other spacing or key order is the same
 * request, and any change of value is a different one. `headers` are the request headers that change what runs
 * (`decision-version:N`); none leaves the fingerprint as it was before such headers existed, so keys stored
 * then still match.
 */
export function requestFingerprint(method: string, url: string, body: unknown, headers: readonly string[] = []): string {
  const [path, query = ''] = url.split('?', 2);
  const params = new URLSearchParams(query);
  params.sort();
  const hash = createHash('sha256').update(`${method.toUpperCase()}\n${path}\n${params.toString()}\n${canonicalJson(body)}`);
  for (const header of headers) hash.update(`\n${header}`);
  return hash.digest('hex');
}

/**
 * JSON with object keys sorted. Written with an explicit stack instead of recursion, so that no nesting depth
 * can overflow the call stack, whatever reaches it.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // A string is text to write as it is; a { value } is a value still to be written.
  const work: Array<string | { value: unknown }> = [{ value }];
  while (work.length > 0) {
    const item = work.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const current = item.value;
    if (current === null || typeof current !== 'object') {
      out.push(JSON.stringify(current) ?? 'null');
      continue;
    }
    const parts: Array<string | { value: unknown }> = [];
    if (Array.isArray(current)) {
      parts.push('[');
      current.forEach((element, index) => parts.push(index > 0 ? ',' : '', { value: element }));
      parts.push(']');
    } else {
      parts.push('{');
      Object.keys(current)
        .sort()
        .forEach((key, index) => parts.push(`${index > 0 ? ',' : ''}${JSON.stringify(key)}:`, { value: (current as Record<string, unknown>)[key] }));
      parts.push('}');
    }
    for (const part of parts.reverse()) work.push(part);
  }
  return out.join('');
}

// `{{params.NAME}}` placeholders in reply texts, LLM prompts and inputs, agent instructions and http bodies.

const PLACEHOLDER = /\{\{\s*params\.([^}\s]*)\s*\}\}/g;

/** The param names a text refers to, each once, in order of first use. */
export function referencedParams(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(PLACEHOLDER), (match) => match[1]))];
}

/**
 * Replaces each placeholder with its param: text as is, other JSON values serialized, a param without a value
 * (or an undeclared one) with nothing. Escaping for the target format (e.g. JSON bodies) is the caller's job.
 */
export function renderTemplate(text: string, params: Readonly<Record<string, unknown>>): string {
  return renderTemplateWithin(text, params, Infinity)!;
}

/**
 * renderTemplate, or null as soon as the result would pass maxLength characters. A short template that
 * repeats a large state value can expand a thousandfold; it is never built beyond the limit.
 */
export function renderTemplateWithin(text: string, params: Readonly<Record<string, unknown>>, maxLength: number): string | null {
  const rendered = new Map<string, string>();
  const parts: string[] = [];
  let length = 0;
  let from = 0;
  const append = (part: string): boolean => {
    length += part.length;
    parts.push(part);
    return length <= maxLength;
  };
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (!append(text.slice(from, match.index))) return null;
    const name = match[1];
    let value = rendered.get(name);
    if (value === undefined) {
      value = renderValue(Object.hasOwn(params, name) ? params[name] : undefined);
      rendered.set(name, value);
    }
    if (!append(value)) return null;
    from = match.index + match[0].length;
  }
  if (!append(text.slice(from))) return null;
  return parts.join('');
}

function renderValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

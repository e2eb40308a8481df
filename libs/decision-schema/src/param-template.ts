// `{{params.NAME}}` placeholders in reply texts, LLM prompts and inputs, agent instructions and http bodies.

const PLACEHOLDER = /\{\{\s*params\.([^}\s]*)\s*\}\}/g;

/** The param a PLACEHOLDER match names: its one group is not optional, so every match has it (empty at worst). */
const paramName = (match: RegExpMatchArray): string => match[1]!;

/** The param names a text refers to, each once, in order of first use. */
export function referencedParams(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(PLACEHOLDER), paramName))];
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
export function renderTemplateWithin(
  text: string,
  params: Readonly<Record<string, unknown>>,
  maxLength: number,
  format: TemplateFormat = 'text',
): string | null {
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
    const name = paramName(match);
    let value = rendered.get(name);
    if (value === undefined) {
      value = renderValue(Object.hasOwn(params, name) ? params[name] : undefined, format);
      rendered.set(name, value);
    }
    if (!append(value)) return null;
    from = match.index + match[0].length;
  }
  if (!append(text.slice(from))) return null;
  return parts.join('');
}

/**
 * `json`: the template is a JSON text whose author put placeholders inside strings or where a value goes, so a
 * text value is escaped as the inside of a JSON string (a quote or a line break in a customer's name cannot
 * break the body or add fields to it). Other values are JSON either way.
 */
export type TemplateFormat = 'text' | 'json';

function renderValue(value: unknown, format: TemplateFormat): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') return JSON.stringify(value);
  return format === 'json' ? JSON.stringify(value).slice(1, -1) : value;
}

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
  return text.replace(PLACEHOLDER, (_match, name: string) => {
    const value = Object.hasOwn(params, name) ? params[name] : undefined;
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

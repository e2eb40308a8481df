/**
 * A delivery's body as the page shows it: JSON pretty-printed with two-space indents when the content type says
 * JSON (or says nothing and the text parses), and the text as it is otherwise. A truncated JSON body does not
 * parse and is shown as it came.
 */
export function shownBody(text: string, contentType: string | null | undefined): { text: string; json: boolean } {
  const type = contentType?.split(';')[0]!.trim().toLowerCase() ?? '';
  const saysJson = type === 'application/json' || type.endsWith('+json');
  if (!saysJson && type !== '') return { text, json: false };
  try {
    return { text: JSON.stringify(JSON.parse(text), null, 2), json: true };
  } catch {
    return { text, json: false };
  }
}

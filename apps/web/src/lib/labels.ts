/**
 * A label cut to at most `maxChars` characters with an ellipsis in the middle, so that names sharing a prefix
 * ("refund-triage-europe", "refund-triage-asia") stay told apart by their ends. Counts code points, so an
 * emoji or an accented letter is never split.
 */
export function fitLabel(text: string, maxChars: number): string {
  const chars = Array.from(text);
  if (chars.length <= maxChars) return text;
  if (maxChars <= 1) return '…';
  const kept = maxChars - 1;
  const head = Math.ceil(kept / 2);
  const tail = kept - head;
  return `${chars.slice(0, head).join('').trimEnd()}…${
    tail > 0
      ? chars
          .slice(chars.length - tail)
          .join('')
          .trimStart()
      : ''
  }`;
}

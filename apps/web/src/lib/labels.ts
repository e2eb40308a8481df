/**
 * A label broken onto lines of at most `maxChars` characters, every character kept: between words, else after a
 * hyphen, underscore, slash, dot or colon (a slug or a key), and only a run with none of these is split where the
 * line is full. Counts code points, so an emoji or an accented letter is never split. Joined again with no
 * separator where a line ended inside a word, a line-broken label reads as the whole name.
 */
export function wrapLabel(text: string, maxChars: number): string[] {
  const width = Math.max(1, Math.floor(maxChars));
  const words = text.split(/\s+/).filter((word) => word.length > 0);
  const lines: string[] = [];
  let line: string[] = [];
  const flush = () => {
    if (line.length > 0) lines.push(line.join(''));
    line = [];
  };
  for (const word of words) {
    for (const piece of pieces(word, width)) {
      const separator = line.length > 0 && piece.startsOfWord ? 1 : 0;
      if (line.length > 0 && line.length + separator + piece.chars.length > width) flush();
      if (line.length > 0 && piece.startsOfWord) line.push(' ');
      line.push(...piece.chars);
    }
  }
  flush();
  return lines;
}

/** A word as pieces no wider than a line: cut after its break characters, a run too long for a line cut at the line's width. */
function pieces(word: string, width: number): Array<{ chars: string[]; startsOfWord: boolean }> {
  const parts = word.match(/[^-_/.:]*[-_/.:]+|[^-_/.:]+$/gu) ?? [word];
  const result: Array<{ chars: string[]; startsOfWord: boolean }> = [];
  let current: string[] = [];
  let first = true;
  const push = () => {
    if (current.length === 0) return;
    result.push({ chars: current, startsOfWord: first });
    first = false;
    current = [];
  };
  for (const part of parts) {
    let chars = Array.from(part);
    if (current.length + chars.length > width) push();
    while (chars.length > width) {
      current = chars.slice(0, width);
      push();
      chars = chars.slice(width);
    }
    current.push(...chars);
  }
  push();
  return result;
}

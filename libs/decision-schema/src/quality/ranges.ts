export const DAY_MS = 86_400_000;

/**
 * One part of a quality report's range: whole UTC days read from the per-day rollup, or a stretch of time read
 * from the labels themselves, added or subtracted. `from` is inclusive, `to` exclusive, null unbounded.
 */
export interface ReportTerm {
  read: 'days' | 'labels';
  from: Date | null;
  to: Date | null;
  sign: 1 | -1;
}

/**
 * How to count the labels executed in [from, to) from day rollups and as few labels as possible: the whole days
 * inside the range from the rollup; a partial day at either end from its labels when it is at most half a day, or
 * else as the whole day's rollup minus the labels of the rest of that day. No label is ever read for more than
 * half a day per end, and the sums stay exact (the rollup's are numeric).
 */
export function reportTerms(from: Date | null, to: Date | null): ReportTerm[] {
  const start = from?.getTime() ?? null;
  const end = to?.getTime() ?? null;
  if (start !== null && end !== null && start >= end) return [];
  const terms: ReportTerm[] = [];
  const part = (a: number, b: number, day: number) => {
    if ((b - a) * 2 <= DAY_MS) {
      terms.push(term('labels', a, b, 1));
      return;
    }
    terms.push(term('days', day, day + DAY_MS, 1));
    if (a > day) terms.push(term('labels', day, a, -1));
    if (b < day + DAY_MS) terms.push(term('labels', b, day + DAY_MS, -1));
  };
  // The first midnight at or after `from`, the last at or before `to`.
  const head = start === null ? null : Math.ceil(start / DAY_MS) * DAY_MS;
  const tail = end === null ? null : Math.floor(end / DAY_MS) * DAY_MS;
  if (head !== null && tail !== null && head > tail) {
    // Both ends inside one day.
    part(start!, end!, tail);
    return terms;
  }
  if (start !== null && start < head!) part(start, head!, head! - DAY_MS);
  if (head === null || tail === null || head < tail) terms.push(term('days', head, tail, 1));
  if (end !== null && tail! < end) part(tail!, end, tail!);
  return terms;
}

function term(read: ReportTerm['read'], from: number | null, to: number | null, sign: 1 | -1): ReportTerm {
  return { read, from: from === null ? null : new Date(from), to: to === null ? null : new Date(to), sign };
}

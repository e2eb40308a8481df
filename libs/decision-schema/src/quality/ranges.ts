export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/** The rollup's grains, coarsest first, and what a term reads from each. */
const GRAINS = [
  { ms: DAY_MS, read: 'days' },
  { ms: HOUR_MS, read: 'hours' },
] as const;

/**
 * One part of a quality report's range: whole UTC days or hours read from the rollup, or a stretch of time read
 * from the labels themselves, added or subtracted. `from` is inclusive, `to` exclusive, null unbounded.
 */
export interface ReportTerm {
  read: 'days' | 'hours' | 'labels';
  from: Date | null;
  to: Date | null;
  sign: 1 | -1;
}

/**
 * How to count the labels executed in [from, to) from the rollup and as few labels as possible: the whole days
 * inside the range from the day rollup; the whole hours of a partial first or last day from the hour rollup; a
 * partial hour at either end from its labels when it is at most half an hour, or else as that hour's rollup minus
 * the labels of the rest of the hour. At most an hour of labels is read in all, and the sums stay exact (the
 * rollup's are numeric).
 */
export function reportTerms(from: Date | null, to: Date | null): ReportTerm[] {
  const start = from?.getTime() ?? null;
  const end = to?.getTime() ?? null;
  if (start !== null && end !== null && start >= end) return [];
  const terms: ReportTerm[] = [];
  cover(start, end, 0, terms);
  return terms;
}

function cover(start: number | null, end: number | null, level: number, terms: ReportTerm[]): void {
  const grain = GRAINS[level]!;
  // The first boundary at or after `start`, the last at or before `end`.
  const head = start === null ? null : Math.ceil(start / grain.ms) * grain.ms;
  const tail = end === null ? null : Math.floor(end / grain.ms) * grain.ms;
  if (head !== null && tail !== null && head > tail) {
    // Both ends inside one unit of this grain.
    part(start!, end!, tail, level, terms);
    return;
  }
  if (start !== null && start < head!) part(start, head!, head! - grain.ms, level, terms);
  if (head === null || tail === null || head < tail) terms.push(term(grain.read, head, tail, 1));
  if (end !== null && tail! < end) part(tail!, end, tail!, level, terms);
}

/** [start, end) strictly inside the unit of grain `level` that begins at `unit`. */
function part(start: number, end: number, unit: number, level: number, terms: ReportTerm[]): void {
  if (level + 1 < GRAINS.length) {
    cover(start, end, level + 1, terms);
    return;
  }
  const grain = GRAINS[level]!;
  if ((end - start) * 2 <= grain.ms) {
    terms.push(term('labels', start, end, 1));
    return;
  }
  terms.push(term(grain.read, unit, unit + grain.ms, 1));
  if (start > unit) terms.push(term('labels', unit, start, -1));
  if (end < unit + grain.ms) terms.push(term('labels', end, unit + grain.ms, -1));
}

function term(read: ReportTerm['read'], from: number | null, to: number | null, sign: 1 | -1): ReportTerm {
  return { read, from: from === null ? null : new Date(from), to: to === null ? null : new Date(to), sign };
}

/**
 * The value axis of a chart, fitted to its data: a range that starts at 0 (amounts, counts and rates are never
 * negative, and a bar or a rate read against a cut axis exaggerates) and ends at the first round tick at or above
 * the largest value, so $0.15 is drawn against 0–0.15 rather than a flat line under a 0–4 axis.
 */
export interface AxisScale {
  domain: [number, number];
  ticks: number[];
}

export interface AxisOptions {
  /** The smallest top the axis takes: an all-zero series is then a line at 0 under a labelled axis, not an empty frame. */
  minSpan: number;
  /** Counts: ticks are whole numbers. */
  integer?: boolean;
  /** How many intervals the axis aims for (it may take one more or fewer to keep steps round). */
  intervals?: number;
}

/** Steps are 1, 2, 2.5 or 5 times a power of ten: ticks a reader adds up at a glance. */
const STEPS = [1, 2, 2.5, 5, 10];

/** The round step giving about `intervals` intervals up to `top`. */
export function niceStep(top: number, intervals: number, integer = false): number {
  const raw = top / Math.max(1, intervals);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = STEPS.map((factor) => factor * power).find((candidate) => candidate >= raw * (1 - 1e-9)) ?? 10 * power;
  if (!integer) return step;
  // Whole numbers only: 2.5 of a count is not a count.
  if (step <= 1) return 1;
  return Number.isInteger(step) ? step : Math.ceil(step);
}

/** Rounds away the binary noise of repeated additions (0.1 + 0.2), so a tick reads 0.3. */
function clean(value: number): number {
  return Number.parseFloat(value.toPrecision(12));
}

/** The axis from 0 to a round top at or above every finite value (nulls and non-numbers are gaps, not zeros). */
export function axisScale(values: Iterable<number | null | undefined>, options: AxisOptions): AxisScale {
  const intervals = options.intervals ?? 4;
  let largest = 0;
  for (const value of values) if (typeof value === 'number' && Number.isFinite(value) && value > largest) largest = value;
  const top = Math.max(largest, options.minSpan);
  const step = niceStep(top, intervals, options.integer);
  const count = Math.max(1, Math.ceil(clean(top / step)));
  const ticks = Array.from({ length: count + 1 }, (_, index) => clean(index * step));
  return { domain: [0, ticks[ticks.length - 1]!], ticks };
}

/**
 * The indices of values drawn as a lone point: a number with no number on either side (the series' only value,
 * or one between gaps). A line needs two neighbours to draw anything, so these get a dot of their own.
 */
export function lonePoints(values: ReadonlyArray<number | null | undefined>): number[] {
  const present = (index: number) => typeof values[index] === 'number' && Number.isFinite(values[index]);
  const lone: number[] = [];
  for (let index = 0; index < values.length; index += 1) {
    if (present(index) && !present(index - 1) && !present(index + 1)) lone.push(index);
  }
  return lone;
}

/** Per category, the sum of the stacked series (the height of a stacked bar); each value alone otherwise. */
export function stackedTotals(data: ReadonlyArray<Record<string, unknown>>, keys: readonly string[], stacked: boolean): number[] {
  return data.flatMap((datum) => {
    const values = keys.map((key) => datum[key]).filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
    return stacked ? [values.reduce((sum, value) => sum + Math.max(0, value), 0)] : values;
  });
}

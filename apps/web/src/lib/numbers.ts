/** Numbers as people read them, in the application's language: 1,000,000 rather than 1000000, 2.57 rather than 2.5730000000000004. */

export function formatCount(value: number, locale: string): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(value);
}

/** At most `digits` decimals, trailing zeros dropped (3, 2.5, 2.57). */
export function formatDecimal(value: number, locale: string, digits = 2): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: digits }).format(value);
}

/** A 0..1 share as a whole percentage; the engine's 0.999 is not "100%", and 0.001 is not "0%". */
export function formatShare(value: number, locale: string): string {
  const format = (share: number) => new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 0 }).format(share);
  if (value > 0.99 && value < 1) return `>${format(0.99)}`;
  if (value > 0 && value < 0.01) return `<${format(0.01)}`;
  return format(value);
}

/** An answer of a run: text as it is, a number (a probability question's p(yes)) rounded. */
export function formatAnswer(value: unknown, locale: string): string {
  if (typeof value === 'number') return formatDecimal(value, locale);
  if (typeof value === 'string') return value;
  return value === undefined ? '—' : JSON.stringify(value);
}

/** Short figures for chart axes: 1M, 750K, 12. */
export function formatCompact(value: number, locale: string): string {
  return new Intl.NumberFormat(locale, { notation: 'compact', maximumFractionDigits: 1 }).format(value);
}

/**
 * A value axis' tick: compact from a thousand up ("1M" fits the axis where "1000000" is cut off), three significant
 * digits below, so the small steps of a cost axis ($0.0025) are not all read as 0. The frame's table has the exact figures.
 */
export function formatAxisValue(value: number, locale: string): string {
  if (Math.abs(value) >= 1000) return formatCompact(value, locale);
  return new Intl.NumberFormat(locale, { maximumSignificantDigits: 3 }).format(value);
}

/** An estimated cost in US dollars: a run costs fractions of a cent, so two significant digits rather than cents. */
export function formatUsd(value: number, locale: string): string {
  if (value === 0) return new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD' }).format(0);
  return new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 }).format(value);
}

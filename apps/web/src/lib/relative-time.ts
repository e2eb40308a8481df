const UNITS: Array<{ unit: Intl.RelativeTimeFormatUnit; seconds: number }> = [
  { unit: 'year', seconds: 365 * 86_400 },
  { unit: 'month', seconds: 30 * 86_400 },
  { unit: 'day', seconds: 86_400 },
  { unit: 'hour', seconds: 3_600 },
  { unit: 'minute', seconds: 60 },
];

/**
 * How long ago `value` was, in the reader's language ("3 minutes ago", "yesterday"), in the largest whole unit;
 * under a minute (or a time slightly ahead of this clock) reads as now. Null for a missing or unreadable time.
 */
export function formatTimeAgo(value: string | null, now: Date, locale: string): string | null {
  if (value === null) return null;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  const secondsAgo = Math.max(0, (now.getTime() - at) / 1000);
  const words = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  const unit = UNITS.find((candidate) => secondsAgo >= candidate.seconds);
  return unit ? words.format(-Math.floor(secondsAgo / unit.seconds), unit.unit) : words.format(0, 'second');
}

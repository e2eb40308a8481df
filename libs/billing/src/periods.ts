export interface Period {
  start: Date;
  end: Date;
}

/** Monthly periods counted from the anchor's day and time, clamped to short months. */
export function currentPeriod(anchor: Date, now: Date): Period {
  // Nothing is billed before the anchor. A request that read the clock just before a concurrent one created
  // the account (with its own, later clock) belongs to the first period, not to the month before it.
  if (now < anchor) return { start: new Date(anchor), end: addMonths(anchor, 1) };
  let months = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  let start = addMonths(anchor, months);
  if (start > now) start = addMonths(anchor, --months);
  return { start, end: addMonths(anchor, months + 1) };
}

function addMonths(anchor: Date, months: number): Date {
  const target = new Date(anchor);
  const day = anchor.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}

// The dates and version numbers every route takes from a query string, a path or a JSON body, read one strict way:
// what is not exactly one of the documented spellings is refused, never guessed at.
import type { SchemaIssue } from './issues';

/** Version numbers are stored as PostgreSQL `integer`: 1 to 2^31 − 1 everywhere, from a path, a query or a body. */
export const VERSION_NUMBER_MAX = 2_147_483_647;

/** Instants PostgreSQL's `timestamptz` and ISO 8601's four-digit years both hold. */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

export type ParsedValue<T> = { ok: true; value: T } | { ok: false; issue: SchemaIssue };

/** Digits of a version in canonical form: no sign, no leading zero, no space, no exponent, at most ten digits. */
const CANONICAL_VERSION = /^[1-9][0-9]{0,9}$/;

const VERSION_MESSAGE = `must be a version number: a whole number from 1 to ${VERSION_NUMBER_MAX}`;

/**
 * A version number written as text (a query parameter, a path segment, a header): the digits of a whole number from 1
 * to VERSION_NUMBER_MAX in canonical form. `01`, `+1`, ` 1`, `1.0`, `1e0` and a repeated parameter are refused.
 */
export function parseVersionText(value: unknown, path: string): ParsedValue<number> {
  if (typeof value === 'string' && CANONICAL_VERSION.test(value)) {
    const number = Number(value);
    if (number <= VERSION_NUMBER_MAX) return { ok: true, value: number };
  }
  return { ok: false, issue: { path, message: `${VERSION_MESSAGE}, written in digits without sign, leading zeros or spaces` } };
}

/** A version number in a JSON body: a JSON number that is a whole number from 1 to VERSION_NUMBER_MAX; `"1"` is refused. */
export function parseVersionNumber(value: unknown, path: string): ParsedValue<number> {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= VERSION_NUMBER_MAX) return { ok: true, value };
  if (typeof value === 'string') return { ok: false, issue: { path, message: `${VERSION_MESSAGE}, as a JSON number (1, not "1")` } };
  return { ok: false, issue: { path, message: VERSION_MESSAGE } };
}

/**
 * `YYYY-MM-DD`, or `YYYY-MM-DDThh:mm`, optionally `:ss` and then optionally a fraction of 1 to 9 digits, followed by
 * `Z` or an offset `±hh:mm`. Upper-case `T` and `Z` only; no space for the `T`, no local time without an offset.
 */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):(\d{2})))?$/;

const INSTANT_MESSAGE = 'must be an ISO 8601 date such as 2026-05-01 or a timestamp with a time zone such as 2026-05-01T12:00:00Z';

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * A calendar date (midnight UTC) or a timestamp with a time zone, as one instant. A date or time that does not exist
 * (2026-02-30, month 13, hour 24, second 60, offset +24:00) is refused, never rolled over into the next one; so are
 * instants before year 1 or after year 9999 once the offset is applied. A fraction finer than a millisecond is read
 * to the millisecond (digits past the third are dropped).
 */
export function parseInstant(value: unknown, path: string): ParsedValue<Date> {
  const match = typeof value === 'string' ? ISO_INSTANT.exec(value) : null;
  if (!match) return { ok: false, issue: { path, message: INSTANT_MESSAGE } };
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, fraction, zulu, sign, offsetHourText, offsetMinuteText] = match;
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  const wrong = (what: string) => ({ ok: false as const, issue: { path, message: `${INSTANT_MESSAGE}; ${what}` } });
  if (year < 1) return wrong('year 0000 does not exist');
  if (month < 1 || month > 12) return wrong(`there is no month ${monthText}`);
  if (day < 1 || day > daysInMonth(year, month)) return wrong(`${MONTH_NAMES[month - 1]} ${yearText} has no day ${dayText}`);
  const hour = Number(hourText ?? 0);
  const minute = Number(minuteText ?? 0);
  const second = Number(secondText ?? 0);
  if (hour > 23 || minute > 59 || second > 59) return wrong('hours run from 00 to 23, minutes and seconds from 00 to 59');
  let offsetMinutes = 0;
  if (hourText !== undefined && zulu === undefined) {
    const offsetHour = Number(offsetHourText);
    const offsetMinute = Number(offsetMinuteText);
    if (offsetHour > 23 || offsetMinute > 59) return wrong('an offset runs from -23:59 to +23:59');
    offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHour * 60 + offsetMinute);
  }
  const milliseconds = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const instant = new Date(0);
  // setUTCFullYear, unlike Date.UTC, reads years 1 to 99 as themselves rather than as 1901 to 1999.
  instant.setUTCFullYear(year, month - 1, day);
  instant.setUTCHours(hour, minute, second, milliseconds);
  const ms = instant.getTime() - offsetMinutes * 60_000;
  if (ms < EARLIEST_MS || ms > LATEST_MS) return wrong('instants run from year 0001 to year 9999 (UTC)');
  return { ok: true, value: new Date(ms) };
}

import type { ValidationIssue } from './errors';

/**
 * What the PostgreSQL columns behind the API can hold, for every number and date that comes from outside: a value
 * past its column's range fails its statement (22003, 22008) and would answer 500, so it is refused first with
 * 400 `INVALID_REQUEST` naming the field. One place, so that every service checks the same ranges.
 */

/** `integer` (int4). */
export const INT4_MAX = 2_147_483_647;
/** `bigint` (int8), as text: row sequences in cursors stay strings end to end. */
export const INT8_MAX = 9_223_372_036_854_775_807n;

/**
 * `integer`: 32-bit. `bigint`: 64-bit in the database, but the services read and write these values as JavaScript
 * numbers (and JSON carries them so), exact only up to 2^53 - 1: that is the bound for a value from outside.
 */
export type IntegerColumn = 'integer' | 'bigint';

const COLUMN_MAX: Record<IntegerColumn, number> = { integer: INT4_MAX, bigint: Number.MAX_SAFE_INTEGER };
const COLUMN_MIN: Record<IntegerColumn, number> = { integer: -INT4_MAX - 1, bigint: -Number.MAX_SAFE_INTEGER };

export interface IntegerRange {
  /** Defaults to the column's own bounds. */
  min?: number;
  max?: number;
}

function bounds(column: IntegerColumn, range: IntegerRange): { min: number; max: number } {
  return { min: Math.max(range.min ?? COLUMN_MIN[column], COLUMN_MIN[column]), max: Math.min(range.max ?? COLUMN_MAX[column], COLUMN_MAX[column]) };
}

/** A whole number (a JSON number, never a string) within `range` and the column's range. */
export function isStorableInteger(value: unknown, column: IntegerColumn, range: IntegerRange = {}): value is number {
  const { min, max } = bounds(column, range);
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** The issue for a value that is not a storable integer, naming the field and the range; null when it is one. */
export function integerIssue(value: unknown, path: string, column: IntegerColumn, range: IntegerRange = {}, orNull = ''): ValidationIssue | null {
  if (isStorableInteger(value, column, range)) return null;
  const { min, max } = bounds(column, range);
  return { path, message: `must be a whole number from ${min} to ${max}${orNull}` };
}

/** Decimal digits naming a non-negative `bigint` (a row sequence in a cursor). */
export function isBigintText(text: string): boolean {
  return /^\d{1,19}$/.test(text) && BigInt(text) <= INT8_MAX;
}

/**
 * Timestamps from outside are years 0001 to 9999: what ISO 8601's four-digit years spell and PostgreSQL parses back
 * from the text the services pass it. JavaScript's own range (±275,760 years) reaches past PostgreSQL's on one side
 * and its six-digit `+275760-…` spelling is one PostgreSQL does not read.
 */
export const TIMESTAMP_MIN_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const TIMESTAMP_MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** The instant a string names, when JavaScript reads it and a `timestamptz` column holds it; null otherwise. */
export function storableTimestamp(value: unknown): Date | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || ms < TIMESTAMP_MIN_MS || ms > TIMESTAMP_MAX_MS) return null;
  return new Date(ms);
}

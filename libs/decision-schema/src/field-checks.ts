// Small type-and-limit checks shared by the schema validators. Each records an issue at `path` and answers
// whether the value can be looked into further, so one bad value never hides the issues beside it.
import { charLength, formatNumber, isRecord, measuredLength } from './json';
import { KEY_MAX, KEY_PATTERN } from './limits';
import type { Issues, Path } from './issues';
import type { RichText } from './schema-types';

export interface LengthRule {
  min?: number;
  max: number;
}

export interface RangeRule {
  min: number;
  max: number;
  integer?: boolean;
}

/** Absent and null both mean "not given" for optional parts: a normalized schema writes null for them. */
export function isGiven(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** An object whose property names are the author's own (state fields, params, headers). */
export function expectMap(value: unknown, path: Path, issues: Issues): value is Record<string, unknown> {
  if (isRecord(value)) return true;
  issues.add(path, 'must be an object');
  return false;
}

/** Unknown properties are issues: a typo such as `minConfidance` would otherwise be dropped without a word. */
export function expectObject(value: unknown, path: Path, issues: Issues, allowed: readonly string[]): value is Record<string, unknown> {
  if (!isRecord(value)) {
    issues.add(path, 'must be an object');
    return false;
  }
  for (const [name, item] of Object.entries(value)) {
    // A property set to undefined is absent, as it would be once serialized.
    if (item !== undefined && !allowed.includes(name)) issues.add([...path, name], 'unknown property');
  }
  return true;
}

export function expectRequired(record: Record<string, unknown>, name: string, path: Path, issues: Issues): boolean {
  if (isGiven(record[name])) return true;
  issues.add([...path, name], 'is required');
  return false;
}

export function expectString(value: unknown, path: Path, issues: Issues, rule: LengthRule): value is string {
  if (typeof value !== 'string') {
    issues.add(path, 'must be a string');
    return false;
  }
  return checkLength(charLength(value), path, issues, rule, 'characters');
}

/** Text, or a JSON object or array measured by its serialized length. */
export function expectRichText(value: unknown, path: Path, issues: Issues, rule: LengthRule): value is RichText {
  if (typeof value === 'string') return expectString(value, path, issues, rule);
  const length = typeof value === 'object' && value !== null ? measuredLength(value) : undefined;
  if (length === undefined) {
    issues.add(path, 'must be text or JSON (an object or an array)');
    return false;
  }
  return checkLength(length, path, issues, rule, 'characters serialized');
}

function checkLength(length: number, path: Path, issues: Issues, rule: LengthRule, unit: string): boolean {
  const min = rule.min ?? 0;
  if (length >= min && length <= rule.max) return true;
  if (length === 0) issues.add(path, 'must not be empty');
  else if (min === 0) issues.add(path, `must be at most ${formatNumber(rule.max)} ${unit} (is ${formatNumber(length)})`);
  else issues.add(path, `must be ${formatNumber(min)} to ${formatNumber(rule.max)} ${unit} (is ${formatNumber(length)})`);
  return false;
}

export function expectNumber(value: unknown, path: Path, issues: Issues, rule: RangeRule): value is number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    issues.add(path, rule.integer ? 'must be an integer' : 'must be a number');
    return false;
  }
  if (rule.integer && !Number.isInteger(value)) {
    issues.add(path, 'must be an integer');
    return false;
  }
  if (value < rule.min || value > rule.max) {
    issues.add(path, `must be between ${formatNumber(rule.min)} and ${formatNumber(rule.max)}`);
    return false;
  }
  return true;
}

export function expectBoolean(value: unknown, path: Path, issues: Issues): value is boolean {
  if (typeof value === 'boolean') return true;
  issues.add(path, 'must be true or false');
  return false;
}

export function expectOneOf<T extends string>(value: unknown, allowed: readonly T[], path: Path, issues: Issues): value is T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return true;
  issues.add(path, `must be one of ${allowed.join(', ')}`);
  return false;
}

export function isKey(value: unknown): value is string {
  return typeof value === 'string' && value.length <= KEY_MAX && KEY_PATTERN.test(value);
}

export function expectKey(value: unknown, path: Path, issues: Issues): value is string {
  if (isKey(value)) return true;
  if (typeof value !== 'string') issues.add(path, 'must be a string');
  else if (value.length > KEY_MAX) issues.add(path, `must be at most ${KEY_MAX} characters (is ${formatNumber(value.length)})`);
  else issues.add(path, 'must be snake_case: a lowercase letter, then lowercase letters, digits or _');
  return false;
}

/** Checks the container and its count; items are still worth checking when only the count is wrong. */
export function expectArray(value: unknown, path: Path, issues: Issues, count: { min?: number; max: number; noun: string }): value is unknown[] {
  if (!Array.isArray(value)) {
    issues.add(path, 'must be an array');
    return false;
  }
  checkCount(value.length, path, issues, count);
  return true;
}

export function checkCount(length: number, path: Path, issues: Issues, { min = 0, max, noun }: { min?: number; max: number; noun: string }): void {
  if (length >= min && length <= max) return;
  const range =
    max === Infinity ? `at least ${formatNumber(min)}` : min === 0 ? `at most ${formatNumber(max)}` : `${formatNumber(min)} to ${formatNumber(max)}`;
  issues.add(path, `must have ${range} ${noun} (has ${formatNumber(length)})`);
}

/** Records a duplicate and answers whether `key` was new. */
export function claimUnique(seen: Set<string>, key: string, path: Path, issues: Issues): boolean {
  if (!seen.has(key)) {
    seen.add(key);
    return true;
  }
  issues.add(path, `duplicates "${key}"`);
  return false;
}

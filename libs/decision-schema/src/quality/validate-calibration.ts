import { expectArray, expectMap, expectNumber, expectObject, expectOneOf, isGiven } from '../field-checks';
import type { Issues, Path } from '../issues';
import { CONFIDENCE_SOURCES, type Calibration, type CalibrationMap, type QuestionKind } from '../schema-types';
import { candidateMethods, ISOTONIC_POINTS_MAX } from './fit';

const TEMPERATURE_RANGE = { min: 0.01, max: 100 };
const PLATT_RANGE = { min: -1000, max: 1000 };

/**
 * The `calibration` block: per confidence source, per question key, a map of a method that question's kind
 * takes (choice and score: temperature or isotonic; probability: platt or isotonic). Isotonic points are pairs of
 * probabilities, non-decreasing in both.
 */
export function validateCalibration(value: unknown, path: Path, issues: Issues, questions: ReadonlyMap<string, { kind: QuestionKind }>): void {
  if (!isGiven(value) || !expectObject(value, path, issues, CONFIDENCE_SOURCES)) return;
  for (const source of CONFIDENCE_SOURCES) {
    const maps = value[source];
    if (!isGiven(maps) || !expectMap(maps, [...path, source], issues)) continue;
    for (const [key, map] of Object.entries(maps)) {
      const at = [...path, source, key];
      const question = questions.get(key);
      if (!question) {
        issues.add(at, 'is not a question of this decision');
        continue;
      }
      validateMap(map, at, issues, candidateMethods(question.kind));
    }
  }
}

function validateMap(map: unknown, path: Path, issues: Issues, methods: readonly string[]): void {
  if (!expectObject(map, path, issues, ['method', 'temperature', 'a', 'b', 'points'])) return;
  if (!expectOneOf(map.method, methods, [...path, 'method'], issues)) return;
  const allowed: Record<string, string[]> = { temperature: ['temperature'], platt: ['a', 'b'], isotonic: ['points'] };
  const own = allowed[map.method as string]!;
  for (const name of ['temperature', 'a', 'b', 'points']) {
    if (map[name] !== undefined && !own.includes(name)) issues.add([...path, name], `is not a property of a ${map.method as string} map`);
  }
  switch (map.method) {
    case 'temperature':
      expectNumber(map.temperature, [...path, 'temperature'], issues, TEMPERATURE_RANGE);
      return;
    case 'platt':
      expectNumber(map.a, [...path, 'a'], issues, { min: 0, max: PLATT_RANGE.max });
      expectNumber(map.b, [...path, 'b'], issues, PLATT_RANGE);
      return;
    case 'isotonic':
      validatePoints(map.points, [...path, 'points'], issues);
  }
}

function validatePoints(points: unknown, path: Path, issues: Issues): void {
  if (!expectArray(points, path, issues, { min: 1, max: ISOTONIC_POINTS_MAX, noun: 'points' })) return;
  let previous: [number, number] | null = null;
  for (const [i, point] of points.entries()) {
    const at = [...path, i];
    if (!Array.isArray(point) || point.length !== 2 || !point.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 1)) {
      issues.add(at, 'must be a pair [probability, calibrated probability] of numbers from 0 to 1');
      return;
    }
    const pair = point as [number, number];
    if (previous && (pair[0] < previous[0] || pair[1] < previous[1])) {
      issues.add(at, 'must not be below the point before it: the map must be non-decreasing');
      return;
    }
    previous = pair;
  }
}

/** A valid block as the normalized schema keeps it: sources without maps dropped; null when nothing is left. */
export function normalizeCalibration(value: unknown): Calibration | null {
  if (!isGiven(value)) return null;
  const block = value as Calibration;
  const out: Calibration = {};
  for (const source of CONFIDENCE_SOURCES) {
    const maps = block[source];
    if (maps && Object.keys(maps).length > 0) {
      out[source] = Object.fromEntries(Object.entries(maps).map(([key, map]) => [key, copyMap(map)]));
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

function copyMap(map: CalibrationMap): CalibrationMap {
  switch (map.method) {
    case 'temperature':
      return { method: map.method, temperature: map.temperature };
    case 'platt':
      return { method: map.method, a: map.a, b: map.b };
    case 'isotonic':
      return { method: map.method, points: map.points.map(([x, y]) => [x, y]) };
  }
}

import type { Bin, Threshold } from '@ds/decision-schema';
import {
  auditCurves,
  binLabel,
  intervalText,
  dayAfter,
  openingVersion,
  percent,
  reliabilityPoints,
  score,
  sourcesOf,
  thresholdAt,
  thresholdCurves,
} from './quality';

const bin = (from: number, count: number, confidence: number | null, accuracy: number | null): Bin => ({
  from,
  to: Math.round((from + 0.1) * 10) / 10,
  count,
  confidence,
  accuracy,
});

const steps = (kept: number[]): Threshold[] =>
  kept.map((count, index) => ({
    min_confidence: Math.round(index * 5) / 100,
    kept: count,
    coverage: count / kept[0]!,
    accuracy: count === 0 ? null : 0.5 + index / 100,
  }));

describe('reliabilityPoints', () => {
  it('plots each non-empty bin at its mean probability against how often it came true, and leaves empty bins out', () => {
    expect(reliabilityPoints([bin(0, 0, null, null), bin(0.5, 4, 0.55, 0.25), bin(0.9, 10, 0.93, 0.6)])).toEqual([
      { x: 0.55, y: 0.25 },
      { x: 0.93, y: 0.6 },
    ]);
    expect(reliabilityPoints([bin(0, 0, null, null)])).toEqual([]);
  });
});

describe('thresholdCurves', () => {
  it('gives coverage and kept accuracy per minConfidence, with gaps where nothing is kept', () => {
    const curves = thresholdCurves(steps([10, 5, 0]));
    expect(curves.coverage).toEqual([
      { x: 0, y: 1 },
      { x: 0.05, y: 0.5 },
      { x: 0.1, y: 0 },
    ]);
    expect(curves.accuracy.map((point) => point.y)).toEqual([0.5, 0.51, null]);
  });
});

describe('thresholdAt', () => {
  const rows = steps([10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);

  it('finds the step a minConfidence falls on, the one below when it falls between steps', () => {
    expect(thresholdAt(rows, 0.3)?.min_confidence).toBe(0.3);
    expect(thresholdAt(rows, 0.32)?.min_confidence).toBe(0.3);
    expect(thresholdAt(rows, 0)?.min_confidence).toBe(0);
    expect(thresholdAt(rows, 0.99)?.min_confidence).toBe(0.95);
  });

  it('is null without a minConfidence', () => {
    expect(thresholdAt(rows, null)).toBeNull();
  });
});

describe('figures', () => {
  it('shows shares as percentages and scores with three decimals, a dash when not measured', () => {
    expect(percent(0.6667)).toBe('66.7 %');
    expect(percent(1)).toBe('100.0 %');
    expect(percent(null)).toBe('—');
    expect(score(0.23333)).toBe('0.233');
    expect(score(undefined)).toBe('—');
    expect(binLabel({ from: 0.9, to: 1 })).toBe('0.9–1.0');
  });

  it('lists the sources the report holds, the model’s own first', () => {
    const quality = { labelled: 1, accuracy: null, brier: null, log_loss: null, ece: null, bins: [], thresholds: [] };
    expect(sourcesOf({ tokens: quality, model: quality }).map(([source]) => source)).toEqual(['model', 'tokens']);
    expect(sourcesOf({ model: quality }).map(([source]) => source)).toEqual(['model']);
  });
});

describe('dayAfter', () => {
  it('makes a picked end date inclusive by asking up to the next day, across months and years', () => {
    expect(dayAfter('2026-11-26')).toBe('2026-11-27');
    expect(dayAfter('2026-02-28')).toBe('2026-03-01');
    expect(dayAfter('2026-12-31')).toBe('2027-01-01');
  });

  it('leaves anything else for the API to judge', () => {
    expect(dayAfter('soon')).toBe('soon');
    expect(dayAfter('2026-13-45')).toBe('2026-13-45');
  });
});

describe('openingVersion', () => {
  it('opens on the active version when it has outcomes, or when no version has any', () => {
    expect(
      openingVersion(3, [
        { version: 3, outcomes: 2 },
        { version: 2, outcomes: 60 },
      ]),
    ).toBe(3);
    expect(openingVersion(3, [])).toBe(3);
  });

  it('opens on the newest version with outcomes when the active one has none', () => {
    expect(
      openingVersion(3, [
        { version: 1, outcomes: 5 },
        { version: 2, outcomes: 60 },
      ]),
    ).toBe(2);
    expect(openingVersion(1, [{ version: 2, outcomes: 4 }])).toBe(2);
    expect(
      openingVersion(3, [
        { version: 3, outcomes: 0 },
        { version: 1, outcomes: 1 },
      ]),
    ).toBe(1);
  });
});

describe('intervalText', () => {
  it('writes both bounds as percentages with one decimal, and a dash without an interval', () => {
    expect(intervalText({ low: 0.452589, high: 0.936775 })).toBe('45.3–93.7 %');
    expect(intervalText({ low: 0.83887, high: 1 })).toBe('83.9–100.0 %');
    expect(intervalText(null)).toBe('—');
  });
});

describe('auditCurves', () => {
  it('gives automation, accuracy and the interval per step, with gaps where the audit says nothing', () => {
    const row = (min_confidence: number, automation_rate: number | null, accuracy: number | null, interval: { low: number; high: number } | null) => ({
      min_confidence,
      automation_rate,
      covered: accuracy !== null,
      audited: 9,
      correct: 7,
      accuracy,
      interval,
    });
    const curves = auditCurves([row(0, 0.85, null, null), row(0.05, 0.75, 7 / 9, { low: 0.45, high: 0.94 }), row(0.1, null, 1, { low: 0.8, high: 1 })]);
    expect(curves.automation.map((point) => point.y)).toEqual([0.85, 0.75, null]);
    expect(curves.accuracy.map((point) => point.y)).toEqual([null, 7 / 9, 1]);
    expect(curves.low).toEqual([
      { x: 0, y: null },
      { x: 0.05, y: 0.45 },
      { x: 0.1, y: 0.8 },
    ]);
    expect(curves.high.map((point) => point.y)).toEqual([null, 0.94, 1]);
  });
});

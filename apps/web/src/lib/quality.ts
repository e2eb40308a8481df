import type { AuditThreshold, Bin, Interval, SourceQuality, Threshold } from '@ds/decision-schema';

/** The confidence sources a report may hold, in the order they are shown. */
export const SOURCES = ['model', 'tokens'] as const;
export type Source = (typeof SOURCES)[number];

export interface Point {
  x: number;
  y: number | null;
}

/** The sources of one question that the report holds, model first. */
export function sourcesOf(sources: Partial<Record<Source, SourceQuality>>): Array<[Source, SourceQuality]> {
  return SOURCES.flatMap((source) => (sources[source] ? [[source, sources[source]!] as [Source, SourceQuality]] : []));
}

/**
 * A reliability diagram's points: each non-empty bin at its mean predicted probability against how often it came
 * true. Empty bins are left out rather than drawn at zero, which would read as "always wrong".
 */
export function reliabilityPoints(bins: readonly Bin[]): Point[] {
  return bins.filter((bin) => bin.count > 0 && bin.confidence !== null).map((bin) => ({ x: bin.confidence!, y: bin.accuracy }));
}

/** Coverage and accuracy of the kept answers, per minConfidence step. */
export function thresholdCurves(thresholds: readonly Threshold[]): { coverage: Point[]; accuracy: Point[] } {
  return {
    coverage: thresholds.map((row) => ({ x: row.min_confidence, y: row.coverage })),
    accuracy: thresholds.map((row) => ({ x: row.min_confidence, y: row.accuracy })),
  };
}

/**
 * The step a question's minConfidence falls on: the runner keeps a confidence c when c ≥ minConfidence, and the
 * report's steps are 0.05 apart, so a minConfidence between steps keeps what the step below it keeps at most.
 */
export function thresholdAt(thresholds: readonly Threshold[], minConfidence: number | null): Threshold | null {
  if (minConfidence === null) return null;
  let found: Threshold | null = null;
  for (const row of thresholds) if (row.min_confidence <= minConfidence + 1e-9) found = row;
  return found;
}

/** A share as a percentage with one decimal; a dash for "not measured". */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${(Math.round(value * 1000) / 10).toFixed(1)} %`;
}

/** A score (ECE, Brier, log loss) with three decimals; a dash for "not measured". */
export function score(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toFixed(3);
}

/** The label of a bin of predicted probability: "0.9–1.0". */
export function binLabel(bin: Pick<Bin, 'from' | 'to'>): string {
  return `${bin.from.toFixed(1)}–${bin.to.toFixed(1)}`;
}

/**
 * The report's `to` is exclusive; a person picking "to 26 November" means the whole of that day, so the query asks
 * up to the next day. Anything that is not a YYYY-MM-DD date goes as it is, for the API to refuse or read.
 */
export function dayAfter(date: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return date;
  const next = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(next.getTime())) return date;
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}

export interface VersionOutcomes {
  version: number;
  outcomes: number;
}

/**
 * The version the Quality tab opens on when none is chosen: the active one when it has outcomes (or when no
 * version has any), else the newest version that has some.
 */
export function openingVersion(active: number, withOutcomes: readonly VersionOutcomes[]): number {
  if (withOutcomes.length === 0 || withOutcomes.some((entry) => entry.version === active && entry.outcomes > 0)) return active;
  const newest = [...withOutcomes].filter((entry) => entry.outcomes > 0).sort((a, b) => b.version - a.version)[0];
  return newest?.version ?? active;
}

/** An interval of shares as "45.3–93.7 %"; a dash without one. */
export function intervalText(interval: Interval | null | undefined): string {
  if (!interval) return '—';
  const tenth = (value: number) => (Math.round(value * 1000) / 10).toFixed(1);
  return `${tenth(interval.low)}–${tenth(interval.high)} %`;
}

/**
 * The audit's curves per minConfidence step: automation rate, audited accuracy and its interval's bounds. A step
 * the audit does not cover, or without audited answers, leaves a gap rather than a point at 0.
 */
export function auditCurves(thresholds: readonly AuditThreshold[]): { automation: Point[]; accuracy: Point[]; low: Point[]; high: Point[] } {
  return {
    automation: thresholds.map((row) => ({ x: row.min_confidence, y: row.automation_rate })),
    accuracy: thresholds.map((row) => ({ x: row.min_confidence, y: row.accuracy })),
    low: thresholds.map((row) => ({ x: row.min_confidence, y: row.interval?.low ?? null })),
    high: thresholds.map((row) => ({ x: row.min_confidence, y: row.interval?.high ?? null })),
  };
}

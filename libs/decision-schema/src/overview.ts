/**
 * A decision's overview: how its executions are rolled up as they are written, and how the rollups are read
 * back into one answer for a range. Pure: the runner keeps the rollups, this decides what they mean.
 */
import type { SchemaIssue } from './issues';
import { parseInstant } from './request-values';

/** Upper-open latency bins (ms): bin i (1-based, as SQL's width_bucket numbers them) covers [bounds[i-1], bounds[i]). */
export const LATENCY_BOUNDS_MS = [
  0, 5, 10, 25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000, 20000, 30000, 60000,
] as const;

/** Confidence is binned in tenths: bin 0 holds [0, 0.1), bin 9 holds [0.9, 1]. */
export const CONFIDENCE_BINS = 10;

/** Rollup grains kept by the runner (seconds): minutes for short ranges, hours and days for the rest. */
export const MINUTE_GRAIN = 60;
export const HOUR_GRAIN = 3600;
export const DAY_GRAIN = 86400;
/** Minute rollups are kept this long; older ranges are read from hour rollups. */
export const MINUTE_GRAIN_KEPT_MS = 48 * 3_600_000;

/** Bucket widths a chart may use (seconds); each divides a UTC day, so buckets line up across ranges. */
export const BUCKET_SECONDS = [60, 300, 900, 3600, 10800, 21600, 86400] as const;
/** Few enough bars to read at 360 px, enough to see a shape. */
export const MAX_POINTS = 72;
/** The longest range one overview covers. */
export const MAX_RANGE_DAYS = 70;

/** Reasons whose action is the decision's fallback action rather than a rule's. */
const FALLBACK_REASONS = new Set(['other_option', 'low_confidence', 'engine_error']);

export interface OverviewRange {
  from: Date;
  to: Date;
}

export interface OverviewPlan extends OverviewRange {
  bucketSeconds: number;
  grainSeconds: number;
}

export type RangeCheck = { ok: true; range: OverviewRange } | { ok: false; message: string; issues: SchemaIssue[] };

/** One key per rolled-up `action_reason`: the reason's type, and what it points at (rule, question, error code). */
export function reasonKey(reason: unknown): string {
  if (reason === null || typeof reason !== 'object') return '';
  const fields = reason as Record<string, unknown>;
  const type = typeof fields.type === 'string' ? fields.type : '';
  switch (type) {
    case 'policy':
      return `policy:${String(fields.rule)}`;
    case 'other_option':
    case 'low_confidence':
      return `${type}:${String(fields.question)}`;
    case 'engine_error':
      return `engine_error:${String(fields.code)}`;
    default:
      return type;
  }
}

/** Whether a reason key (as `reasonKey` makes it) means the fallback action applied. */
export function isFallbackReason(key: string): boolean {
  return FALLBACK_REASONS.has(key.split(':', 1)[0]!);
}

/** The SQL twin of `reasonKey`, over a jsonb column: rollups are keyed in the same statement that writes executions. */
export function reasonKeySql(column: string): string {
  return `CASE ${column}->>'type'
    WHEN 'policy' THEN 'policy:' || (${column}->>'rule')
    WHEN 'other_option' THEN 'other_option:' || (${column}->>'question')
    WHEN 'low_confidence' THEN 'low_confidence:' || (${column}->>'question')
    WHEN 'engine_error' THEN 'engine_error:' || (${column}->>'code')
    ELSE coalesce(${column}->>'type', '') END`;
}

/** `from` and `to` from a query (ISO 8601, read by `parseInstant`); `to` defaults to now and `from` to 24 hours before `to`. */
export function parseOverviewRange(query: { from?: unknown; to?: unknown }, now: Date): RangeCheck {
  const to = query.to === undefined ? ({ ok: true, value: now } as const) : parseInstant(query.to, 'to');
  if (!to.ok) return { ok: false, message: '`to` must be an ISO 8601 date or timestamp.', issues: [to.issue] };
  const from = query.from === undefined ? ({ ok: true, value: new Date(to.value.getTime() - 86_400_000) } as const) : parseInstant(query.from, 'from');
  if (!from.ok) return { ok: false, message: '`from` must be an ISO 8601 date or timestamp.', issues: [from.issue] };
  if (from.value.getTime() >= to.value.getTime())
    return { ok: false, message: '`from` must be before `to`.', issues: [{ path: 'from', message: 'must be before to' }] };
  if (to.value.getTime() - from.value.getTime() > MAX_RANGE_DAYS * 86_400_000)
    return {
      ok: false,
      message: `A range covers at most ${MAX_RANGE_DAYS} days.`,
      issues: [{ path: 'from', message: `must be at most ${MAX_RANGE_DAYS} days before to` }],
    };
  return { ok: true, range: { from: from.value, to: to.value } };
}

/**
 * The bucket for a range: the narrowest width giving at most MAX_POINTS buckets, read from the widest grain that
 * divides it: day rollups for day buckets, minute rollups for buckets under an hour while minute rollups still
 * cover the range (else hour buckets), hour rollups otherwise. The range is widened to whole buckets.
 */
export function planOverview(range: OverviewRange, now: Date): OverviewPlan {
  const spanSeconds = (range.to.getTime() - range.from.getTime()) / 1000;
  let bucketSeconds: number = BUCKET_SECONDS.find((width) => Math.ceil(spanSeconds / width) <= MAX_POINTS) ?? BUCKET_SECONDS.at(-1)!;
  const minutesKept = range.from.getTime() >= now.getTime() - MINUTE_GRAIN_KEPT_MS;
  if (bucketSeconds < HOUR_GRAIN && !minutesKept) bucketSeconds = HOUR_GRAIN;
  const grainSeconds = bucketSeconds < HOUR_GRAIN ? MINUTE_GRAIN : bucketSeconds % DAY_GRAIN === 0 ? DAY_GRAIN : HOUR_GRAIN;
  const width = bucketSeconds * 1000;
  return {
    from: new Date(Math.floor(range.from.getTime() / width) * width),
    to: new Date(Math.ceil(range.to.getTime() / width) * width),
    bucketSeconds,
    grainSeconds,
  };
}

/** A percentile read from latency bins (index = width_bucket's bin), interpolated inside its bin; null without runs. */
export function latencyPercentile(bins: ReadonlyMap<number, number>, p: number): number | null {
  const ordered = [...bins.entries()].filter(([, runs]) => runs > 0).sort(([a], [b]) => a - b);
  const total = ordered.reduce((sum, [, runs]) => sum + runs, 0);
  if (total === 0) return null;
  const rank = p * total;
  let below = 0;
  for (const [bin, runs] of ordered) {
    if (below + runs >= rank) {
      const low = LATENCY_BOUNDS_MS[Math.max(bin - 1, 0)]!;
      const high = LATENCY_BOUNDS_MS[bin] ?? low;
      return Math.round(low + ((rank - below) / runs) * (high - low));
    }
    below += runs;
  }
  return LATENCY_BOUNDS_MS.at(-1)!;
}

/** One row of the count rollups, as read back for a range (summed over sources). */
export interface CountRow {
  /** Start of the grain bucket, seconds since the epoch. */
  t: number;
  livemode: boolean;
  status: string;
  action: string;
  reason: string;
  runs: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** One row of the histogram rollups: `latency` bins (question '') or `confidence` bins per question. */
export interface HistogramRow {
  t: number;
  livemode: boolean;
  metric: 'latency' | 'confidence';
  question: string;
  bin: number;
  runs: number;
}

export interface OverviewSlice {
  runs: number;
  errors: number;
  fallbacks: number;
  /** Successful runs by action; errors have no action. */
  by_action: Record<string, number>;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
}

export interface OverviewPoint {
  start: string;
  live: OverviewSlice;
  test: OverviewSlice;
}

export interface QuestionConfidence {
  question: string;
  /** Runs per tenth of confidence, [0, 0.1) first. */
  bins: number[];
}

export interface ReasonCount {
  /** `policy:0`, `low_confidence:<question>`, `other_option:<question>`, `engine_error:<code>`, `default`. */
  reason: string;
  runs: number;
  /**
   * A policy reason's version: rule 0 of v3 and rule 0 of v4 may be different rules, so a policy reason is one entry
   * per version (rules carry no identity of their own). Absent on runs recorded before versions were kept with it.
   */
  version?: number;
  /** The rule's condition in words (`summarizePolicy`), where the version's schema is at hand. */
  rule_summary?: string;
}

/** Runs a policy rule of one version decided, as the rule rollups keep them. */
export interface PolicyRuleRow {
  livemode: boolean;
  version: number;
  rule: number;
  runs: number;
}

/**
 * Splits each `policy:<rule>` count into one entry per version, from the rule rollups; what those do not cover (runs
 * written before they were, or by a runner that did not yet write them) stays one entry without a version.
 */
export function splitPolicyReasons(counted: ReadonlyMap<string, number>, rules: readonly PolicyRuleRow[]): ReasonCount[] {
  const byRule = new Map<string, Map<number, number>>();
  for (const row of rules) {
    const key = `policy:${row.rule}`;
    const versions = byRule.get(key) ?? new Map<number, number>();
    byRule.set(key, versions);
    versions.set(row.version, (versions.get(row.version) ?? 0) + row.runs);
  }
  const entries: ReasonCount[] = [];
  for (const [reason, runs] of counted) {
    const versions = byRule.get(reason);
    if (!versions) {
      entries.push({ reason, runs });
      continue;
    }
    let left = runs;
    for (const [version, versionRuns] of [...versions.entries()].sort(([a], [b]) => b - a)) {
      const taken = Math.min(versionRuns, left);
      if (taken > 0) entries.push({ reason, runs: taken, version });
      left -= taken;
    }
    if (left > 0) entries.push({ reason, runs: left });
  }
  return entries;
}

export interface DecisionOverview {
  decision_id: string;
  from: string;
  to: string;
  bucket_seconds: number;
  /** Every action seen in the range, in the order the service names them. */
  actions: string[];
  totals: { live: OverviewSlice; test: OverviewSlice };
  timeline: OverviewPoint[];
  confidence: { live: QuestionConfidence[]; test: QuestionConfidence[] };
  reasons: { live: ReasonCount[]; test: ReasonCount[] };
}

const ACTION_ORDER = ['continue', 'block', 'escalate', 'fallback'];
/** Reasons listed per traffic kind, most frequent first. */
export const TOP_REASONS = 10;

function emptySlice(): OverviewSlice {
  return { runs: 0, errors: 0, fallbacks: 0, by_action: {}, input_tokens: 0, output_tokens: 0, cost_usd: 0, latency_p50_ms: null, latency_p95_ms: null };
}

function addCounts(slice: OverviewSlice, row: CountRow): void {
  slice.runs += row.runs;
  if (row.status === 'error') slice.errors += row.runs;
  else slice.by_action[row.action] = (slice.by_action[row.action] ?? 0) + row.runs;
  if (isFallbackReason(row.reason)) slice.fallbacks += row.runs;
  slice.input_tokens += row.inputTokens;
  slice.output_tokens += row.outputTokens;
  slice.cost_usd += row.costUsd;
}

function addBin(bins: Map<number, number>, bin: number, runs: number): void {
  bins.set(bin, (bins.get(bin) ?? 0) + runs);
}

function setLatency(slice: OverviewSlice, bins: ReadonlyMap<number, number> | undefined): void {
  if (!bins) return;
  slice.latency_p50_ms = latencyPercentile(bins, 0.5);
  slice.latency_p95_ms = latencyPercentile(bins, 0.95);
}

function kind(livemode: boolean): 'live' | 'test' {
  return livemode ? 'live' : 'test';
}

/** Folds grain rows into the plan's buckets: every bucket present (zero when idle), totals over the whole range. */
export function foldOverview(
  decisionId: string,
  plan: OverviewPlan,
  counts: readonly CountRow[],
  histograms: readonly HistogramRow[],
  rules: readonly PolicyRuleRow[] = [],
): DecisionOverview {
  const width = plan.bucketSeconds;
  const first = plan.from.getTime() / 1000;
  const points: OverviewPoint[] = [];
  for (let t = first; t < plan.to.getTime() / 1000; t += width)
    points.push({ start: new Date(t * 1000).toISOString(), live: emptySlice(), test: emptySlice() });
  const pointOf = (t: number): OverviewPoint | undefined => points[Math.floor((t - first) / width)];

  const totals = { live: emptySlice(), test: emptySlice() };
  const reasons = { live: new Map<string, number>(), test: new Map<string, number>() };
  const actions = new Set<string>();
  for (const row of counts) {
    const point = pointOf(row.t);
    if (!point) continue;
    addCounts(point[kind(row.livemode)], row);
    addCounts(totals[kind(row.livemode)], row);
    if (row.status !== 'error' && row.action) actions.add(row.action);
    if (row.reason) reasons[kind(row.livemode)].set(row.reason, (reasons[kind(row.livemode)].get(row.reason) ?? 0) + row.runs);
  }

  const pointLatency = new Map<string, Map<number, number>>();
  const totalLatency = { live: new Map<number, number>(), test: new Map<number, number>() };
  const confidence = { live: new Map<string, number[]>(), test: new Map<string, number[]>() };
  for (const row of histograms) {
    const point = pointOf(row.t);
    if (!point) continue;
    if (row.metric === 'latency') {
      const key = `${point.start}|${kind(row.livemode)}`;
      const bins = pointLatency.get(key) ?? new Map<number, number>();
      pointLatency.set(key, bins);
      addBin(bins, row.bin, row.runs);
      addBin(totalLatency[kind(row.livemode)], row.bin, row.runs);
    } else {
      const byQuestion = confidence[kind(row.livemode)];
      const bins = byQuestion.get(row.question) ?? new Array<number>(CONFIDENCE_BINS).fill(0);
      byQuestion.set(row.question, bins);
      const bin = Math.min(Math.max(row.bin, 0), CONFIDENCE_BINS - 1);
      bins[bin] = bins[bin]! + row.runs;
    }
  }
  for (const point of points) {
    setLatency(point.live, pointLatency.get(`${point.start}|live`));
    setLatency(point.test, pointLatency.get(`${point.start}|test`));
  }
  setLatency(totals.live, totalLatency.live);
  setLatency(totals.test, totalLatency.test);

  const topReasons = (counted: Map<string, number>, livemode: boolean): ReasonCount[] =>
    splitPolicyReasons(
      counted,
      rules.filter((row) => row.livemode === livemode),
    )
      .sort((a, b) => b.runs - a.runs || a.reason.localeCompare(b.reason) || (b.version ?? -1) - (a.version ?? -1))
      .slice(0, TOP_REASONS);
  const questions = (byQuestion: Map<string, number[]>): QuestionConfidence[] =>
    [...byQuestion.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([question, bins]) => ({ question, bins }));
  const rank = (action: string): number => (ACTION_ORDER.includes(action) ? ACTION_ORDER.indexOf(action) : ACTION_ORDER.length);

  return {
    decision_id: decisionId,
    from: plan.from.toISOString(),
    to: plan.to.toISOString(),
    bucket_seconds: width,
    actions: [...actions].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)),
    totals,
    timeline: points,
    confidence: { live: questions(confidence.live), test: questions(confidence.test) },
    reasons: { live: topReasons(reasons.live, true), test: topReasons(reasons.test, false) },
  };
}

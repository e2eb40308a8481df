import type { OutcomeValue } from './quality/outcome';
import type { QuestionKind } from './schema-types';

/** The sampling rate a shadow takes: whole percents, so that the rate an author sees is the rate that runs. */
export const SHADOW_RATE_MIN = 1;
export const SHADOW_RATE_MAX = 100;

/** Whether a live run with this random draw (0 ≤ draw < 1) is shadowed at `ratePercent`. */
export function shadowSampled(ratePercent: number, draw: number): boolean {
  return draw * 100 < ratePercent;
}

/** A rate from a request body: an integer percent from 1 to 100, else null. */
export function shadowRate(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= SHADOW_RATE_MIN && value <= SHADOW_RATE_MAX ? value : null;
}

export interface ShadowRunMetrics {
  latency_ms?: unknown;
  input_tokens?: unknown;
  output_tokens?: unknown;
  estimated_cost_usd?: unknown;
}

/** One side of a shadowed run as the execution log keeps it. `result` is null when the version does not store output. */
export interface ShadowSide {
  status: 'success' | 'error';
  action: string | null;
  result: Record<string, unknown> | null;
  metrics: ShadowRunMetrics | null;
}

/** A live run and the shadow's run of the same state; `outcome` is what the live execution was later told was right. */
export interface ShadowPair {
  live: ShadowSide;
  shadow: ShadowSide;
  outcome: { answers: Record<string, OutcomeValue>; action: string | null } | null;
}

/** The questions both versions ask (same key and kind): the only ones whose answers compare. */
export interface ComparedQuestion {
  key: string;
  kind: QuestionKind;
}

export interface Agreement {
  compared: number;
  agreed: number;
  /** agreed / compared; null when nothing was compared. */
  rate: number | null;
}

export interface SideFigures {
  latency_ms: { p50: number | null; p95: number | null; mean: number | null };
  /** Means per run. */
  input_tokens: number | null;
  output_tokens: number | null;
  estimated_cost_usd: number | null;
}

export interface Accuracy {
  labelled: number;
  live: number | null;
  shadow: number | null;
}

export interface ShadowComparison {
  /** Shadow runs recorded (both outcomes). */
  samples: number;
  /** Shadow runs that failed (engine error, state the shadow refuses, …): they cost only their own records. */
  shadow_errors: number;
  /** Pairs where both sides answered: every figure below is over these. */
  compared: number;
  action: Agreement;
  questions: Array<Agreement & { key: string }>;
  /** Live action against shadow action, most frequent first. */
  confusion: Array<{ live: string; shadow: string; count: number }>;
  live: SideFigures;
  shadow: SideFigures;
  /** Over pairs whose live execution has a reported outcome. */
  accuracy: { action: Accuracy; questions: Array<Accuracy & { key: string }> };
}

/** The answer a result value stands for: a probability question's p(yes) read as yes or no, as the quality report does. */
function answerOf(kind: QuestionKind, value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  if (kind === 'probability') return typeof value === 'number' ? value >= 0.5 : undefined;
  return value;
}

function truthOf(kind: QuestionKind, value: OutcomeValue): unknown {
  return kind === 'probability' ? value === true : value;
}

function agreement(compared: number, agreed: number): Agreement {
  return { compared, agreed, rate: compared > 0 ? agreed / compared : null };
}

function accuracy(labelled: number, live: number, shadow: number): Accuracy {
  return { labelled, live: labelled > 0 ? live / labelled : null, shadow: labelled > 0 ? shadow / labelled : null };
}

function numberOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Nearest-rank percentile of ascending values; null when there are none. */
export function nearestRank(sorted: readonly number[], percent: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((percent / 100) * sorted.length));
  return sorted[rank - 1]!;
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function figures(sides: readonly ShadowSide[]): SideFigures {
  const series = (key: keyof ShadowRunMetrics) => sides.map((side) => numberOf(side.metrics?.[key])).filter((value): value is number => value !== null);
  const latencies = series('latency_ms').sort((a, b) => a - b);
  return {
    latency_ms: { p50: nearestRank(latencies, 50), p95: nearestRank(latencies, 95), mean: mean(latencies) },
    input_tokens: mean(series('input_tokens')),
    output_tokens: mean(series('output_tokens')),
    estimated_cost_usd: mean(series('estimated_cost_usd')),
  };
}

/**
 * How a shadow decided against the live version on the same runs. A question counts in a pair only when both
 * sides kept its answer (versions that do not store output keep none), so its `compared` can be below the
 * action's. Accuracy follows the quality report: a probability question is right when p(yes) ≥ 0.5 matches what
 * happened.
 */
export function compareShadow(questions: readonly ComparedQuestion[], pairs: readonly ShadowPair[]): ShadowComparison {
  const both = pairs.filter((pair) => pair.live.status === 'success' && pair.shadow.status === 'success');
  let actionAgreed = 0;
  const confusion = new Map<string, { live: string; shadow: string; count: number }>();
  const perQuestion = questions.map(() => ({ compared: 0, agreed: 0, labelled: 0, live: 0, shadow: 0 }));
  const actionAccuracy = { labelled: 0, live: 0, shadow: 0 };

  for (const { live, shadow, outcome } of both) {
    const liveAction = live.action ?? '';
    const shadowAction = shadow.action ?? '';
    if (liveAction === shadowAction) actionAgreed += 1;
    const cell = `${liveAction}\u0000${shadowAction}`;
    const entry = confusion.get(cell) ?? { live: liveAction, shadow: shadowAction, count: 0 };
    entry.count += 1;
    confusion.set(cell, entry);

    if (outcome?.action != null) {
      actionAccuracy.labelled += 1;
      if (liveAction === outcome.action) actionAccuracy.live += 1;
      if (shadowAction === outcome.action) actionAccuracy.shadow += 1;
    }

    questions.forEach((question, i) => {
      const liveAnswer = answerOf(question.kind, live.result?.[question.key]);
      const shadowAnswer = answerOf(question.kind, shadow.result?.[question.key]);
      if (liveAnswer === undefined || shadowAnswer === undefined) return;
      const counts = perQuestion[i]!;
      counts.compared += 1;
      if (liveAnswer === shadowAnswer) counts.agreed += 1;
      const reported = outcome?.answers[question.key];
      if (reported === undefined) return;
      const truth = truthOf(question.kind, reported);
      counts.labelled += 1;
      if (liveAnswer === truth) counts.live += 1;
      if (shadowAnswer === truth) counts.shadow += 1;
    });
  }

  return {
    samples: pairs.length,
    shadow_errors: pairs.filter((pair) => pair.shadow.status === 'error').length,
    compared: both.length,
    action: agreement(both.length, actionAgreed),
    questions: questions.map((question, i) => ({ key: question.key, ...agreement(perQuestion[i]!.compared, perQuestion[i]!.agreed) })),
    confusion: [...confusion.values()].sort((a, b) => b.count - a.count || a.live.localeCompare(b.live) || a.shadow.localeCompare(b.shadow)),
    live: figures(both.map((pair) => pair.live)),
    shadow: figures(both.map((pair) => pair.shadow)),
    accuracy: {
      action: accuracy(actionAccuracy.labelled, actionAccuracy.live, actionAccuracy.shadow),
      questions: questions.map((question, i) => {
        const counts = perQuestion[i]!;
        return { key: question.key, ...accuracy(counts.labelled, counts.live, counts.shadow) };
      }),
    },
  };
}

/** The questions two versions share by key and kind, in the shadow's order. */
export function sharedQuestions(
  live: ReadonlyArray<{ key: string; kind: QuestionKind }>,
  shadow: ReadonlyArray<{ key: string; kind: QuestionKind }>,
): ComparedQuestion[] {
  return shadow.filter((question) => live.some((other) => other.key === question.key && other.kind === question.kind)).map(({ key, kind }) => ({ key, kind }));
}

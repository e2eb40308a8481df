import type { ConfidenceSource, NormalizedSchema, QuestionKind, ReviewReason } from '../schema-types';
import { THRESHOLD_STEPS } from './bins';

/** The standard normal quantile of 0.975: a two-sided 95 % interval. */
export const Z_95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/**
 * Wilson's score interval for a binomial proportion: the p whose score test does not reject `successes` of `n`.
 * Unlike p ± z·√(p(1−p)/n) it stays within [0, 1], is not empty at 0 or n successes, and keeps near its nominal
 * coverage for the small samples an audit draws. Null without trials.
 */
export function wilsonInterval(successes: number, n: number, z = Z_95): Interval | null {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`wilsonInterval needs whole counts with 0 <= successes <= n, got ${successes} of ${n}`);
  }
  if (!(z > 0)) throw new RangeError(`wilsonInterval needs z > 0, got ${z}`);
  if (n === 0) return null;
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0 or n successes the bound is exactly 0 or 1; rounding must not move it inside.
  return {
    low: successes === 0 ? 0 : Math.max(0, centre - half),
    high: successes === n ? 1 : Math.min(1, centre + half),
  };
}

/** Counts of audited labels of one question (or the action) and source in one confidence step. */
export interface AuditedCell {
  question: string;
  kind: QuestionKind | 'action';
  source: ConfidenceSource;
  /** null for the action. */
  step: number | null;
  count: number;
  correct: number;
}

/**
 * Review items of the range, audit and low-confidence ones, counted by one question's confidence step: an item has
 * one row per question its run recorded a confidence for.
 */
export interface ItemConfidence {
  reason: 'audit' | 'low_confidence';
  /** The question whose confidence held a low-confidence run back (its action reason's); null for an audit. */
  held_by: string | null;
  question: string;
  step: number;
  count: number;
}

export interface AuditInput {
  /** Live runs of the version in the range. */
  runs: number;
  /** Review items of those runs, by reason. */
  items: Partial<Record<ReviewReason, number>>;
  confidences: readonly ItemConfidence[];
  audited: readonly AuditedCell[];
}

export interface AuditedAccuracy {
  /** Audit samples resolved with an answer for it. */
  audited: number;
  correct: number;
  accuracy: number | null;
  /** 95 % Wilson interval of the accuracy; null without audited answers. */
  interval: Interval | null;
}

export interface AuditThreshold extends AuditedAccuracy {
  min_confidence: number;
  /** Estimated share of the runs not sent to review had this question's minConfidence been this step. */
  automation_rate: number | null;
  /**
   * Whether the audit sample covers every run this step would have automated. Below the current minConfidence,
   * with low-confidence runs reviewed, the runs in between were all reviewed, none audited: the accuracy is then
   * unknown from the audit and left null.
   */
  covered: boolean;
}

export interface QuestionAudit extends AuditedAccuracy {
  key: string;
  kind: QuestionKind;
  /** The confidence source whose answers are judged: the one the version answers from where it was recorded. */
  source: ConfidenceSource;
  min_confidence: number | null;
  thresholds: AuditThreshold[];
}

export interface AuditReport {
  runs: number;
  /** Items by reason: the runs sent to review (`action`, `low_confidence`, `engine_error`) and the audit samples. */
  reviewed: Record<ReviewReason, number>;
  /** Audit samples resolved (an outcome with source `audit`). */
  audits_resolved: number;
  /** Share of the runs not sent to review (audit samples count as automated); null without runs. */
  automation_rate: number | null;
  action: AuditedAccuracy;
  questions: QuestionAudit[];
}

/**
 * The audited figures of a version over a range: the accuracy of the runs decided without review, per question and
 * for the action, from the audit samples alone; the automation rate; and per minConfidence step of each question,
 * what the automation rate and the audited accuracy would have been. See docs/reviews.md.
 */
export function auditReport(schema: NormalizedSchema, input: AuditInput): AuditReport {
  const reviewed: Record<ReviewReason, number> = {
    action: input.items.action ?? 0,
    low_confidence: input.items.low_confidence ?? 0,
    engine_error: input.items.engine_error ?? 0,
    audit: input.items.audit ?? 0,
  };
  const sent = reviewed.action + reviewed.low_confidence + reviewed.engine_error;
  const automated = Math.max(input.runs - sent, 0);
  const actionCells = input.audited.filter((cell) => cell.kind === 'action');
  const preferred: ConfidenceSource = schema.settings.confidenceSource === 'tokens' ? 'tokens' : 'model';
  const lowConfidenceReviewed = schema.settings.review?.when.lowConfidence === true;
  return {
    runs: input.runs,
    reviewed,
    audits_resolved: sum(actionCells, (cell) => cell.count),
    automation_rate: input.runs > 0 ? automated / input.runs : null,
    action: accuracyOf(actionCells),
    questions: schema.questions.map((question) => {
      const mine = input.audited.filter((cell) => cell.question === question.key && cell.kind === question.kind);
      const source = mine.some((cell) => cell.source === preferred) ? preferred : 'model';
      const cells = mine.filter((cell) => cell.source === source);
      const audits = input.confidences.filter((row) => row.reason === 'audit' && row.question === question.key);
      const heldBack = input.confidences.filter((row) => row.reason === 'low_confidence' && row.held_by === question.key && row.question === question.key);
      const auditsWithConfidence = sum(audits, (row) => row.count);
      const thresholds: AuditThreshold[] = [];
      for (let step = 0; step < THRESHOLD_STEPS; step++) {
        const minConfidence = step / THRESHOLD_STEPS;
        // Automated runs are estimated from the audit samples, a uniform sample of them; an audit without a
        // confidence for the question (an engine-error fallback) is not held back by its threshold.
        const passing = reviewed.audit - auditsWithConfidence + sum(audits, (row) => (row.step >= step ? row.count : 0));
        const automatedShare = reviewed.audit > 0 ? passing / reviewed.audit : automated === 0 ? 0 : null;
        // Low-confidence runs held back by this question are all items: counted, not estimated.
        const released = sum(heldBack, (row) => (row.step >= step ? row.count : 0));
        const covered = !(lowConfidenceReviewed && question.minConfidence !== null && minConfidence < question.minConfidence);
        const kept = accuracyOf(cells.filter((cell) => cell.step !== null && cell.step >= step));
        thresholds.push({
          min_confidence: minConfidence,
          automation_rate: input.runs > 0 && automatedShare !== null ? (automated * automatedShare + released) / input.runs : null,
          covered,
          ...(covered ? kept : { ...kept, accuracy: null, interval: null }),
        });
      }
      return {
        key: question.key,
        kind: question.kind,
        source,
        min_confidence: question.minConfidence,
        ...accuracyOf(cells),
        thresholds,
      };
    }),
  };
}

function accuracyOf(cells: readonly AuditedCell[]): AuditedAccuracy {
  const audited = sum(cells, (cell) => cell.count);
  const correct = sum(cells, (cell) => cell.correct);
  return { audited, correct, accuracy: audited > 0 ? correct / audited : null, interval: wilsonInterval(correct, audited) };
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  return items.reduce((total, item) => total + of(item), 0);
}

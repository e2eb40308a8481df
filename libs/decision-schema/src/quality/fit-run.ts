// A calibration fit as a whole: which labelled executions it reads, how often a workspace may ask for one, and the
// fit of every question and confidence source of a version into the draft's calibration.
import { outcomesOf } from '../outcomes';
import { type Calibration, CONFIDENCE_SOURCES, type ConfidenceSource, type NormalizedSchema } from '../schema-types';
import { type FitSample, fitQuestion, type QuestionFit } from './fit';
import { type RecordedDistributions, truthIndex } from './labels';
import type { OutcomeValue } from './outcome';

/**
 * The newest labelled executions a fit reads. Cross-validated maps settle well before it (a few hundred outcomes
 * per question), and it bounds one fit's work: about 0.15 s of one core for a three-question decision.
 */
export const FIT_SAMPLE_MAX = 5_000;

/**
 * Fits a workspace may run per UTC day, by plan. A fit reads up to FIT_SAMPLE_MAX executions and spends a worker
 * for a moment; an unknown plan gets the free plan's cap.
 */
export const FIT_DAILY_CAP: Readonly<Record<string, number>> = {
  genesis: 20,
  developer: 100,
  growth: 500,
  enterprise: 2_000,
};

/**
 * How long a workspace's running fit holds its turn. A fit ends well within it; a process that dies mid-fit
 * leaves a turn that lapses after it rather than blocking the workspace's fits for good.
 */
export const FIT_LEASE_SECONDS = 120;

/**
 * After a fit, a workspace rests this many times the fit's own duration before its next fit may start, so that one
 * workspace's fits keep the lab busy at most a fifth of the time however quickly they are asked for.
 */
export const FIT_REST_FACTOR = 4;
/** The rest is at least a second and at most the lease. */
export const FIT_REST_MIN_SECONDS = 1;

/** Whole seconds a workspace rests after a fit that took `durationMs`. */
export function fitRestSeconds(durationMs: number): number {
  const seconds = Math.ceil((Math.max(0, durationMs) * FIT_REST_FACTOR) / 1000);
  return Math.min(FIT_LEASE_SECONDS, Math.max(FIT_REST_MIN_SECONDS, seconds));
}

export function fitDailyCap(plan: string): number {
  return Object.hasOwn(FIT_DAILY_CAP, plan) ? FIT_DAILY_CAP[plan]! : FIT_DAILY_CAP.genesis!;
}

/** Seconds from `now` until the next UTC midnight, when the daily budget starts again: 1 to 86,400. */
export function secondsUntilNextUtcDay(now: Date): number {
  const next = Math.floor(now.getTime() / 86_400_000 + 1) * 86_400_000;
  return Math.max(1, Math.min(86_400, Math.ceil((next - now.getTime()) / 1000)));
}

/** One labelled execution a fit reads: the distributions it recorded and the answers its outcome reported. */
export interface LabelledExecution {
  distributions: RecordedDistributions;
  answers: Record<string, OutcomeValue> | null;
}

export interface NotFitted {
  question: string;
  source: ConfidenceSource;
  outcomes: number;
  reason: 'not_enough_outcomes' | 'changed_in_draft';
  needed?: number;
}

export interface CalibrationFit {
  /** The draft's calibration with every fitted map put in. */
  calibration: Calibration;
  fitted: Array<Omit<Extract<QuestionFit, { status: 'fitted' }>, 'status'> & { source: ConfidenceSource }>;
  not_fitted: NotFitted[];
}

/**
 * Fits each question of `version` with enough outcomes, per confidence source, from `executions` (oldest first, so
 * the folds of a cross-validation do not depend on how many newer rows arrived). A question the draft no longer has
 * in the same form keeps no map and is listed.
 */
export function fitCalibration(version: NormalizedSchema, draft: NormalizedSchema, executions: readonly LabelledExecution[]): CalibrationFit {
  const calibration: Calibration = structuredClone(draft.calibration ?? {});
  const fitted: CalibrationFit['fitted'] = [];
  const notFitted: NotFitted[] = [];
  for (const source of CONFIDENCE_SOURCES) {
    // Every question is listed for the model's own numbers; token probabilities only where some run recorded them.
    if (source !== 'model' && !executions.some((execution) => execution.distributions[source])) continue;
    for (const question of version.questions) {
      // Token probabilities are read for choice and score questions only: a probability question never has them.
      if (source === 'tokens' && question.kind === 'probability') continue;
      const fit = fitQuestion(question, samplesOf(version, question.key, source, executions));
      if (fit.status !== 'fitted') {
        notFitted.push({ question: question.key, source, outcomes: fit.outcomes, reason: 'not_enough_outcomes', needed: fit.needed });
        continue;
      }
      const inDraft = draft.questions.find((candidate) => candidate.key === question.key);
      if (!inDraft || inDraft.kind !== question.kind || outcomesOf(inDraft).join('\n') !== outcomesOf(question).join('\n')) {
        notFitted.push({ question: question.key, source, outcomes: fit.outcomes, reason: 'changed_in_draft' });
        continue;
      }
      (calibration[source] ??= {})[question.key] = fit.map;
      const { status: _status, ...kept } = fit;
      fitted.push({ ...kept, source });
    }
  }
  return { calibration, fitted, not_fitted: notFitted };
}

function samplesOf(schema: NormalizedSchema, key: string, source: ConfidenceSource, executions: readonly LabelledExecution[]): FitSample[] {
  const question = schema.questions.find((candidate) => candidate.key === key)!;
  const outcomes = outcomesOf(question);
  const samples: FitSample[] = [];
  for (const execution of executions) {
    const distribution = execution.distributions[source]?.[key];
    const value = execution.answers?.[key];
    if (!distribution || value === undefined) continue;
    const truth = truthIndex(question, value);
    if (truth < 0) continue;
    samples.push({ ps: outcomes.map((outcome) => distribution[outcome] ?? 0), truth });
  }
  return samples;
}

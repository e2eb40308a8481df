// From the engine's distributions to the run's answers, confidences, weighted levels, composites and action.
//
// Confidence, on a 0..1 scale:
// - probability question: |2p − 1| with p = p(yes) (spec): 0 at a coin flip, 1 at certainty.
// - choice and score questions: 1 − H(p) / ln(n), the normalized Shannon entropy H(p) = −Σ pᵢ ln pᵢ over the
//   question's n outcomes (choice: options and `other`; score: levels). 0 when every outcome is equally likely,
//   1 when one outcome has all the mass. Unlike the top probability alone, it does not depend on how many
//   options a question has, so one minConfidence reads the same on a 3-option and on a 50-option question.
import { conditionHolds, type ConditionSubject } from './conditions';
import { checkDistributions, type Distribution, type Distributions } from './distributions';
import { outcomesOf } from './outcomes';
import { calibrateDistributions } from './quality/calibration';
import { OTHER_OPTION, type Action, type Composite, type NormalizedQuestion, type NormalizedSchema } from './schema-types';

export type ActionReason =
  | { type: 'policy'; rule: number }
  | { type: 'other_option'; question: string }
  | { type: 'low_confidence'; question: string; confidence: number; minConfidence: number }
  | { type: 'engine_error'; code: string }
  | { type: 'default' };

export interface Evaluation {
  /** Question key → choice: option value; score: label of the most likely level; probability: p(yes). */
  result: Record<string, string | number>;
  confidence: Record<string, number>;
  /** Present when the decision has score questions: weighted level, counted from 1. */
  scores?: Record<string, number>;
  /** Present when the decision has composites: value in −1..1. */
  composites?: Record<string, number>;
  probabilities: Distributions;
  /** The engine's checked distributions before calibration: what a later fit learns from. */
  recorded: Distributions;
  /**
   * The choice and score questions' distributions read from token probabilities, before calibration; only for a
   * decision whose confidence source is `tokens`, when the provider gave them.
   */
  recordedTokens?: Distributions;
  action: Action;
  action_reason: ActionReason;
}

/**
 * @param distributions the engine's answer; it is checked (and rescaled) here too, but a run should call
 *   checkDistributions first to turn a bad answer into ENGINE_ERROR: this function throws on one.
 */
export function evaluate(schema: NormalizedSchema, distributions: Distributions, tokenDistributions?: unknown): Evaluation {
  const checked = checkDistributions(schema, distributions);
  if (!checked.ok) throw new Error(`cannot evaluate: ${checked.message}`);
  const tokens = schema.settings.confidenceSource === 'tokens' && tokenDistributions !== undefined ? checkTokenDistributions(schema, tokenDistributions) : {};
  const fromTokens = Object.keys(tokens).length > 0;
  // A calibrated version answers from its calibrated distributions: answers, confidences and low_confidence follow them.
  // Questions the tokens answer take them (calibrated by the tokens' own maps); the rest keep the model's numbers.
  let probabilities = calibrateDistributions(schema, 'model', checked.normalized);
  if (fromTokens) probabilities = { ...probabilities, ...calibrateDistributions(schema, 'tokens', tokens) };

  const result: [string, string | number][] = [];
  const confidence: [string, number][] = [];
  const scores: [string, number][] = [];
  for (const question of schema.questions) {
    const answer = answerOf(question, known(probabilities, question.key));
    result.push([question.key, answer.value]);
    confidence.push([question.key, answer.confidence]);
    if (answer.score !== undefined) scores.push([question.key, answer.score]);
  }

  const subject: ConditionSubject = { result: Object.fromEntries(result), confidence: Object.fromEntries(confidence) };
  if (schema.questions.some((question) => question.kind === 'score')) subject.scores = Object.fromEntries(scores);
  if (schema.composites.length > 0) {
    subject.composites = Object.fromEntries(schema.composites.map((composite) => [composite.key, compositeValue(composite, schema, probabilities, subject)]));
  }
  const { action, reason } = decideAction(schema, subject);
  const evaluation: Evaluation = { ...subject, probabilities, recorded: checked.normalized, action, action_reason: reason };
  if (fromTokens) evaluation.recordedTokens = tokens;
  return evaluation;
}

/**
 * The token distributions that fit the schema, question by question: a choice or score question's distribution
 * that lists only its outcomes with a positive sum. One that does not is dropped (that question keeps the
 * model's numbers) rather than failing the run: the model's own answer already met the contract.
 */
export function checkTokenDistributions(schema: NormalizedSchema, tokenDistributions: unknown): Distributions {
  if (typeof tokenDistributions !== 'object' || tokenDistributions === null) return {};
  const out: Distributions = {};
  for (const question of schema.questions) {
    if (question.kind === 'probability' || !Object.hasOwn(tokenDistributions, question.key)) continue;
    const one = checkDistributions({ ...schema, questions: [question] }, { [question.key]: (tokenDistributions as Record<string, unknown>)[question.key] });
    if (one.ok) out[question.key] = one.normalized[question.key]!;
  }
  return out;
}

/** The answer of a run whose engine failed while the decision's onEngineError is `fallback`. */
export function engineErrorEvaluation(schema: NormalizedSchema, code: string): Evaluation {
  const evaluation: Evaluation = {
    result: {},
    confidence: {},
    probabilities: {},
    recorded: {},
    action: schema.fallbackAction,
    action_reason: { type: 'engine_error', code },
  };
  // The fields stay present (and empty) where the decision's contract has them, so the response shape holds.
  if (schema.questions.some((question) => question.kind === 'score')) evaluation.scores = {};
  if (schema.composites.length > 0) evaluation.composites = {};
  return evaluation;
}

interface Answer {
  value: string | number;
  confidence: number;
  score?: number;
}

/**
 * What evaluate reads from what it has checked or built itself: checkDistributions gives every question a
 * distribution listing each of its outcomes, and every question gets a confidence. A miss is a bug, not an engine error.
 */
function known<T>(record: Readonly<Record<string, T>> | undefined, key: string): T {
  const value = record?.[key];
  if (value === undefined) throw new Error(`cannot evaluate: nothing under "${key}"`);
  return value;
}

function answerOf(question: NormalizedQuestion, distribution: Distribution): Answer {
  const outcomes = outcomesOf(question);
  const ps = outcomes.map((outcome) => known(distribution, outcome));
  if (question.kind === 'probability') {
    const yes = known(distribution, 'yes');
    return { value: yes, confidence: Math.abs(2 * yes - 1) };
  }
  // ps holds one probability per outcome, so the index of the largest is an outcome's.
  const answer: Answer = { value: outcomes[indexOfMax(ps)]!, confidence: entropyConfidence(ps) };
  if (question.kind === 'score') answer.score = ps.reduce((sum, p, i) => sum + (i + 1) * p, 0);
  return answer;
}

/** Ties go to the first outcome in the question's order. */
function indexOfMax(values: readonly number[]): number {
  let best = 0;
  // best is 0 or an earlier i: both are below the bound the loop checks.
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** 1 − H(p)/ln(n); see the top of this file. Clamped because rounding can leave it a hair outside 0..1. */
export function entropyConfidence(ps: readonly number[]): number {
  const entropy = ps.reduce((sum, p) => (p > 0 ? sum - p * Math.log(p) : sum), 0);
  return Math.min(1, Math.max(0, 1 - entropy / Math.log(ps.length)));
}

/** Σ(weight × term value) / Σ|weight|, each term value in 0..1, so the composite lies in −1..1. */
function compositeValue(composite: Composite, schema: NormalizedSchema, probabilities: Distributions, subject: ConditionSubject): number {
  let weighted = 0;
  let totalWeight = 0;
  for (const term of composite.terms) {
    weighted += term.weight * termValue(term.question, term.option, schema, probabilities, subject);
    totalWeight += Math.abs(term.weight);
  }
  return weighted / totalWeight;
}

function termValue(key: string, option: string | undefined, schema: NormalizedSchema, probabilities: Distributions, subject: ConditionSubject): number {
  const question = schema.questions.find((candidate) => candidate.key === key) as NormalizedQuestion;
  switch (question.kind) {
    case 'probability':
      return known(known(probabilities, key), 'yes');
    case 'score':
      // The weighted level rescaled from 1..n to 0..1.
      return (known(subject.scores, key) - 1) / (question.levels.length - 1);
    case 'choice':
      return known(known(probabilities, key), option as string);
  }
}

/** Precedence (decision-schema.md): `other` answers, then low confidence, then the first matching policy. */
function decideAction(schema: NormalizedSchema, subject: ConditionSubject): { action: Action; reason: ActionReason } {
  for (const question of schema.questions) {
    if (question.kind === 'choice' && subject.result[question.key] === OTHER_OPTION) {
      return { action: schema.fallbackAction, reason: { type: 'other_option', question: question.key } };
    }
  }
  for (const question of schema.questions) {
    const confidence = known(subject.confidence, question.key);
    if (question.minConfidence !== null && confidence < question.minConfidence) {
      return {
        action: schema.fallbackAction,
        reason: { type: 'low_confidence', question: question.key, confidence, minConfidence: question.minConfidence },
      };
    }
  }
  const rule = schema.policies.findIndex((policy) => [policy.when, ...policy.and].every((condition) => conditionHolds(condition, subject, schema)));
  const policy = schema.policies[rule];
  if (policy !== undefined) return { action: policy.action, reason: { type: 'policy', rule } };
  return { action: 'continue', reason: { type: 'default' } };
}

import { deterministicDistribution, type Distribution, type Question } from './deterministic';
import type { Step } from './scripts';

export type Answers = Record<string, Distribution>;

/** The outcome name an `unknownOutcome` step adds; no decision schema would plausibly use it. */
export const UNKNOWN_OUTCOME = 'sim_unlisted_outcome';
/** Probability moved to the unknown outcome: enough that a consumer cannot dismiss it as noise. */
const UNKNOWN_SHARE = 0.1;

/** Text of a `malformed` answer: prose where JSON was asked for, as models sometimes write. */
export const MALFORMED_TEXT = 'Sure! The customer most likely wants a refund, and this does not look like fraud.';

/**
 * The distributions answering `questions`, in schema order, with the faults of `step` applied.
 * Forced answers naming a key the schema lacks are kept, so a script can also inject an unknown question.
 */
export function composeAnswers(seed: string, questions: Question[], step?: Step): Answers {
  const forced = step?.answers ?? {};
  // A Map, not an object: question keys such as `constructor` must not find Object.prototype's properties.
  const answers = new Map<string, Distribution>();
  for (const question of questions) {
    answers.set(question.key, (Object.hasOwn(forced, question.key) ? forced[question.key] : undefined) ?? deterministicDistribution(seed, question));
  }
  for (const [key, distribution] of Object.entries(forced)) if (!answers.has(key)) answers.set(key, distribution);

  const [firstQuestion] = questions;
  if (step?.incomplete && firstQuestion !== undefined) answers.delete(firstQuestion.key);
  if (step?.unknownOutcome) {
    const first = answers.keys().next();
    if (!first.done) answers.set(first.value, withUnknownOutcome(answers.get(first.value)!));
  }
  return Object.fromEntries(answers);
}

/** Moves probability from the most likely outcome to an unlisted one, so the total stays 1. */
function withUnknownOutcome(distribution: Distribution): Distribution {
  const top = Object.entries(distribution).sort(([, a], [, b]) => b - a)[0];
  if (top === undefined) return { [UNKNOWN_OUTCOME]: 1 };
  const [outcome, probability] = top;
  const share = Math.min(UNKNOWN_SHARE, probability);
  // Rounded so the subtraction does not print as 0.6309999999999999.
  return { ...distribution, [outcome]: Number((probability - share).toFixed(6)), [UNKNOWN_OUTCOME]: share };
}

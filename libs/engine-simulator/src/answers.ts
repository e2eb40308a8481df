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
  const answers: Answers = {};
  for (const question of questions) answers[question.key] = forced[question.key] ?? deterministicDistribution(seed, question);
  for (const [key, distribution] of Object.entries(forced)) answers[key] ??= distribution;

  if (step?.incomplete && questions.length > 0) delete answers[questions[0].key];
  if (step?.unknownOutcome) {
    const first = Object.keys(answers)[0];
    if (first !== undefined) answers[first] = withUnknownOutcome(answers[first]);
  }
  return answers;
}

/** Moves probability from the most likely outcome to an unlisted one, so the total stays 1. */
function withUnknownOutcome(distribution: Distribution): Distribution {
  const top = Object.keys(distribution).sort((a, b) => distribution[b] - distribution[a])[0];
  if (top === undefined) return { [UNKNOWN_OUTCOME]: 1 };
  const share = Math.min(UNKNOWN_SHARE, distribution[top]);
  // Rounded so the subtraction does not print as 0.6309999999999999.
  return { ...distribution, [top]: Number((distribution[top] - share).toFixed(6)), [UNKNOWN_OUTCOME]: share };
}

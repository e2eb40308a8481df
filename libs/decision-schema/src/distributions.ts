import { isRecord, ownValue } from './json';
import { outcomesOf } from './outcomes';
import type { NormalizedSchema } from './schema-types';

/** Outcome → probability. */
export type Distribution = Record<string, number>;
/** Question key → its distribution. */
export type Distributions = Record<string, Distribution>;

const SUM_TOLERANCE = 1e-9;

export type DistributionCheck = { ok: true; normalized: Distributions } | { ok: false; message: string };

/**
 * Checks an engine's answer against the decision's contract: one distribution per question, over that question's
 * outcomes only. Outcomes left out count as 0; the rest is rescaled to sum to 1, since engines round and some
 * report only the outcomes they considered. Each normalized distribution lists every outcome, in outcome order.
 * A failure means the engine answered outside the contract (ENGINE_ERROR).
 */
export function checkDistributions(schema: NormalizedSchema, distributions: unknown): DistributionCheck {
  if (!isRecord(distributions)) return { ok: false, message: 'the distributions must be an object keyed by question' };
  const keys = new Set(schema.questions.map((question) => question.key));
  const unknown = Object.keys(distributions).find((key) => !keys.has(key));
  if (unknown !== undefined) return { ok: false, message: `unknown question "${unknown}"` };

  const normalized: [string, Distribution][] = [];
  for (const question of schema.questions) {
    const distribution = ownValue(distributions, question.key);
    if (distribution === undefined) return { ok: false, message: `missing the distribution of "${question.key}"` };
    if (!isRecord(distribution)) return { ok: false, message: `the distribution of "${question.key}" must be an object` };
    const outcomes = outcomesOf(question);
    let sum = 0;
    for (const [outcome, probability] of Object.entries(distribution)) {
      if (!outcomes.includes(outcome)) return { ok: false, message: `unknown outcome "${outcome}" for "${question.key}"` };
      if (typeof probability !== 'number' || !Number.isFinite(probability) || probability < 0) {
        return { ok: false, message: `the probability of "${outcome}" for "${question.key}" must be a number of at least 0` };
      }
      sum += probability;
    }
    if (sum === 0 || !Number.isFinite(sum)) {
      return { ok: false, message: `the probabilities for "${question.key}" must sum to a positive number` };
    }
    // A sum a rounding error below 1 is left alone, so the probabilities shown are the engine's own numbers;
    // a sum above 1 is always rescaled, so that no probability exceeds 1.
    const scale = sum <= 1 && 1 - sum <= SUM_TOLERANCE ? 1 : sum;
    const scaled = outcomes.map((outcome): [string, number] => [outcome, ((ownValue(distribution, outcome) as number | undefined) ?? 0) / scale]);
    normalized.push([question.key, Object.fromEntries(scaled)]);
  }
  return { ok: true, normalized: Object.fromEntries(normalized) };
}

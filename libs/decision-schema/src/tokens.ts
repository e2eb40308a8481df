import { charLength } from './json';
import { CHARS_PER_TOKEN } from './limits';
import type { NormalizedSchema } from './schema-types';

/**
 * The spec's estimate: characters ÷ 4 of the serialized JSON, rounded up, so that a state one character past
 * a multiple of four already counts as the next token and a limit is never passed by rounding down.
 */
export function estimateTokens(serializedLength: number): number {
  return Math.ceil(serializedLength / CHARS_PER_TOKEN);
}

/** Estimated tokens of a value's serialized JSON. */
export function tokensOfJson(serialized: string): number {
  return estimateTokens(charLength(serialized));
}

export interface QuestionTokens {
  /** The longest question: the one that, with the state, must fit one call's budget. */
  longest: { key: string; tokens: number };
  /** The sum of every question's estimate. */
  total: number;
}

// A deployed schema is immutable and answers many runs; its questions are measured once, not on every run.
const measured = new WeakMap<NormalizedSchema, QuestionTokens>();

/** A question counts with everything the engine receives about it: its serialized normalized form. */
export function questionTokens(schema: NormalizedSchema): QuestionTokens {
  const cached = measured.get(schema);
  if (cached) return cached;
  const result: QuestionTokens = { longest: { key: '', tokens: 0 }, total: 0 };
  for (const question of schema.questions) {
    const tokens = tokensOfJson(JSON.stringify(question));
    result.total += tokens;
    if (tokens > result.longest.tokens) result.longest = { key: question.key, tokens };
  }
  measured.set(schema, result);
  return result;
}

// A second source of confidence: the probabilities the model gave the tokens of its answer, beside the numbers it
// states. When a decision asks for them, the answer's JSON starts with a reserved object naming the picked
// outcome of every choice and score question ("_picks": {"intent": "refund"}), and an OpenAI-compatible provider
// returns the log-probabilities of each generated token with its most likely alternatives. The distribution of a
// question is read at the token where its pick begins: each alternative's probability goes to the outcomes whose
// text it starts, and the sum is normalised over the question's outcomes.
import type { AnswerQuestionsRequest, EngineQuestion } from '@ds/contracts';

/** Reserved: question keys start with a lowercase letter, so no question can be named this. */
export const PICKS_PROPERTY = '_picks';

/** Alternatives asked for per token: OpenAI's maximum, so outcomes beyond the top few still get their share. */
export const TOP_LOGPROBS = 20;

export interface TokenLogprob {
  token: string;
  logprob: number;
  top_logprobs?: Array<{ token: string; logprob: number }>;
}

/** The questions whose distribution can be read from the tokens of a pick: probability questions state numbers only. */
export function pickedQuestions(request: Pick<AnswerQuestionsRequest, 'questions'>): EngineQuestion[] {
  return request.questions.filter((question) => question.kind !== 'probability');
}

/** The reserved picks object of the answer schema: one string enum per choice and score question, all required. */
export function picksJsonSchema(questions: readonly EngineQuestion[]): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: questions.map((question) => question.key),
    properties: Object.fromEntries(questions.map((question) => [question.key, { type: 'string', enum: question.outcomes }])),
  };
}

/**
 * The distribution of each choice and score question read from the token log-probabilities of `content`.
 * A question whose pick cannot be found among the tokens, or whose pick token's alternatives name none of its
 * outcomes, is left out: it keeps only the model's own numbers.
 */
export function tokenDistributions(
  questions: readonly EngineQuestion[],
  content: string,
  tokens: readonly TokenLogprob[],
): Record<string, Record<string, number>> {
  const starts: number[] = [];
  let offset = 0;
  for (const token of tokens) {
    starts.push(offset);
    offset += token.token.length;
  }
  // Tokens that do not spell the content cannot be placed in it.
  if (offset !== content.length) return {};
  const picksAt = content.indexOf(`"${PICKS_PROPERTY}"`);
  if (picksAt < 0) return {};
  const picksEnd = content.indexOf('}', picksAt);
  const out: Record<string, Record<string, number>> = {};
  for (const question of questions) {
    // Keys are [a-z0-9_]: nothing in them needs escaping in a pattern. Models may space JSON out.
    const marker = new RegExp(`"${question.key}"\\s*:\\s*"`, 'g');
    marker.lastIndex = picksAt;
    const found = marker.exec(content);
    if (!found || (picksEnd >= 0 && found.index > picksEnd)) continue;
    const valueAt = found.index + found[0].length;
    const index = tokenAt(starts, tokens, valueAt);
    if (index < 0) continue;
    const distribution = distributionAt(question.outcomes, content.slice(starts[index]!, valueAt), tokens[index]!, pickedOutcome(content, valueAt));
    if (distribution) out[question.key] = distribution;
  }
  return out;
}

/** The index of the token whose text covers `position`. */
function tokenAt(starts: readonly number[], tokens: readonly TokenLogprob[], position: number): number {
  for (let i = 0; i < tokens.length; i++) if (starts[i]! <= position && position < starts[i]! + tokens[i]!.token.length) return i;
  return -1;
}

function pickedOutcome(content: string, valueAt: number): string {
  const end = content.indexOf('"', valueAt);
  return end < 0 ? '' : content.slice(valueAt, end);
}

/**
 * `prefix` is the part of the token before the pick's value (a quote, say, when the tokenizer joins it to the
 * value). An alternative that starts with the same prefix proposes the rest of its text as the start of the value;
 * it counts for every outcome that text is consistent with (the outcome, then the closing quote). When several
 * outcomes share the text, the following tokens decide between them: the one the model went on to write takes
 * the share if it is among them, otherwise they split it.
 */
function distributionAt(outcomes: readonly string[], prefix: string, token: TokenLogprob, picked: string): Record<string, number> | null {
  const alternatives = token.top_logprobs && token.top_logprobs.length > 0 ? token.top_logprobs : [{ token: token.token, logprob: token.logprob }];
  const mass = new Map<string, number>(outcomes.map((outcome) => [outcome, 0]));
  const seen = new Set<string>();
  for (const alternative of alternatives) {
    if (seen.has(alternative.token) || !Number.isFinite(alternative.logprob) || !alternative.token.startsWith(prefix)) continue;
    seen.add(alternative.token);
    const rest = alternative.token.slice(prefix.length);
    if (rest === '') continue;
    const consistent = outcomes.filter((outcome) => `${outcome}"`.startsWith(rest) || rest.startsWith(`${outcome}"`));
    if (consistent.length === 0) continue;
    const share = Math.exp(alternative.logprob);
    const takers = consistent.includes(picked) ? [picked] : consistent;
    for (const outcome of takers) mass.set(outcome, mass.get(outcome)! + share / takers.length);
  }
  const total = [...mass.values()].reduce((sum, value) => sum + value, 0);
  if (!(total > 0)) return null;
  return Object.fromEntries(outcomes.map((outcome) => [outcome, mass.get(outcome)! / total]));
}

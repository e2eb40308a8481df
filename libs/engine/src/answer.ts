import { AnswerQuestionsRequest } from '@ds/contracts';
import { ANSWER_TOOL_NAME } from './request';
import { pickedQuestions, PICKS_PROPERTY, type TokenLogprob, tokenDistributions } from './token-probabilities';

export interface ProviderAnswer {
  distributions: Record<string, Record<string, number>>;
  /** Read from the answer tokens' log-probabilities, when they were asked for and returned. */
  tokenDistributions?: Record<string, Record<string, number>>;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** Why an answer is outside the decision's contract (missing or unknown answers), or null when it fits. */
export type AnswerProblem = string;

/** `request` tells whether token probabilities were asked for; without them the answer is read as before. */
export function parseOpenAiAnswer(body: unknown, request?: AnswerQuestionsRequest): ProviderAnswer | AnswerProblem {
  const response = body as {
    model?: unknown;
    choices?: Array<{ message?: { content?: unknown }; logprobs?: { content?: unknown } | null }>;
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  };
  const content = response?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') return 'the answer has no message content';
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return 'the answer is not JSON';
  }
  const answer: ProviderAnswer = {
    distributions: parsed as ProviderAnswer['distributions'],
    model: typeof response.model === 'string' ? response.model : '',
    inputTokens: nonNegativeInt(response.usage?.prompt_tokens),
    outputTokens: nonNegativeInt(response.usage?.completion_tokens),
  };
  if (request?.tokenProbabilities === true && typeof parsed === 'object' && parsed !== null && Object.hasOwn(parsed, PICKS_PROPERTY)) {
    // The picks were asked for to be read as tokens; they are not a question of the decision.
    const { [PICKS_PROPERTY]: _picks, ...distributions } = parsed as Record<string, unknown>;
    answer.distributions = distributions as ProviderAnswer['distributions'];
    const tokens = response.choices?.[0]?.logprobs?.content;
    if (Array.isArray(tokens) && tokens.every(isTokenLogprob)) {
      const read = tokenDistributions(pickedQuestions(request), content, tokens);
      if (Object.keys(read).length > 0) answer.tokenDistributions = read;
    }
  }
  return answer;
}

function isTokenLogprob(value: unknown): value is TokenLogprob {
  const token = value as TokenLogprob;
  return (
    typeof token === 'object' &&
    token !== null &&
    typeof token.token === 'string' &&
    typeof token.logprob === 'number' &&
    (token.top_logprobs === undefined ||
      (Array.isArray(token.top_logprobs) &&
        token.top_logprobs.every((alternative) => typeof alternative?.token === 'string' && typeof alternative.logprob === 'number')))
  );
}

export function parseAnthropicAnswer(body: unknown): ProviderAnswer | AnswerProblem {
  const response = body as {
    model?: unknown;
    content?: Array<{ type?: string; name?: string; input?: unknown }>;
    usage?: { input_tokens?: unknown; output_tokens?: unknown };
  };
  const block = response?.content?.find((item) => item?.type === 'tool_use' && item.name === ANSWER_TOOL_NAME);
  if (!block) return 'the answer has no tool call with the distributions';
  return {
    distributions: block.input as ProviderAnswer['distributions'],
    model: typeof response.model === 'string' ? response.model : '',
    inputTokens: nonNegativeInt(response.usage?.input_tokens),
    outputTokens: nonNegativeInt(response.usage?.output_tokens),
  };
}

/**
 * Holds the answer to the decision's contract: every question present, only known outcomes, finite
 * non-negative weights that do not all vanish. Each distribution is normalised to sum to 1.
 */
export function checkAnswer(request: AnswerQuestionsRequest, distributions: unknown): Record<string, Record<string, number>> | AnswerProblem {
  if (typeof distributions !== 'object' || distributions === null || Array.isArray(distributions)) return 'the answer is not an object';
  const byKey = distributions as Record<string, unknown>;
  const known = new Set(request.questions.map((q) => q.key));
  const unknownKey = Object.keys(byKey).find((key) => !known.has(key));
  if (unknownKey !== undefined) return `the answer has an unknown question ${unknownKey}`;
  const out: Record<string, Record<string, number>> = {};
  for (const question of request.questions) {
    // Own properties only: an option named `constructor` must not find Object.prototype's.
    const raw = Object.hasOwn(byKey, question.key) ? byKey[question.key] : undefined;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return `the answer is missing question ${question.key}`;
    const outcomes = new Set(question.outcomes);
    const weights = raw as Record<string, unknown>;
    const unknownOutcome = Object.keys(weights).find((outcome) => !outcomes.has(outcome));
    if (unknownOutcome !== undefined) return `question ${question.key} has an unknown outcome ${unknownOutcome}`;
    const weightOf = (outcome: string): unknown => (Object.hasOwn(weights, outcome) ? weights[outcome] : 0);
    let total = 0;
    for (const outcome of question.outcomes) {
      const weight = weightOf(outcome);
      if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) return `question ${question.key} has an invalid weight for ${outcome}`;
      total += weight;
    }
    if (total <= 0) return `question ${question.key} has no weight on any outcome`;
    // Finite weights can still add up past the largest double; every share would then read as 0.
    if (!Number.isFinite(total)) return `question ${question.key} has weights too large to add up`;
    out[question.key] = Object.fromEntries(question.outcomes.map((outcome) => [outcome, (weightOf(outcome) as number) / total]));
  }
  return out;
}

function nonNegativeInt(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

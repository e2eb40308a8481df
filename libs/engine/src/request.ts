import { AnswerQuestionsRequest } from '@ds/contracts';
import { pickedQuestions, PICKS_PROPERTY, picksJsonSchema, TOP_LOGPROBS } from './token-probabilities';

export const SYSTEM_PROMPT = [
  'You answer every question about the given state at once.',
  'For each question, give a probability for every listed outcome: numbers from 0 to 1 that sum to 1.',
  'Put most weight on the outcome you believe; spread weight only where you are unsure.',
  'Answer only through the required JSON structure.',
].join(' ');

export const ANSWER_TOOL_NAME = 'record_answers';

/** The user message: the decision's context travels under the reserved key `decision_context`. */
export function userMessage(request: AnswerQuestionsRequest): string {
  return JSON.stringify({
    decision_context: request.context,
    state: request.state,
    questions: request.questions.map((q) => ({ key: q.key, kind: q.kind, instructions: q.instructions, outcomes: q.outcomes, guide: q.guide })),
  });
}

/**
 * One property per question key, each an object with one number per outcome; strict so nothing else can appear.
 * With `picks`, the reserved picks object comes first, so the model names its answers before it weighs them and
 * the tokens of those names carry its own probabilities.
 */
export function answerJsonSchema(request: AnswerQuestionsRequest, picks = false): Record<string, unknown> {
  const picked = picks ? pickedQuestions(request) : [];
  const withPicks = picked.length > 0;
  return {
    type: 'object',
    additionalProperties: false,
    required: [...(withPicks ? [PICKS_PROPERTY] : []), ...request.questions.map((q) => q.key)],
    properties: Object.fromEntries([
      ...(withPicks ? [[PICKS_PROPERTY, picksJsonSchema(picked)]] : []),
      ...request.questions.map((q) => [
        q.key,
        {
          type: 'object',
          additionalProperties: false,
          required: q.outcomes,
          properties: Object.fromEntries(q.outcomes.map((outcome) => [outcome, { type: 'number' }])),
        },
      ]),
    ]),
  };
}

/** Output ceiling that the largest answers stay under; the models refuse a max_tokens above their own limit. */
export const MAX_OUTPUT_TOKENS = 8_192;

/**
 * Room for the whole JSON answer: a name costs about a token per three characters and each number with its
 * quotes, colon and comma about six. Too small a ceiling truncates the JSON, which reads as ENGINE_ERROR;
 * a ceiling costs nothing unless the model writes up to it.
 */
export function maxOutputTokens(request: AnswerQuestionsRequest, picks = false): number {
  let tokens = 64;
  for (const question of request.questions) {
    tokens += 6 + Math.ceil(question.key.length / 3);
    for (const outcome of question.outcomes) tokens += 6 + Math.ceil(outcome.length / 3);
  }
  // The picks object: the reserved name, then per question its key again and the longest outcome it may name.
  if (picks) {
    tokens += 6;
    for (const question of pickedQuestions(request))
      tokens += 4 + Math.ceil(question.key.length / 3) + Math.ceil(Math.max(...question.outcomes.map((o) => o.length)) / 3);
  }
  return Math.min(tokens, MAX_OUTPUT_TOKENS);
}

/** With `tokenProbabilities` (and a choice or score question to read them for), the body asks for log-probabilities. */
export function openAiBody(request: AnswerQuestionsRequest, model: string): Record<string, unknown> {
  const picks = request.tokenProbabilities === true && pickedQuestions(request).length > 0;
  const body: Record<string, unknown> = {
    model,
    temperature: 0,
    max_tokens: maxOutputTokens(request, picks),
    messages: [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: userMessage(request) },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'decision_answers', strict: true, schema: answerJsonSchema(request, picks) } },
  };
  if (picks) {
    body.logprobs = true;
    body.top_logprobs = TOP_LOGPROBS;
  }
  return body;
}

export function anthropicBody(request: AnswerQuestionsRequest, model: string): Record<string, unknown> {
  return {
    model,
    max_tokens: maxOutputTokens(request),
    temperature: 0,
    system: SYSTEM_PROMPT,
    messages: [{ role: 'user', content: userMessage(request) }],
    tools: [{ name: ANSWER_TOOL_NAME, description: 'Record the distribution of every question.', input_schema: answerJsonSchema(request) }],
    tool_choice: { type: 'tool', name: ANSWER_TOOL_NAME },
  };
}

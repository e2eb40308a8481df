import { AnswerQuestionsRequest } from '@ds/contracts';

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

/** One property per question key, each an object with one number per outcome; strict so nothing else can appear. */
export function answerJsonSchema(request: AnswerQuestionsRequest): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: request.questions.map((q) => q.key),
    properties: Object.fromEntries(
      request.questions.map((q) => [
        q.key,
        {
          type: 'object',
          additionalProperties: false,
          required: q.outcomes,
          properties: Object.fromEntries(q.outcomes.map((outcome) => [outcome, { type: 'number' }])),
        },
      ]),
    ),
  };
}

export function openAiBody(request: AnswerQuestionsRequest, model: string): Record<string, unknown> {
  return {
    model,
    temperature: 0,
    max_tokens: 64 + request.questions.reduce((sum, q) => sum + 8 * q.outcomes.length, 0),
    messages: [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: userMessage(request) },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'decision_answers', strict: true, schema: answerJsonSchema(request) } },
  };
}

export function anthropicBody(request: AnswerQuestionsRequest, model: string): Record<string, unknown> {
  return {
    model,
    max_tokens: 64 + request.questions.reduce((sum, q) => sum + 8 * q.outcomes.length, 0),
    temperature: 0,
    system: SYSTEM_PROMPT,
    messages: [{ role: 'user', content: userMessage(request) }],
    tools: [{ name: ANSWER_TOOL_NAME, description: 'Record the distribution of every question.', input_schema: answerJsonSchema(request) }],
    tool_choice: { type: 'tool', name: ANSWER_TOOL_NAME },
  };
}

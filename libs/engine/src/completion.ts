import { CompleteTextRequest } from '@ds/contracts';

/** The text an llm destination's provider call carries: its rendered prompt as the system turn, its input as the user turn. */
export function openAiCompletionBody(request: CompleteTextRequest, model: string): Record<string, unknown> {
  return {
    model,
    temperature: request.temperature,
    max_tokens: request.maxTokens,
    messages: [
      { role: 'system', content: request.prompt },
      { role: 'user', content: request.input },
    ],
  };
}

/** Anthropic's temperature scale ends at 1 where the destination's (OpenAI's) ends at 2: the top is clamped, not refused. */
export const ANTHROPIC_TEMPERATURE_MAX = 1;

export function anthropicCompletionBody(request: CompleteTextRequest, model: string): Record<string, unknown> {
  return {
    model,
    max_tokens: request.maxTokens,
    temperature: Math.min(request.temperature, ANTHROPIC_TEMPERATURE_MAX),
    system: request.prompt,
    messages: [{ role: 'user', content: request.input }],
  };
}

export interface ProviderText {
  text: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** The assistant's text of a chat completion, or why there is none. */
export function parseOpenAiText(body: unknown): ProviderText | string {
  const response = body as {
    model?: unknown;
    choices?: Array<{ message?: { content?: unknown } }>;
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  };
  const content = response?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') return 'the answer has no message content';
  return {
    text: content,
    model: typeof response.model === 'string' ? response.model : '',
    inputTokens: nonNegativeInt(response.usage?.prompt_tokens),
    outputTokens: nonNegativeInt(response.usage?.completion_tokens),
  };
}

/** The text blocks of a Messages answer, joined, or why there are none. */
export function parseAnthropicText(body: unknown): ProviderText | string {
  const response = body as {
    model?: unknown;
    content?: Array<{ type?: unknown; text?: unknown }>;
    usage?: { input_tokens?: unknown; output_tokens?: unknown };
  };
  if (!Array.isArray(response?.content)) return 'the answer has no content';
  const texts = response.content.filter((block) => block?.type === 'text' && typeof block.text === 'string').map((block) => block.text as string);
  if (texts.length === 0) return 'the answer has no text';
  return {
    text: texts.join(''),
    model: typeof response.model === 'string' ? response.model : '',
    inputTokens: nonNegativeInt(response.usage?.input_tokens),
    outputTokens: nonNegativeInt(response.usage?.output_tokens),
  };
}

function nonNegativeInt(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

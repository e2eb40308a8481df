import { randomAlphanumeric } from '@ds/ids';
import { estimateTokens } from '../deterministic';
import { InvalidRequest } from '../invalid-request';
import { answerWithLogprobs, PICKS_PROPERTY } from '../token-logprobs';
import { isRecord, questionsFromSchema, readMessages, readModel, type Protocol, type Reply } from './protocol';

/** OpenAI's error `type` and `code` for each status; vLLM, TGI and friends copy the same shape. */
function errorKind(status: number): { type: string; code: string | null; message: string } {
  switch (status) {
    case 400:
      return { type: 'invalid_request_error', code: null, message: 'Invalid request.' };
    case 401:
      return { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' };
    case 403:
      return { type: 'invalid_request_error', code: 'permission_denied', message: 'You are not allowed to use this model.' };
    case 404:
      return { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' };
    case 429:
      return { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' };
    default:
      return status >= 500
        ? { type: 'server_error', code: null, message: 'The server had an error while processing your request.' }
        : { type: 'invalid_request_error', code: null, message: `Request failed with status ${status}.` };
  }
}

/** OpenAI-compatible Chat Completions with `response_format: {type: "json_schema"}` structured output. */
export const openAi: Protocol = {
  path: '/v1/chat/completions',

  presentedKey(headers) {
    return /^Bearer (.+)$/i.exec(headers.authorization ?? '')?.[1];
  },

  parse(body) {
    if (!isRecord(body)) throw new InvalidRequest('the body must be a JSON object');
    const model = readModel(body);
    const messages = readMessages(body);
    // Streaming would need server-sent events; the service never streams, so refusing keeps the simulator small.
    if (body.stream === true) throw new InvalidRequest('stream is not supported by the engine simulator');
    const format = body.response_format;
    // Without response_format the request asks for free text (an llm destination's completion).
    const freeText = format === undefined;
    if (!freeText && (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.json_schema))) {
      throw new InvalidRequest('response_format must be {type: "json_schema", json_schema: {...}}, or absent for a free-text answer');
    }
    // Asked for log-probabilities, the answer schema starts with the picks object, which is not a question.
    const logprobs = body.logprobs === true;
    const top = typeof body.top_logprobs === 'number' ? Math.max(0, Math.min(20, Math.floor(body.top_logprobs))) : 0;
    const { schema: answerSchema, picked } = freeText
      ? { schema: null, picked: [] }
      : withoutPicks((format as { json_schema: { schema: unknown } }).json_schema.schema);
    const questions = freeText ? [] : questionsFromSchema(answerSchema, 'response_format.json_schema.schema');
    const promptCharacters = messages.reduce((sum, m) => sum + m.text.length, 0);

    return {
      model,
      questions,
      freeText,
      seed: messages
        .filter((m) => m.role === 'user')
        .map((m) => m.text)
        .join('\n'),
      respond: (reply: Reply) => {
        const withTokens = logprobs && !('text' in reply) && picked.length > 0 ? answerWithLogprobs(reply.answers, picked, top) : null;
        const content = withTokens ? withTokens.content : 'text' in reply ? reply.text : JSON.stringify(reply.answers);
        const promptTokens = estimateTokens(promptCharacters);
        const completionTokens = estimateTokens(content.length);
        return {
          id: `chatcmpl-${randomAlphanumeric(29)}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: reply.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content, refusal: null },
              logprobs: withTokens ? { content: withTokens.tokens, refusal: null } : null,
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
        };
      },
    };
  },

  errorBody(status, message) {
    const kind = errorKind(status);
    return { error: { message: message ?? kind.message, type: kind.type, param: null, code: kind.code } };
  },
};

/** The answer schema without its picks object, and the questions the picks name. */
function withoutPicks(schema: unknown): { schema: unknown; picked: string[] } {
  if (!isRecord(schema) || !isRecord(schema.properties) || !Object.hasOwn(schema.properties, PICKS_PROPERTY)) return { schema, picked: [] };
  const { [PICKS_PROPERTY]: picks, ...properties } = schema.properties;
  const picked = isRecord(picks) && isRecord(picks.properties) ? Object.keys(picks.properties) : [];
  return { schema: { ...schema, properties }, picked };
}

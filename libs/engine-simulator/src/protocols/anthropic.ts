import { randomAlphanumeric } from '@ds/ids';
import { estimateTokens } from '../deterministic';
import { InvalidRequest } from '../invalid-request';
import { contentText, isRecord, questionsFromSchema, readMessages, readModel, type Protocol, type Reply } from './protocol';

/** Anthropic's error `type` for each status, as its API documents them. */
function errorKind(status: number): { type: string; message: string } {
  switch (status) {
    case 400:
      return { type: 'invalid_request_error', message: 'Invalid request.' };
    case 401:
      return { type: 'authentication_error', message: 'invalid x-api-key' };
    case 403:
      return { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' };
    case 404:
      return { type: 'not_found_error', message: 'The requested resource could not be found.' };
    case 413:
      return { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' };
    case 429:
      return { type: 'rate_limit_error', message: 'Your account has hit a rate limit.' };
    case 529:
      return { type: 'overloaded_error', message: 'Overloaded' };
    default:
      return status >= 500
        ? { type: 'api_error', message: 'Internal server error' }
        : { type: 'invalid_request_error', message: `Request failed with status ${status}.` };
  }
}

/** The tool whose input carries the answers: the one `tool_choice` forces, else the first. */
function answerTool(body: Record<string, unknown>): { name: string; input_schema: unknown } {
  const { tools, tool_choice: choice } = body;
  if (!Array.isArray(tools) || tools.length === 0) {
    throw new InvalidRequest('tools must hold the answer tool: the simulator only answers structured requests');
  }
  const forced = isRecord(choice) && choice.type === 'tool' ? choice.name : undefined;
  const tool: unknown = forced === undefined ? tools[0] : tools.find((t: unknown) => isRecord(t) && t.name === forced);
  if (!isRecord(tool) || typeof tool.name !== 'string') {
    throw new InvalidRequest(forced === undefined ? 'tools[0].name must be a string' : `tool_choice names ${String(forced)}, which is not in tools`);
  }
  return { name: tool.name, input_schema: tool.input_schema };
}

/** Anthropic Messages with the answers forced through one tool call. */
export const anthropic: Protocol = {
  path: '/v1/messages',

  presentedKey(headers) {
    const key = headers['x-api-key'];
    return typeof key === 'string' ? key : undefined;
  },

  parse(body, headers) {
    // The real API refuses requests without it, so an adapter that forgets it must fail here too.
    if (headers['anthropic-version'] === undefined) throw new InvalidRequest('anthropic-version: header is required');
    if (!isRecord(body)) throw new InvalidRequest('the body must be a JSON object');
    const model = readModel(body);
    if (typeof body.max_tokens !== 'number') throw new InvalidRequest('max_tokens: Field required');
    const messages = readMessages(body);
    if (body.stream === true) throw new InvalidRequest('stream is not supported by the engine simulator');
    // Without tools the request asks for free text (an llm destination's completion).
    const freeText = body.tools === undefined;
    const tool = freeText ? null : answerTool(body);
    const questions = tool === null ? [] : questionsFromSchema(tool.input_schema, `tools.${tool.name}.input_schema`);
    const promptCharacters = contentText(body.system).length + messages.reduce((sum, m) => sum + m.text.length, 0);

    return {
      model,
      questions,
      freeText,
      seed: messages
        .filter((m) => m.role === 'user')
        .map((m) => m.text)
        .join('\n'),
      respond: (reply: Reply) => {
        // A malformed answer is the model writing prose instead of calling the tool.
        const content =
          'text' in reply
            ? [{ type: 'text', text: reply.text }]
            : [{ type: 'tool_use', id: `toolu_01${randomAlphanumeric(22)}`, name: tool?.name, input: reply.answers }];
        const output = 'text' in reply ? reply.text : JSON.stringify(reply.answers);
        return {
          id: `msg_01${randomAlphanumeric(22)}`,
          type: 'message',
          role: 'assistant',
          model: reply.model,
          content,
          stop_reason: 'text' in reply ? 'end_turn' : 'tool_use',
          stop_sequence: null,
          usage: { input_tokens: estimateTokens(promptCharacters), output_tokens: estimateTokens(output.length) },
        };
      },
    };
  },

  errorBody(status, message) {
    const kind = errorKind(status);
    return { type: 'error', error: { type: kind.type, message: message ?? kind.message } };
  },
};

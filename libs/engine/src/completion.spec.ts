import { anthropicCompletionBody, openAiCompletionBody, parseAnthropicText, parseOpenAiText } from './completion';

const request = { workspaceId: 'ws', model: null, prompt: 'Summarise.', input: 'The order arrived broken.', maxTokens: 64, temperature: 0.3, timeoutMs: 5_000 };

describe('llm destination completions', () => {
  it('sends the prompt as the system turn and the input as the user turn, with the destination’s limits', () => {
    expect(openAiCompletionBody(request, 'gpt-x')).toEqual({
      model: 'gpt-x',
      temperature: 0.3,
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'Summarise.' },
        { role: 'user', content: 'The order arrived broken.' },
      ],
    });
    expect(anthropicCompletionBody(request, 'claude-x')).toEqual({
      model: 'claude-x',
      max_tokens: 64,
      temperature: 0.3,
      system: 'Summarise.',
      messages: [{ role: 'user', content: 'The order arrived broken.' }],
    });
  });

  it('clamps a temperature above Anthropic’s scale to its top, and keeps OpenAI’s', () => {
    expect(anthropicCompletionBody({ ...request, temperature: 1.7 }, 'claude-x').temperature).toBe(1);
    expect(anthropicCompletionBody({ ...request, temperature: 0 }, 'claude-x').temperature).toBe(0);
    expect(openAiCompletionBody({ ...request, temperature: 1.7 }, 'gpt-x').temperature).toBe(1.7);
  });

  it('reads the text, model and token counts of an OpenAI-compatible answer', () => {
    expect(
      parseOpenAiText({ model: 'gpt-x-1', choices: [{ message: { content: 'Broken item.' } }], usage: { prompt_tokens: 12, completion_tokens: 3 } }),
    ).toEqual({
      text: 'Broken item.',
      model: 'gpt-x-1',
      inputTokens: 12,
      outputTokens: 3,
    });
    expect(parseOpenAiText({ choices: [{ message: { content: '' } }] })).toEqual({ text: '', model: '', inputTokens: 0, outputTokens: 0 });
    expect(parseOpenAiText({ choices: [{ message: { content: null } }] })).toBe('the answer has no message content');
    expect(parseOpenAiText(null)).toBe('the answer has no message content');
  });

  it('joins the text blocks of an Anthropic answer and ignores other blocks', () => {
    expect(
      parseAnthropicText({
        model: 'claude-x-1',
        content: [
          { type: 'text', text: 'Broken ' },
          { type: 'tool_use', input: {} },
          { type: 'text', text: 'item.' },
        ],
        usage: { input_tokens: 20, output_tokens: 4.4 },
      }),
    ).toEqual({ text: 'Broken item.', model: 'claude-x-1', inputTokens: 20, outputTokens: 4 });
    expect(parseAnthropicText({ content: [{ type: 'tool_use' }] })).toBe('the answer has no text');
    expect(parseAnthropicText({})).toBe('the answer has no content');
    expect(parseAnthropicText({ content: [{ type: 'text', text: 'x' }], usage: { input_tokens: -1, output_tokens: 'a' } })).toEqual({
      text: 'x',
      model: '',
      inputTokens: 0,
      outputTokens: 0,
    });
  });
});

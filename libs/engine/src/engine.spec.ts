import { AnswerQuestionsRequest } from '@ds/contracts';
import {
  answerJsonSchema,
  checkAnswer,
  classifyStatus,
  DEFAULT_PRICES,
  estimatedCostUsd,
  MAX_OUTPUT_TOKENS,
  MAX_RETRIES,
  maxOutputTokens,
  networkFailure,
  openAiBody,
  parseAnthropicAnswer,
  parseOpenAiAnswer,
  parseRetryAfter,
  pricePerMillion,
  retryDelayMs,
  userMessage,
} from './index';

const request: AnswerQuestionsRequest = {
  workspaceId: 'ws',
  engine: null,
  model: null,
  timeoutMs: 5000,
  context: 'We sell phones.',
  state: { message: 'refund please' },
  questions: [
    { key: 'intent', kind: 'choice', instructions: 'Intent?', outcomes: ['refund', 'exchange', 'other'], guide: [] },
    { key: 'fraud', kind: 'probability', instructions: 'Fraud?', outcomes: ['yes', 'no'], guide: 'signs of fraud' },
  ],
};

describe('request building', () => {
  it('sends the context under decision_context', () => {
    expect(JSON.parse(userMessage(request))).toMatchObject({ decision_context: 'We sell phones.', state: { message: 'refund please' } });
  });

  it('builds a strict schema with one property per question and one number per outcome', () => {
    const schema = answerJsonSchema(request) as { required: string[]; properties: Record<string, { required: string[]; additionalProperties: boolean }> };
    expect(schema.required).toEqual(['intent', 'fraud']);
    expect(schema.properties.intent?.required).toEqual(['refund', 'exchange', 'other']);
    expect(schema.properties.fraud?.additionalProperties).toBe(false);
    expect(openAiBody(request, 'm')).toMatchObject({ model: 'm', response_format: { type: 'json_schema', json_schema: { strict: true } } });
  });

  it('leaves room for every name and number of the answer, up to what models accept', () => {
    // {"intent":{"refund":0.55,"exchange":0.3,"other":0.15},"fraud":{"yes":0.1,"no":0.9}} is about 40 tokens.
    expect(maxOutputTokens(request)).toBeGreaterThanOrEqual(100);
    const wide: AnswerQuestionsRequest = {
      ...request,
      questions: Array.from({ length: 64 }, (_, i) => ({
        key: `question_with_a_long_key_${i}`,
        kind: 'score' as const,
        instructions: 'x',
        outcomes: Array.from({ length: 10 }, (_, j) => `level_${j}`),
        guide: [],
      })),
    };
    const narrow: AnswerQuestionsRequest = { ...wide, questions: wide.questions.map((q) => ({ ...q, key: 'q' })) };
    expect(maxOutputTokens(wide)).toBeGreaterThan(maxOutputTokens(narrow));
    const huge: AnswerQuestionsRequest = {
      ...wide,
      questions: wide.questions.map((q) => ({ ...q, outcomes: Array.from({ length: 255 }, (_, j) => `option_${j}`) })),
    };
    expect(maxOutputTokens(huge)).toBe(MAX_OUTPUT_TOKENS);
  });
});

describe('answers', () => {
  const good = { intent: { refund: 2, exchange: 1, other: 1 }, fraud: { yes: 0.2, no: 0.8 } };

  it('normalises every distribution to sum 1', () => {
    expect(checkAnswer(request, good)).toEqual({ intent: { refund: 0.5, exchange: 0.25, other: 0.25 }, fraud: { yes: 0.2, no: 0.8 } });
  });

  it('counts a missing outcome as zero', () => {
    expect(checkAnswer(request, { ...good, fraud: { yes: 1 } })).toMatchObject({ fraud: { yes: 1, no: 0 } });
  });

  it('reads only the answer’s own fields, whatever the keys and outcomes are called', () => {
    const named: AnswerQuestionsRequest = {
      ...request,
      questions: [{ key: 'constructor', kind: 'choice', instructions: 'x', outcomes: ['to_string', 'constructor', 'other'], guide: [] }],
    };
    // Leaving out the outcome named `constructor` must count it as 0, not as Object.prototype.constructor.
    expect(checkAnswer(named, JSON.parse('{"constructor":{"to_string":1}}'))).toEqual({ constructor: { to_string: 1, constructor: 0, other: 0 } });
    expect(checkAnswer(named, {})).toBe('the answer is missing question constructor');
  });

  it.each([
    [{ intent: good.intent }, 'missing question fraud'],
    [{ ...good, extra: { a: 1 } }, 'unknown question extra'],
    [{ ...good, intent: { refund: 1, maybe: 1 } }, 'unknown outcome maybe'],
    [{ ...good, fraud: { yes: -1, no: 2 } }, 'invalid weight'],
    [{ ...good, fraud: { yes: 0, no: 0 } }, 'no weight'],
    [{ ...good, fraud: { yes: 1.5e308, no: 1.5e308 } }, 'too large'],
    [{ ...good, fraud: { yes: '0.5', no: 0.5 } }, 'invalid weight'],
    [[], 'not an object'],
    [null, 'not an object'],
  ])('refuses %j', (answer, problem) => {
    const checked = checkAnswer(request, answer);
    expect(typeof checked).toBe('string');
    expect(checked).toContain(problem);
  });

  it('reads OpenAI-compatible answers', () => {
    const parsed = parseOpenAiAnswer({
      model: 'gpt-4o-2024-08-06',
      choices: [{ message: { content: JSON.stringify(good) } }],
      usage: { prompt_tokens: 10, completion_tokens: 3 },
    });
    expect(parsed).toEqual({ distributions: good, model: 'gpt-4o-2024-08-06', inputTokens: 10, outputTokens: 3 });
    expect(parseOpenAiAnswer({ choices: [{ message: { content: 'not json' } }] })).toBe('the answer is not JSON');
    expect(parseOpenAiAnswer({})).toBe('the answer has no message content');
  });

  it('reads Anthropic tool answers', () => {
    const parsed = parseAnthropicAnswer({
      model: 'claude-sonnet-4-5-20250929',
      content: [{ type: 'tool_use', name: 'record_answers', input: good }],
      usage: { input_tokens: 7, output_tokens: 2 },
    });
    expect(parsed).toEqual({ distributions: good, model: 'claude-sonnet-4-5-20250929', inputTokens: 7, outputTokens: 2 });
    expect(typeof parseAnthropicAnswer({ content: [{ type: 'text' }] })).toBe('string');
  });
});

describe('failures and retries', () => {
  it.each([
    [429, 'ENGINE_RATE_LIMITED', true],
    [529, 'ENGINE_RATE_LIMITED', true],
    [503, 'ENGINE_UNAVAILABLE', true],
    [500, 'ENGINE_UNAVAILABLE', true],
    [502, 'ENGINE_UNAVAILABLE', true],
    [401, 'ENGINE_AUTH_FAILED', false],
    [403, 'ENGINE_AUTH_FAILED', false],
    [400, 'ENGINE_INVALID_REQUEST', false],
    [404, 'ENGINE_INVALID_REQUEST', false],
  ])('status %i is %s (retryable %p)', (status, code, retryable) => {
    expect(classifyStatus(status, 'r', null)).toMatchObject({ code, retryable });
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('2', 0)).toBe(2);
    expect(parseRetryAfter(new Date(5_000).toUTCString(), 2_000)).toBe(3);
    expect(parseRetryAfter('soon', 0)).toBeNull();
    // Date.parse would read these as years; they are not HTTP dates.
    expect(parseRetryAfter('-5', 0)).toBeNull();
    expect(parseRetryAfter('1 2', 0)).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });

  it('honours Retry-After when it fits before the deadline', () => {
    const failure = classifyStatus(429, 'r', '1');
    expect(retryDelayMs(failure, 1, 5_000)).toBe(1000);
    expect(retryDelayMs(failure, 1, 1_000)).toBeNull();
  });

  it('stops after the retry budget and on permanent failures', () => {
    const failure = networkFailure('reset');
    expect(retryDelayMs(failure, MAX_RETRIES, 5_000, () => 0.5)).toBe(200);
    expect(retryDelayMs(failure, MAX_RETRIES + 1, 5_000)).toBeNull();
    expect(retryDelayMs(classifyStatus(401, 'r', null), 1, 5_000)).toBeNull();
  });
});

describe('prices', () => {
  const table = { 'claude-sonnet-4': 3, 'claude-sonnet-4-5': 4, 'gpt-4o': 2.5 };
  it('matches exact names, then the longest prefix', () => {
    expect(pricePerMillion(table, 'gpt-4o')).toBe(2.5);
    expect(pricePerMillion(table, 'claude-sonnet-4-5-20250929')).toBe(4);
    expect(pricePerMillion(table, 'claude-sonnet-4-20250514')).toBe(3);
    expect(pricePerMillion(table, 'unknown')).toBe(0);
  });
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])('prices a model named %j at 0, not by Object.prototype', (model) => {
    expect(pricePerMillion(DEFAULT_PRICES, model)).toBe(0);
    expect(estimatedCostUsd(DEFAULT_PRICES, model, 1_000)).toBe(0);
  });
  it('multiplies input tokens by the price', () => {
    expect(estimatedCostUsd(table, 'gpt-4o', 1_000)).toBe(0.0025);
  });
});

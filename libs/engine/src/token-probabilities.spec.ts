import { AnswerQuestionsRequest } from '@ds/contracts';
import { anthropicBody, maxOutputTokens, openAiBody, parseOpenAiAnswer, PICKS_PROPERTY, tokenDistributions, TOP_LOGPROBS, type TokenLogprob } from './index';

const request: AnswerQuestionsRequest = {
  workspaceId: 'ws',
  engine: null,
  model: null,
  timeoutMs: 5000,
  context: null,
  state: { message: 'refund please' },
  questions: [
    { key: 'intent', kind: 'choice', instructions: 'Intent?', outcomes: ['refund', 'refund_partial', 'exchange', 'other'], guide: [] },
    { key: 'urgency', kind: 'score', instructions: 'Urgency?', outcomes: ['calm', 'furious'], guide: [] },
    { key: 'fraud', kind: 'probability', instructions: 'Fraud?', outcomes: ['yes', 'no'], guide: 'signs of fraud' },
  ],
};
const asking = { ...request, tokenProbabilities: true };
const questions = request.questions.slice(0, 2);

/** Tokens spelling `content`, cut at `cuts`, with alternatives at the given offsets. */
function tokensOf(content: string, cuts: number[], alternatives: Record<number, Array<[string, number]>> = {}): TokenLogprob[] {
  const bounds = [0, ...cuts, content.length];
  return bounds.slice(0, -1).map((start, i) => {
    const token = content.slice(start, bounds[i + 1]);
    const top = alternatives[start]?.map(([text, p]) => ({ token: text, logprob: Math.log(p) }));
    return { token, logprob: top ? top[0]!.logprob : 0, ...(top ? { top_logprobs: top } : {}) };
  });
}

describe('the request for token probabilities', () => {
  it('is unchanged when not asked for', () => {
    const body = openAiBody(request, 'm');
    expect(body.logprobs).toBeUndefined();
    expect(body.top_logprobs).toBeUndefined();
    expect(Object.keys((body.response_format as any).json_schema.schema.properties)).toEqual(['intent', 'urgency', 'fraud']);
  });

  it('asks for log-probabilities and the picks of the choice and score questions first', () => {
    const body = openAiBody(asking, 'm');
    expect(body).toMatchObject({ logprobs: true, top_logprobs: TOP_LOGPROBS });
    const schema = (body.response_format as any).json_schema.schema;
    expect(Object.keys(schema.properties)).toEqual([PICKS_PROPERTY, 'intent', 'urgency', 'fraud']);
    expect(schema.required[0]).toBe(PICKS_PROPERTY);
    expect(schema.properties[PICKS_PROPERTY]).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['intent', 'urgency'],
      properties: {
        intent: { type: 'string', enum: ['refund', 'refund_partial', 'exchange', 'other'] },
        urgency: { type: 'string', enum: ['calm', 'furious'] },
      },
    });
    expect(body.max_tokens).toBeGreaterThan(maxOutputTokens(request));
  });

  it('is not asked of a decision with only probability questions, nor of Anthropic', () => {
    const onlyProbability = { ...asking, questions: [request.questions[2]!] };
    expect(openAiBody(onlyProbability, 'm').logprobs).toBeUndefined();
    expect(anthropicBody(asking, 'm')).toEqual(anthropicBody(request, 'm'));
  });
});

describe('tokenDistributions', () => {
  const content = '{"_picks":{"intent":"refund","urgency":"calm"},"intent":{"refund":0.9}}';
  const intentAt = content.indexOf('refund');
  const urgencyAt = content.indexOf('calm');

  it('reads each pick’s distribution from the alternatives of the token where its value begins', () => {
    const tokens = tokensOf(content, [intentAt, intentAt + 6, urgencyAt, urgencyAt + 4], {
      [intentAt]: [
        ['refund', 0.6],
        ['exchange', 0.3],
        ['maybe', 0.1],
      ],
      [urgencyAt]: [
        ['calm', 0.5],
        ['fur', 0.5],
      ],
    });
    const read = tokenDistributions(questions, content, tokens);
    // "maybe" names no outcome: the rest is normalised over the outcomes.
    expect(read.intent!.refund).toBeCloseTo(0.6 / 0.9, 9);
    expect(read.intent!.exchange).toBeCloseTo(0.3 / 0.9, 9);
    expect(read.intent!.refund_partial).toBe(0);
    expect(read.urgency).toEqual({ calm: 0.5, furious: 0.5 });
  });

  it('reads a value joined to its opening quote, and gives a prefix shared by outcomes to the one written', () => {
    const tokens = tokensOf(content, [intentAt - 1, intentAt + 3, intentAt + 6], {
      [intentAt - 1]: [
        ['"ref', 0.8],
        ['"exchange"', 0.2],
        ['ref', 0.5],
      ],
    });
    // "ref" starts both refund and refund_partial; the model went on to write refund. A token without the quote
    // cannot stand where the quote is.
    expect(tokenDistributions(questions, content, tokens).intent).toEqual({ refund: 0.8, refund_partial: 0, exchange: 0.2, other: 0 });
  });

  it('finds picks in spaced-out JSON', () => {
    const spaced = '{ "_picks": { "intent": "exchange" } }';
    const at = spaced.indexOf('exchange');
    const tokens = tokensOf(spaced, [at, at + 8], { [at]: [['exchange', 1]] });
    expect(tokenDistributions(questions, spaced, tokens)).toEqual({ intent: { refund: 0, refund_partial: 0, exchange: 1, other: 0 } });
  });

  it('reads nothing when the tokens do not spell the content, or there are no picks', () => {
    expect(tokenDistributions(questions, content, [{ token: '{', logprob: 0 }])).toEqual({});
    const plain = '{"intent":{"refund":1}}';
    expect(tokenDistributions(questions, plain, tokensOf(plain, []))).toEqual({});
  });

  it('leaves out a question whose alternatives name none of its outcomes', () => {
    const tokens = tokensOf(content, [urgencyAt, urgencyAt + 4], { [urgencyAt]: [['warm', 1]] });
    expect(tokenDistributions(questions, content, tokens).urgency).toBeUndefined();
  });
});

describe('parseOpenAiAnswer with token probabilities', () => {
  const content = '{"_picks":{"intent":"refund","urgency":"calm"},"intent":{"refund":1},"urgency":{"calm":1},"fraud":{"yes":0,"no":1}}';
  const at = content.indexOf('refund');
  const body = {
    model: 'gpt',
    choices: [
      {
        message: { content },
        logprobs: {
          content: tokensOf(content, [at, at + 6], {
            [at]: [
              ['refund', 0.75],
              ['other', 0.25],
            ],
          }),
        },
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 20 },
  };

  it('takes the picks out of the distributions and reads the token distributions', () => {
    const answer = parseOpenAiAnswer(body, asking);
    expect(typeof answer).toBe('object');
    if (typeof answer === 'string') return;
    expect(Object.keys(answer.distributions)).toEqual(['intent', 'urgency', 'fraud']);
    // urgency's pick sits inside a token given without alternatives: the model was sure of it.
    expect(answer.tokenDistributions).toEqual({
      intent: { refund: 0.75, refund_partial: 0, exchange: 0, other: 0.25 },
      urgency: { calm: 1, furious: 0 },
    });
  });

  it('reads the answer as before when token probabilities were not asked for', () => {
    const answer = parseOpenAiAnswer(body, request);
    if (typeof answer === 'string') throw new Error(answer);
    expect(answer.tokenDistributions).toBeUndefined();
    expect(Object.keys(answer.distributions)).toContain(PICKS_PROPERTY);
  });

  it('records no token distributions when the provider returned no log-probabilities', () => {
    const answer = parseOpenAiAnswer({ ...body, choices: [{ message: { content }, logprobs: null }] }, asking);
    if (typeof answer === 'string') throw new Error(answer);
    expect(answer.tokenDistributions).toBeUndefined();
    expect(Object.keys(answer.distributions)).toEqual(['intent', 'urgency', 'fraud']);
  });
});

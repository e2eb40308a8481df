import { answerWithLogprobs, PICKS_PROPERTY, tokenProbabilities, topOutcome } from './token-logprobs';

describe('simulated token log-probabilities', () => {
  const answers = { intent: { refund: 0.9, exchange: 0.1, other: 0 }, urgency: { calm: 0.5, furious: 0.5 }, fraud: { yes: 0.2, no: 0.8 } };

  it('squares and rescales the stated distribution, dropping outcomes without weight, surest first', () => {
    const probabilities = tokenProbabilities(answers.intent);
    expect(probabilities.map(([outcome]) => outcome)).toEqual(['refund', 'exchange']);
    expect(probabilities[0]![1]).toBeCloseTo(0.81 / 0.82, 12);
    expect(probabilities[1]![1]).toBeCloseTo(0.01 / 0.82, 12);
  });

  it('picks the top outcome, the first listed on a tie', () => {
    expect(topOutcome(answers.intent)).toBe('refund');
    expect(topOutcome(answers.urgency)).toBe('calm');
  });

  it('writes the picks first and gives every pick value a token of its own with its alternatives', () => {
    const { content, tokens } = answerWithLogprobs(answers, ['intent', 'urgency'], 20);
    expect(JSON.parse(content)).toEqual({ [PICKS_PROPERTY]: { intent: 'refund', urgency: 'calm' }, ...answers });
    expect(content.startsWith(`{"${PICKS_PROPERTY}":`)).toBe(true);
    expect(tokens.map((token) => token.token).join('')).toBe(content);
    const intent = tokens.find((token) => token.token === 'refund')!;
    expect(intent.logprob).toBeCloseTo(Math.log(0.81 / 0.82), 12);
    expect(intent.top_logprobs.map((alternative) => alternative.token)).toEqual(['refund', 'exchange']);
    // The value begins exactly where the JSON's opening quote ends.
    const offset = tokens.slice(0, tokens.indexOf(intent)).reduce((sum, token) => sum + token.token.length, 0);
    expect(content.slice(offset - 10, offset)).toBe('"intent":"');
  });

  it('lists at most the asked number of alternatives', () => {
    const { tokens } = answerWithLogprobs(answers, ['urgency'], 1);
    expect(tokens.find((token) => token.token === 'calm')!.top_logprobs).toHaveLength(1);
    expect(answerWithLogprobs(answers, ['urgency'], 0).tokens.every((token) => token.top_logprobs.length === 0)).toBe(true);
  });
});

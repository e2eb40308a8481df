import { composeAnswers, UNKNOWN_OUTCOME } from './answers';
import { deterministicDistribution } from './deterministic';

const intent = { key: 'intent', outcomes: ['refund', 'exchange', 'other'] };
const fraud = { key: 'fraud', outcomes: ['yes', 'no'] };

describe('composeAnswers', () => {
  it('answers every question in schema order without a step', () => {
    expect(composeAnswers('seed', [intent, fraud])).toEqual({
      intent: deterministicDistribution('seed', intent),
      fraud: deterministicDistribution('seed', fraud),
    });
    expect(Object.keys(composeAnswers('seed', [fraud, intent]))).toEqual(['fraud', 'intent']);
  });

  it('uses forced distributions as given, keeping keys the schema lacks', () => {
    const answers = composeAnswers('seed', [intent, fraud], { answers: { fraud: { yes: 2 }, extra: { a: 1 } } });
    expect(answers).toEqual({ intent: deterministicDistribution('seed', intent), fraud: { yes: 2 }, extra: { a: 1 } });
  });

  it.each(['constructor', 'to_string', 'hasOwnProperty', '__proto__'])('answers a question keyed %j like any other', (key) => {
    const question = { key, outcomes: ['yes', 'no'] };
    const answers = composeAnswers('seed', [question, fraud]);
    expect(Object.keys(answers)).toEqual([key, 'fraud']);
    expect(Object.getOwnPropertyDescriptor(answers, key)?.value).toEqual(deterministicDistribution('seed', question));
    expect(Object.getPrototypeOf(answers)).toBe(Object.prototype);
    const forced = composeAnswers('seed', [question], { answers: JSON.parse(`{"${key}":{"yes":1}}`) });
    expect(Object.getOwnPropertyDescriptor(forced, key)?.value).toEqual({ yes: 1 });
  });

  it('moves 0.1 from the top outcome of the first answer to an unknown outcome', () => {
    const { intent: answer } = composeAnswers('seed', [intent], { answers: { intent: { refund: 0.7, exchange: 0.2, other: 0.1 } }, unknownOutcome: true });
    expect(answer).toEqual({ refund: 0.6, exchange: 0.2, other: 0.1, [UNKNOWN_OUTCOME]: 0.1 });
  });

  it('applies both incomplete and unknownOutcome: the unknown outcome lands on the first answer left', () => {
    const answers = composeAnswers('seed', [intent, fraud], { incomplete: true, unknownOutcome: true });
    expect(Object.keys(answers)).toEqual(['fraud']);
    expect(Object.keys(answers.fraud ?? {})).toEqual(['yes', 'no', UNKNOWN_OUTCOME]);
  });
});

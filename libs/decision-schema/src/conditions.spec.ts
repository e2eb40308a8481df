import { fullSchema, normalized } from './__fixtures__/schemas';
import { conditionHolds, type ConditionSubject } from './conditions';
import type { DestinationCondition, Operator } from './schema-types';

const schema = normalized(fullSchema()); // fraud has threshold 0.8

const subject: ConditionSubject = {
  result: { intent: 'refund', urgency: 'annoyed', fraud: 0.8 },
  confidence: { intent: 0.5, urgency: 0.4, fraud: 0.6 },
  scores: { urgency: 2 },
  composites: { risk: -0.2 },
  action: 'escalate',
};

const holds = (condition: DestinationCondition, on: ConditionSubject = subject) => conditionHolds(condition, on, schema);

describe('conditionHolds', () => {
  describe.each([
    ['eq', [false, true, false]],
    ['neq', [true, false, true]],
    ['gt', [true, false, false]],
    ['gte', [true, true, false]],
    ['lt', [false, false, true]],
    ['lte', [false, true, true]],
  ] as [Operator, boolean[]][])('%s on numbers', (op, [below, equal, above]) => {
    it.each([
      ['answer', { on: 'answer', question: 'fraud' }, 0.8],
      ['confidence', { on: 'confidence', question: 'fraud' }, 0.6],
      ['score', { on: 'score', question: 'urgency' }, 2],
      ['composite', { on: 'composite', composite: 'risk' }, -0.2],
    ])('%s', (_name, target, actual) => {
      const at = (value: number) => holds({ ...target, op, value } as DestinationCondition);
      expect([at(actual - 0.1), at(actual), at(actual + 0.1)]).toEqual([below, equal, above]);
    });
  });

  it('compares choice and score answers as labels with eq and neq', () => {
    expect(holds({ on: 'answer', question: 'intent', op: 'eq', value: 'refund' })).toBe(true);
    expect(holds({ on: 'answer', question: 'intent', op: 'neq', value: 'refund' })).toBe(false);
    expect(holds({ on: 'answer', question: 'intent', op: 'neq', value: 'other' })).toBe(true);
    expect(holds({ on: 'answer', question: 'urgency', op: 'eq', value: 'annoyed' })).toBe(true);
  });

  it('never orders labels, and never compares a label with a number', () => {
    expect(holds({ on: 'answer', question: 'intent', op: 'gte', value: 'refund' })).toBe(false);
    expect(holds({ on: 'answer', question: 'intent', op: 'lt', value: 'zzz' })).toBe(false);
    expect(holds({ on: 'answer', question: 'fraud', op: 'eq', value: '0.8' })).toBe(false);
  });

  it('tests the action', () => {
    expect(holds({ on: 'action', op: 'eq', value: 'escalate' })).toBe(true);
    expect(holds({ on: 'action', op: 'neq', value: 'escalate' })).toBe(false);
    expect(holds({ on: 'action', op: 'neq', value: 'block' })).toBe(true);
  });

  it('resolves "threshold" to the question\'s own threshold', () => {
    expect(holds({ on: 'answer', question: 'fraud', op: 'gte', value: 'threshold' })).toBe(true);
    expect(holds({ on: 'answer', question: 'fraud', op: 'gt', value: 'threshold' })).toBe(false);
    const noThreshold = normalized({ ...fullSchema(), questions: (fullSchema().questions as object[]).map((q) => ({ ...q, threshold: undefined })) });
    expect(conditionHolds({ on: 'answer', question: 'fraud', op: 'lte', value: 'threshold' }, subject, noThreshold)).toBe(false);
  });

  it('does not hold on a value the subject lacks, whatever the operator', () => {
    const empty: ConditionSubject = { result: {}, confidence: {} };
    const conditions: DestinationCondition[] = [
      { on: 'answer', question: 'intent', op: 'neq', value: 'refund' },
      { on: 'confidence', question: 'intent', op: 'neq', value: 0.5 },
      { on: 'score', question: 'urgency', op: 'neq', value: 1 },
      { on: 'composite', composite: 'risk', op: 'neq', value: 0 },
      { on: 'action', op: 'neq', value: 'block' },
    ];
    for (const condition of conditions) expect(holds(condition, empty)).toBe(false);
    expect(holds({ on: 'score', question: 'urgency', op: 'neq', value: 1 }, { ...empty, scores: {} })).toBe(false);
  });

  it('does not find keys on Object.prototype', () => {
    expect(holds({ on: 'answer', question: 'constructor', op: 'neq', value: 'x' })).toBe(false);
  });
});

import { fullSchema, issuesOf, normalized, text } from './__fixtures__/schemas';

type Json = Record<string, unknown>;

// fullSchema: intent (choice: refund, exchange), urgency (score: calm, annoyed, furious), fraud (probability,
// threshold 0.8), composite risk.
const withPolicies = (policies: unknown) => issuesOf({ ...fullSchema(), policies });
const policy = (when: Json, extra: Json = {}): Json => ({ when, action: 'block', ...extra });
const whenIssues = (when: Json) => withPolicies([policy(when)]);

describe('validateSchema: policies', () => {
  it('are optional and normalize to [] with `and` filled in', () => {
    expect(withPolicies(undefined)).toEqual([]);
    const schema = normalized({ ...fullSchema(), policies: [policy({ on: 'composite', composite: 'risk', op: 'gt', value: 0 })] });
    expect(schema.policies).toEqual([{ when: { on: 'composite', composite: 'risk', op: 'gt', value: 0 }, and: [], action: 'block' }]);
  });

  it.each([
    [50, []],
    [51, [{ path: 'policies', message: 'must have at most 50 policies (has 51)' }]],
  ])('%i policies', (count, expected) => {
    expect(withPolicies(Array.from({ length: count }, () => policy({ on: 'confidence', question: 'fraud', op: 'lt', value: 0.5 })))).toEqual(expected);
  });

  it.each([
    [5, []],
    [6, [{ path: 'policies.0.and', message: 'must have at most 5 conditions (has 6)' }]],
  ])('%i extra AND conditions', (count, expected) => {
    const condition = { on: 'confidence', question: 'fraud', op: 'lt', value: 0.5 };
    expect(withPolicies([policy(condition, { and: Array.from({ length: count }, () => condition) })])).toEqual(expected);
  });

  it('requires when and a known action, and flags unknown properties', () => {
    expect(withPolicies([{ action: 'approve', priority: 1 }])).toEqual([
      { path: 'policies.0.priority', message: 'unknown property' },
      { path: 'policies.0.when', message: 'is required' },
      { path: 'policies.0.action', message: 'must be one of continue, block, escalate, fallback' },
    ]);
    expect(withPolicies([{ when: { on: 'confidence', question: 'fraud', op: 'lt', value: 0.5 } }])).toEqual([
      { path: 'policies.0.action', message: 'is required' },
    ]);
  });

  it.each(['continue', 'block', 'escalate', 'fallback'])('accepts action %s', (action) => {
    expect(withPolicies([policy({ on: 'confidence', question: 'fraud', op: 'lt', value: 0.5 }, { action })])).toEqual([]);
  });

  describe('conditions', () => {
    it('need a known `on`', () => {
      expect(whenIssues({ question: 'fraud', op: 'eq', value: 1 })).toEqual([{ path: 'policies.0.when.on', message: 'is required' }]);
      expect(whenIssues({ on: 'result', question: 'fraud', op: 'eq', value: 1 })).toEqual([
        { path: 'policies.0.when.on', message: 'must be one of answer, confidence, score, composite' },
      ]);
    });

    it('cannot test the action in a policy: the policy decides it', () => {
      expect(whenIssues({ on: 'action', op: 'eq', value: 'block' })).toEqual([
        { path: 'policies.0.when.on', message: 'must be one of answer, confidence, score, composite' },
      ]);
    });

    it.each(['eq', 'neq', 'gt', 'gte', 'lt', 'lte'])('accept operator %s on numbers', (op) => {
      expect(whenIssues({ on: 'confidence', question: 'intent', op, value: 0.5 })).toEqual([]);
      expect(whenIssues({ on: 'answer', question: 'fraud', op, value: 0.5 })).toEqual([]);
      expect(whenIssues({ on: 'score', question: 'urgency', op, value: 2 })).toEqual([]);
      expect(whenIssues({ on: 'composite', composite: 'risk', op, value: 0 })).toEqual([]);
    });

    it('need a known operator and a value', () => {
      expect(whenIssues({ on: 'confidence', question: 'fraud', op: '>=', value: 0.5 })).toEqual([
        { path: 'policies.0.when.op', message: 'must be one of eq, neq, gt, gte, lt, lte' },
      ]);
      expect(whenIssues({ on: 'confidence', question: 'fraud', value: 0.5 })).toEqual([{ path: 'policies.0.when.op', message: 'is required' }]);
      expect(whenIssues({ on: 'confidence', question: 'fraud', op: 'eq' })).toEqual([{ path: 'policies.0.when.value', message: 'is required' }]);
    });

    it('flag properties that do not belong to their `on`', () => {
      expect(whenIssues({ on: 'composite', composite: 'risk', question: 'fraud', op: 'gt', value: 0 })).toEqual([
        { path: 'policies.0.when.question', message: 'unknown property' },
      ]);
      expect(whenIssues({ on: 'answer', question: 'fraud', composite: 'risk', op: 'gt', value: 0 })).toEqual([
        { path: 'policies.0.when.composite', message: 'unknown property' },
      ]);
    });

    it('refer to existing questions and composites', () => {
      expect(whenIssues({ on: 'answer', question: 'mood', op: 'eq', value: 'x' })).toEqual([
        { path: 'policies.0.when.question', message: 'refers to an unknown question "mood"' },
      ]);
      expect(whenIssues({ on: 'confidence', op: 'gt', value: 0.5 })).toEqual([{ path: 'policies.0.when.question', message: 'is required' }]);
      expect(whenIssues({ on: 'composite', composite: 'danger', op: 'gt', value: 0.5 })).toEqual([
        { path: 'policies.0.when.composite', message: 'refers to an unknown composite "danger"' },
      ]);
    });

    describe('on answer of a choice question', () => {
      it.each(['refund', 'exchange', 'other'])('accepts option %s with eq and neq', (value) => {
        expect(whenIssues({ on: 'answer', question: 'intent', op: 'eq', value })).toEqual([]);
        expect(whenIssues({ on: 'answer', question: 'intent', op: 'neq', value })).toEqual([]);
      });

      it.each(['gt', 'gte', 'lt', 'lte'])('refuses ordering with %s', (op) => {
        expect(whenIssues({ on: 'answer', question: 'intent', op, value: 'refund' })).toEqual([
          { path: 'policies.0.when.op', message: 'must be eq or neq for the choice question "intent"' },
        ]);
      });

      it('refuses values that are not options', () => {
        expect(whenIssues({ on: 'answer', question: 'intent', op: 'eq', value: 'cancel' })).toEqual([
          { path: 'policies.0.when.value', message: 'is not an option of "intent"' },
        ]);
        expect(whenIssues({ on: 'answer', question: 'intent', op: 'eq', value: 1 })).toEqual([{ path: 'policies.0.when.value', message: 'must be a string' }]);
      });
    });

    describe('on answer of a score question', () => {
      it.each(['calm', 'annoyed', 'furious'])('accepts label %s', (value) => {
        expect(whenIssues({ on: 'answer', question: 'urgency', op: 'eq', value })).toEqual([]);
      });

      it('refuses unknown labels and ordering', () => {
        expect(whenIssues({ on: 'answer', question: 'urgency', op: 'eq', value: 'angry' })).toEqual([
          { path: 'policies.0.when.value', message: 'is not a level of "urgency"' },
        ]);
        expect(whenIssues({ on: 'answer', question: 'urgency', op: 'gte', value: 'annoyed' })).toEqual([
          { path: 'policies.0.when.op', message: 'must be eq or neq for the score question "urgency"' },
        ]);
      });

      it('limits string values to 255 characters', () => {
        const schema = fullSchema();
        // fullSchema's second question is urgency.
        (schema.questions as Json[])[1]!.levels = [text(255), text(256, 'b')];
        const conditionOn = (value: string) => issuesOf({ ...schema, policies: [policy({ on: 'answer', question: 'urgency', op: 'eq', value })] });
        expect(conditionOn(text(255))).toEqual([]);
        expect(conditionOn(text(256, 'b'))).toEqual([{ path: 'policies.0.when.value', message: 'must be 1 to 255 characters (is 256)' }]);
      });
    });

    describe('on answer of a probability question', () => {
      it.each([
        [0, []],
        [1, []],
        [-0.01, [{ path: 'policies.0.when.value', message: 'must be between 0 and 1' }]],
        [1.01, [{ path: 'policies.0.when.value', message: 'must be between 0 and 1' }]],
        ['yes', [{ path: 'policies.0.when.value', message: 'must be a number' }]],
        ['threshold', [{ path: 'policies.0.when.value', message: '"threshold" may only be named by destination conditions' }]],
      ])('value %p', (value, expected) => {
        expect(whenIssues({ on: 'answer', question: 'fraud', op: 'gte', value })).toEqual(expected);
      });
    });

    describe('on confidence', () => {
      it.each([
        [0, []],
        [1, []],
        [-0.01, [{ path: 'policies.0.when.value', message: 'must be between 0 and 1' }]],
        [1.01, [{ path: 'policies.0.when.value', message: 'must be between 0 and 1' }]],
      ])('value %p', (value, expected) => {
        expect(whenIssues({ on: 'confidence', question: 'urgency', op: 'lt', value })).toEqual(expected);
      });
    });

    describe('on score', () => {
      it.each([
        [1, []],
        [3, []],
        [0.99, [{ path: 'policies.0.when.value', message: 'must be between 1 and 3' }]],
        [3.01, [{ path: 'policies.0.when.value', message: 'must be between 1 and 3' }]],
      ])('value %p against 3 levels', (value, expected) => {
        expect(whenIssues({ on: 'score', question: 'urgency', op: 'gte', value })).toEqual(expected);
      });

      it('only for score questions', () => {
        expect(whenIssues({ on: 'score', question: 'fraud', op: 'gte', value: 1 })).toEqual([
          { path: 'policies.0.when.question', message: '"fraud" is not a score question' },
        ]);
      });
    });

    describe('on composite', () => {
      it.each([
        [-1, []],
        [1, []],
        [-1.01, [{ path: 'policies.0.when.value', message: 'must be between -1 and 1' }]],
        [1.01, [{ path: 'policies.0.when.value', message: 'must be between -1 and 1' }]],
      ])('value %p', (value, expected) => {
        expect(whenIssues({ on: 'composite', composite: 'risk', op: 'gt', value })).toEqual(expected);
      });
    });

    it('are checked in `and` too', () => {
      expect(
        withPolicies([
          policy({ on: 'composite', composite: 'risk', op: 'gt', value: 0 }, { and: [{ on: 'score', question: 'urgency', op: 'gt', value: 9 }, 'x'] }),
        ]),
      ).toEqual([
        { path: 'policies.0.and.0.value', message: 'must be between 1 and 3' },
        { path: 'policies.0.and.1', message: 'must be an object' },
      ]);
      expect(withPolicies([policy({ on: 'composite', composite: 'risk', op: 'gt', value: 0 }, { and: {} })])).toEqual([
        { path: 'policies.0.and', message: 'must be an array' },
      ]);
    });
  });
});

import { fullSchema, normalized } from './__fixtures__/schemas';
import type { Distributions } from './distributions';
import { engineErrorEvaluation, evaluate } from './evaluate';
import { traceEvaluation } from './trace';

// fullSchema: intent (choice, minConfidence 0.6), urgency (score calm/annoyed/furious), fraud (probability, threshold 0.8);
// composite risk = (3·fraud + 1·urgency + 1·p(refund)) / 5. Rules: 0: fraud ≥ 0.9 and confidence(fraud) ≥ 0.5 → block;
// 1: risk > 0.7 → escalate; 2: score(urgency) ≥ 2.5 → escalate.
const schema = normalized(fullSchema());

function answers(overrides: Partial<Distributions> = {}): Distributions {
  return {
    intent: { refund: 0.95, exchange: 0.05, other: 0 },
    urgency: { calm: 1, annoyed: 0, furious: 0 },
    fraud: { yes: 0.05, no: 0.95 },
    ...overrides,
  } as Distributions;
}

describe('traceEvaluation', () => {
  it('lists every composite and every rule with the values each condition compared', () => {
    const evaluation = evaluate(schema, answers({ fraud: { yes: 0.95, no: 0.05 } }));
    const trace = traceEvaluation(schema, evaluation);
    expect(trace.composites).toEqual([{ key: 'risk', value: evaluation.composites!.risk }]);
    expect(trace.rules).toEqual([
      {
        rule: 0,
        action: 'block',
        matched: true,
        conditions: [
          { on: 'answer', key: 'fraud', left: 0.95, op: 'gte', right: 0.9, holds: true },
          { on: 'confidence', key: 'fraud', left: evaluation.confidence.fraud, op: 'gte', right: 0.5, holds: true },
        ],
      },
      {
        rule: 1,
        action: 'escalate',
        matched: evaluation.composites!.risk! > 0.7,
        conditions: [{ on: 'composite', key: 'risk', left: evaluation.composites!.risk, op: 'gt', right: 0.7, holds: evaluation.composites!.risk! > 0.7 }],
      },
      { rule: 2, action: 'escalate', matched: false, conditions: [{ on: 'score', key: 'urgency', left: 1, op: 'gte', right: 2.5, holds: false }] },
    ]);
    expect(trace.decided_by).toEqual({ type: 'policy', rule: 0 });
    expect(trace.action).toBe('block');
  });

  it('marks a rule unmatched when any one of its conditions fails, and the default when none matched', () => {
    const trace = traceEvaluation(schema, evaluate(schema, answers({ fraud: { yes: 0.9, no: 0.1 } })));
    // p(yes) 0.9 passes rule 0's first condition; its confidence |2·0.9 − 1| = 0.8 passes the second too.
    expect(trace.rules[0]!.matched).toBe(true);
    const calm = traceEvaluation(schema, evaluate(schema, answers()));
    expect(calm.rules.map((rule) => rule.matched)).toEqual([false, false, false]);
    expect(calm.rules[0]!.conditions.map((condition) => condition.holds)).toEqual([false, true]);
    expect(calm.decided_by).toEqual({ type: 'default' });
    expect(calm.action).toBe('continue');
  });

  it('still evaluates the rules when low confidence decided before them', () => {
    const evaluation = evaluate(schema, answers({ intent: { refund: 0.5, exchange: 0.5, other: 0 }, urgency: { calm: 0, annoyed: 0, furious: 1 } }));
    const trace = traceEvaluation(schema, evaluation);
    expect(trace.decided_by).toMatchObject({ type: 'low_confidence', question: 'intent' });
    expect(trace.rules[2]!.matched).toBe(true);
    expect(trace.action).toBe('escalate');
  });

  it('resolves the threshold word to the question threshold', () => {
    const withThreshold = normalized({
      ...fullSchema(),
      policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.8 }, action: 'block' }],
    });
    const trace = traceEvaluation(withThreshold, evaluate(withThreshold, answers({ fraud: { yes: 0.85, no: 0.15 } })));
    expect(trace.rules[0]!.conditions[0]).toEqual({ on: 'answer', key: 'fraud', left: 0.85, op: 'gte', right: 0.8, holds: true });
  });

  it('an engine-error fallback has no values, so no rule matches', () => {
    const trace = traceEvaluation(schema, engineErrorEvaluation(schema, 'ENGINE_TIMEOUT'));
    expect(trace.composites).toEqual([{ key: 'risk', value: null }]);
    expect(trace.rules.every((rule) => !rule.matched && rule.conditions.every((condition) => condition.left === null && !condition.holds))).toBe(true);
    expect(trace.decided_by).toEqual({ type: 'engine_error', code: 'ENGINE_TIMEOUT' });
  });

  it('without values keeps which rules matched and what they compare with, never the run own values', () => {
    const evaluation = evaluate(schema, answers({ fraud: { yes: 0.95, no: 0.05 } }));
    const trace = traceEvaluation(schema, evaluation, false);
    expect(trace.composites).toEqual([{ key: 'risk', value: null }]);
    expect(trace.rules[0]).toMatchObject({
      matched: true,
      conditions: [
        { left: null, right: 0.9, holds: true },
        { left: null, right: 0.5, holds: true },
      ],
    });
    expect(JSON.stringify(trace)).not.toContain('0.95');
  });

  it('handles rules of five conditions and a decision without composites or policies', () => {
    const five = normalized({
      ...fullSchema(),
      policies: [
        {
          when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' },
          and: [
            { on: 'confidence', question: 'intent', op: 'gte', value: 0.1 },
            { on: 'score', question: 'urgency', op: 'lt', value: 2 },
            { on: 'answer', question: 'urgency', op: 'neq', value: 'furious' },
            { on: 'composite', composite: 'risk', op: 'lte', value: 0.5 },
          ],
          action: 'continue',
        },
      ],
    });
    const trace = traceEvaluation(five, evaluate(five, answers()));
    expect(trace.rules[0]!.conditions).toHaveLength(5);
    expect(trace.rules[0]!.conditions.map((condition) => condition.left)).toEqual(['refund', expect.any(Number), 1, 'calm', expect.any(Number)]);
    expect(trace.rules[0]!.matched).toBe(true);
    expect(trace.decided_by).toEqual({ type: 'policy', rule: 0 });
    const bare = normalized({ ...fullSchema(), composites: [], policies: [] });
    expect(traceEvaluation(bare, evaluate(bare, answers()))).toEqual({ composites: [], rules: [], decided_by: { type: 'default' }, action: 'continue' });
  });
});

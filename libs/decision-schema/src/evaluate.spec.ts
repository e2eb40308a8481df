import { fullSchema, minimalSchema, normalized } from './__fixtures__/schemas';
import type { Distributions } from './distributions';
import { engineErrorEvaluation, entropyConfidence, evaluate } from './evaluate';
import type { NormalizedSchema } from './schema-types';

// fullSchema: intent (choice: refund, exchange, other; minConfidence 0.6), urgency (score: calm, annoyed, furious),
// fraud (probability). Composite risk = (3·fraud + 1·urgency + 1·p(refund)) / 5. Policies:
//   0: fraud ≥ 0.9 and confidence(fraud) ≥ 0.5 → block;  1: risk > 0.7 → escalate;  2: score(urgency) ≥ 2.5 → escalate.
const schema = normalized(fullSchema());

/** A calm, confident, harmless request unless told otherwise. */
function answers(overrides: Partial<Distributions> = {}): Distributions {
  return {
    intent: { refund: 0.95, exchange: 0.05, other: 0 },
    urgency: { calm: 1, annoyed: 0, furious: 0 },
    fraud: { yes: 0.05, no: 0.95 },
    ...overrides,
  } as Distributions;
}

function withSchema(changes: Record<string, unknown>): NormalizedSchema {
  return normalized({ ...fullSchema(), ...changes });
}

describe('evaluate', () => {
  describe('typed answers', () => {
    it('choice: the most likely option; score: the most likely level label; probability: p(yes)', () => {
      const evaluation = evaluate(schema, answers({ urgency: { calm: 0.2, annoyed: 0.5, furious: 0.3 }, fraud: { yes: 0.3, no: 0.7 } }));
      expect(evaluation.result).toEqual({ intent: 'refund', urgency: 'annoyed', fraud: 0.3 });
    });

    it('breaks ties by the first outcome in order', () => {
      const evaluation = evaluate(
        schema,
        answers({ intent: { refund: 0.4, exchange: 0.4, other: 0.2 }, urgency: { calm: 0.1, annoyed: 0.45, furious: 0.45 } }),
      );
      expect(evaluation.result.intent).toBe('refund');
      expect(evaluation.result.urgency).toBe('annoyed');
    });

    it('keeps p(yes) unrounded', () => {
      expect(evaluate(schema, answers({ fraud: { yes: 1, no: 2 } })).result.fraud).toBeCloseTo(1 / 3, 15);
    });

    it('keys result, confidence and scores in question order', () => {
      const evaluation = evaluate(schema, answers());
      expect(Object.keys(evaluation.result)).toEqual(['intent', 'urgency', 'fraud']);
      expect(Object.keys(evaluation.confidence)).toEqual(['intent', 'urgency', 'fraud']);
      expect(Object.keys(evaluation.scores ?? {})).toEqual(['urgency']);
      expect(Object.keys(evaluation.probabilities)).toEqual(['intent', 'urgency', 'fraud']);
    });
  });

  describe('confidence', () => {
    it('probability: |2p − 1|', () => {
      const at = (yes: number) => evaluate(schema, answers({ fraud: { yes, no: 1 - yes } })).confidence.fraud;
      expect(at(0.5)).toBe(0);
      expect(at(1)).toBe(1);
      expect(at(0)).toBe(1);
      expect(at(0.8)).toBeCloseTo(0.6, 12);
    });

    it('choice and score: 0 at uniform, 1 at certainty', () => {
      const uniform = evaluate(schema, answers({ intent: { refund: 1, exchange: 1, other: 1 }, urgency: { calm: 1, annoyed: 1, furious: 1 } }));
      expect(uniform.confidence.intent).toBeCloseTo(0, 12);
      expect(uniform.confidence.urgency).toBeCloseTo(0, 12);
      const certain = evaluate(schema, answers({ intent: { exchange: 1 }, urgency: { furious: 1 } }));
      expect(certain.confidence.intent).toBe(1);
      expect(certain.confidence.urgency).toBe(1);
    });

    it('choice and score: 1 − H(p)/ln(n) in between', () => {
      const evaluation = evaluate(schema, answers({ intent: { refund: 0.5, exchange: 0.5 } }));
      expect(evaluation.confidence.intent).toBeCloseTo(1 - Math.log(2) / Math.log(3), 12);
      expect(entropyConfidence([0.5, 0.5])).toBe(0);
      expect(entropyConfidence([0.9, 0.1])).toBeCloseTo(1 - (-(0.9 * Math.log(0.9)) - 0.1 * Math.log(0.1)) / Math.log(2), 12);
    });

    it('stays within 0..1', () => {
      for (const ps of [[1 / 3, 1 / 3, 1 / 3], [1, 0], [0.1, 0.2, 0.7], Array(254).fill(1 / 254)]) {
        const confidence = entropyConfidence(ps);
        expect(confidence).toBeGreaterThanOrEqual(0);
        expect(confidence).toBeLessThanOrEqual(1);
      }
    });
  });

  describe('weighted levels', () => {
    it.each([
      [{ calm: 1 }, 1],
      [{ furious: 1 }, 3],
      [{ calm: 0.5, furious: 0.5 }, 2],
      [{ calm: 0.2, annoyed: 0.3, furious: 0.5 }, 0.2 + 0.6 + 1.5],
    ])('%p → %p, counted from 1', (urgency, level) => {
      expect(evaluate(schema, answers({ urgency })).scores?.urgency).toBeCloseTo(level, 12);
    });

    it('are absent without score questions', () => {
      const evaluation = evaluate(normalized(minimalSchema()), { intent: { refund: 1 } });
      expect(evaluation).not.toHaveProperty('scores');
      expect(evaluation).not.toHaveProperty('composites');
    });
  });

  describe('composites', () => {
    it('Σ(weight × value) / Σ|weight| with each kind of term', () => {
      // fraud 0.5; urgency weighted level 2 → (2 − 1)/(3 − 1) = 0.5; p(refund) 0.8
      const evaluation = evaluate(schema, answers({ intent: { refund: 0.8, exchange: 0.2 }, urgency: { annoyed: 1 }, fraud: { yes: 0.5, no: 0.5 } }));
      expect(evaluation.composites?.risk).toBeCloseTo((3 * 0.5 + 1 * 0.5 + 1 * 0.8) / 5, 12);
    });

    it('spans −1..1 with negative weights', () => {
      const negative = withSchema({
        composites: [
          {
            key: 'calmness',
            terms: [
              { question: 'urgency', weight: -2 },
              { question: 'fraud', weight: -1 },
            ],
          },
          {
            key: 'mixed',
            terms: [
              { question: 'fraud', weight: 1 },
              { question: 'intent', option: 'other', weight: -1 },
            ],
          },
        ],
        policies: [],
      });
      const evaluation = evaluate(negative, answers({ urgency: { furious: 1 }, fraud: { yes: 1 } }));
      expect(evaluation.composites).toEqual({ calmness: -1, mixed: 0.5 });
      expect(Object.keys(evaluation.composites ?? {})).toEqual(['calmness', 'mixed']);
    });
  });

  describe('action precedence', () => {
    it('default: nothing matched → continue', () => {
      const evaluation = evaluate(schema, answers());
      expect(evaluation.action).toBe('continue');
      expect(evaluation.action_reason).toEqual({ type: 'default' });
    });

    it('a policy: the first matching rule, by its 0-based index', () => {
      const evaluation = evaluate(schema, answers({ urgency: { furious: 1 } }));
      expect(evaluation.action).toBe('escalate');
      expect(evaluation.action_reason).toEqual({ type: 'policy', rule: 2 });
    });

    it('a policy: first match wins when several match', () => {
      const evaluation = evaluate(schema, answers({ urgency: { furious: 1 }, fraud: { yes: 0.99, no: 0.01 } }));
      expect(evaluation.action).toBe('block');
      expect(evaluation.action_reason).toEqual({ type: 'policy', rule: 0 });
    });

    it('a policy: every `and` condition must hold too', () => {
      // fraud 0.9 gives confidence 0.8 ≥ 0.5: rule 0 matches
      expect(evaluate(schema, answers({ fraud: { yes: 0.9, no: 0.1 } })).action_reason).toEqual({ type: 'policy', rule: 0 });
      const strict = withSchema({
        policies: [
          {
            when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.9 },
            and: [{ on: 'confidence', question: 'fraud', op: 'gte', value: 0.9 }],
            action: 'block',
          },
        ],
      });
      // confidence 0.8 < 0.9: no match
      expect(evaluate(strict, answers({ fraud: { yes: 0.9, no: 0.1 } })).action_reason).toEqual({ type: 'default' });
    });

    it('a policy on a composite', () => {
      const evaluation = evaluate(schema, answers({ urgency: { annoyed: 1 }, fraud: { yes: 0.85, no: 0.15 } }));
      // risk = (3·0.85 + 0.5 + 0.95)/5 = 0.8 > 0.7, rule 0 fails (0.85 < 0.9)
      expect(evaluation.action_reason).toEqual({ type: 'policy', rule: 1 });
      expect(evaluation.action).toBe('escalate');
    });

    it('low confidence beats policies and uses the fallback action', () => {
      const evaluation = evaluate(schema, answers({ intent: { refund: 0.5, exchange: 0.5 }, urgency: { furious: 1 } }));
      expect(evaluation.action).toBe('escalate');
      expect(evaluation.action_reason).toEqual({
        type: 'low_confidence',
        question: 'intent',
        confidence: 1 - Math.log(2) / Math.log(3),
        minConfidence: 0.6,
      });
    });

    it('low confidence: strictly below the minimum, first in question order', () => {
      const questions = (fullSchema().questions as Record<string, unknown>[]).map((q) => ({ ...q, minConfidence: q.key === 'intent' ? null : 0.6 }));
      const both = withSchema({ questions, fallbackAction: 'block' });
      const evaluation = evaluate(both, answers({ urgency: { calm: 0.5, annoyed: 0.5 }, fraud: { yes: 0.5, no: 0.5 } }));
      expect(evaluation.action).toBe('block');
      expect(evaluation.action_reason).toMatchObject({ type: 'low_confidence', question: 'urgency' });
      // fraud confidence exactly at the minimum is not low
      const atMinimum = evaluate(both, answers({ fraud: { yes: 0.8, no: 0.2 } }));
      expect(atMinimum.confidence.fraud).toBeCloseTo(0.6, 12);
      expect(atMinimum.action_reason.type).not.toBe('low_confidence');
    });

    it('an `other` answer beats low confidence and policies', () => {
      const evaluation = evaluate(schema, answers({ intent: { refund: 0.3, exchange: 0.3, other: 0.4 }, fraud: { yes: 1 } }));
      expect(evaluation.result.intent).toBe('other');
      expect(evaluation.action).toBe('escalate');
      expect(evaluation.action_reason).toEqual({ type: 'other_option', question: 'intent' });
    });

    it('an `other` answer: the first choice question in order', () => {
      const two = withSchema({
        questions: [
          { key: 'first', kind: 'choice', instructions: 'x', options: [{ value: 'a' }, { value: 'b' }] },
          { key: 'second', kind: 'choice', instructions: 'x', options: [{ value: 'a' }, { value: 'b' }] },
        ],
        composites: [],
        policies: [],
        destinations: [],
        fallbackAction: 'fallback',
      });
      const evaluation = evaluate(two, { first: { other: 1 }, second: { other: 1 } });
      expect(evaluation.action).toBe('fallback');
      expect(evaluation.action_reason).toEqual({ type: 'other_option', question: 'first' });
    });
  });

  it('renormalizes and fills the distributions it returns', () => {
    const evaluation = evaluate(schema, answers({ intent: { refund: 2, exchange: 2 } }));
    expect(evaluation.probabilities.intent).toEqual({ refund: 0.5, exchange: 0.5, other: 0 });
  });

  it('throws on distributions outside the contract', () => {
    expect(() => evaluate(schema, { intent: { refund: 1 } })).toThrow('cannot evaluate: missing the distribution of "urgency"');
  });
});

describe('evaluate with token distributions', () => {
  const tokensSchema = normalized({ ...fullSchema(), settings: { confidenceSource: 'tokens' } });
  const tokens = { intent: { refund: 0.5, exchange: 0.5, other: 0 }, urgency: { calm: 0.2, annoyed: 0.8, furious: 0 } };

  it('answers choice and score questions from the tokens when the decision says so, and records both sources', () => {
    const evaluation = evaluate(tokensSchema, answers(), tokens);
    expect(evaluation.result).toMatchObject({ intent: 'refund', urgency: 'annoyed', fraud: 0.05 });
    expect(evaluation.probabilities.intent).toEqual(tokens.intent);
    // intent's tokens are a coin flip between two of three outcomes: below its minConfidence of 0.6.
    expect(evaluation.confidence.intent).toBeCloseTo(1 - Math.log(2) / Math.log(3), 9);
    expect(evaluation.action_reason).toMatchObject({ type: 'low_confidence', question: 'intent' });
    expect(evaluation.recorded.intent).toEqual(answers().intent);
    expect(evaluation.recordedTokens).toEqual(tokens);
  });

  it('ignores token distributions when the decision answers from the model’s numbers', () => {
    const evaluation = evaluate(schema, answers(), tokens);
    expect(evaluation).toEqual(evaluate(schema, answers()));
    expect(evaluation.recordedTokens).toBeUndefined();
  });

  it('keeps the model’s numbers for a question whose token distribution does not fit, and for probability questions', () => {
    const evaluation = evaluate(tokensSchema, answers(), { intent: { refund: 1, maybe: 1 }, urgency: { calm: 0, annoyed: 0, furious: 0 }, fraud: { yes: 1 } });
    expect(evaluation.probabilities).toEqual(evaluate(schema, answers()).probabilities);
    expect(evaluation.recordedTokens).toBeUndefined();
  });

  it('calibrates the token distributions with the tokens’ own maps', () => {
    const calibrated = normalized({
      ...fullSchema(),
      settings: { confidenceSource: 'tokens' },
      calibration: { tokens: { urgency: { method: 'temperature', temperature: 100 } } },
    });
    const evaluation = evaluate(calibrated, answers(), tokens);
    expect(evaluation.probabilities.urgency!.annoyed).toBeLessThan(0.8);
    expect(evaluation.probabilities.intent).toEqual(tokens.intent);
    expect(evaluation.recordedTokens!.urgency).toEqual(tokens.urgency);
  });
});

describe('engineErrorEvaluation', () => {
  it('answers with the fallback action, empty results and the error code', () => {
    expect(engineErrorEvaluation(schema, 'ENGINE_TIMEOUT')).toEqual({
      result: {},
      confidence: {},
      scores: {},
      composites: {},
      probabilities: {},
      recorded: {},
      action: 'escalate',
      action_reason: { type: 'engine_error', code: 'ENGINE_TIMEOUT' },
    });
  });

  it('leaves out scores and composites when the decision has none', () => {
    const evaluation = engineErrorEvaluation(normalized({ ...minimalSchema(), fallbackAction: 'block' }), 'ENGINE_UNAVAILABLE');
    expect(evaluation).toEqual({
      result: {},
      confidence: {},
      probabilities: {},
      recorded: {},
      action: 'block',
      action_reason: { type: 'engine_error', code: 'ENGINE_UNAVAILABLE' },
    });
  });
});

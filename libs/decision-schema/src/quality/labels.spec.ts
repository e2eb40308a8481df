import { fullSchema, normalized } from '../__fixtures__/schemas';
import { entropyConfidence } from '../evaluate';
import { outcomeLabels, truthIndex } from './labels';

// fullSchema: intent (choice: refund, exchange, other), urgency (score: calm, annoyed, furious), fraud (probability).
const schema = normalized(fullSchema());
const recorded = {
  intent: { refund: 0.7, exchange: 0.2, other: 0.1 },
  urgency: { calm: 0.1, annoyed: 0.3, furious: 0.6 },
  fraud: { yes: 0.8, no: 0.2 },
};

describe('outcomeLabels', () => {
  it('labels each named question per source, and the action', () => {
    const labels = outcomeLabels(schema, { model: recorded }, { answers: { intent: 'exchange', urgency: 'furious', fraud: false }, action: 'block' }, 'block');
    expect(labels).toEqual([
      { question: 'intent', kind: 'choice', source: 'model', confidence: entropyConfidence([0.7, 0.2, 0.1]), predicted: 0.7, observed: false, correct: false },
      { question: 'urgency', kind: 'score', source: 'model', confidence: entropyConfidence([0.1, 0.3, 0.6]), predicted: 0.6, observed: true, correct: true },
      { question: 'fraud', kind: 'probability', source: 'model', confidence: expect.closeTo(0.6, 12), predicted: 0.8, observed: false, correct: false },
      { question: '', kind: 'action', source: 'model', confidence: null, predicted: null, observed: null, correct: true },
    ]);
  });

  it('labels both sources where both were recorded, and none where no distribution was stored', () => {
    const both = outcomeLabels(
      schema,
      { model: recorded, tokens: { ...recorded, fraud: { yes: 0.3, no: 0.7 } } },
      { answers: { fraud: false }, action: null },
      'continue',
    );
    expect(both.map((label) => [label.source, label.question, label.correct])).toEqual([
      ['model', 'fraud', false],
      ['tokens', 'fraud', true],
    ]);
    expect(outcomeLabels(schema, null, { answers: { fraud: true }, action: 'block' }, 'continue')).toEqual([
      { question: '', kind: 'action', source: 'model', confidence: null, predicted: null, observed: null, correct: false },
    ]);
    // An engine-error fallback without an action to compare.
    expect(outcomeLabels(schema, null, { answers: {}, action: 'block' }, null)).toEqual([]);
  });

  it('judges a calibrated version on its calibrated distributions', () => {
    const calibrated = normalized({ ...fullSchema(), calibration: { model: { fraud: { method: 'isotonic', points: [[0.8, 0.4]] } } } });
    const [label] = outcomeLabels(calibrated, { model: recorded }, { answers: { fraud: true }, action: null }, 'continue');
    expect(label).toMatchObject({ predicted: 0.4, observed: true, correct: false, confidence: expect.closeTo(0.2, 12) });
  });

  it('reads p(yes) = 0.5 as yes', () => {
    const [label] = outcomeLabels(schema, { model: { ...recorded, fraud: { yes: 0.5, no: 0.5 } } }, { answers: { fraud: true }, action: null }, null);
    expect(label).toMatchObject({ correct: true, confidence: 0 });
  });

  it('truthIndex is the outcome position; probability questions: yes 0, no 1', () => {
    const [intent, urgency, fraud] = schema.questions;
    expect(truthIndex(intent!, 'other')).toBe(2);
    expect(truthIndex(urgency!, 'annoyed')).toBe(1);
    expect(truthIndex(fraud!, true)).toBe(0);
    expect(truthIndex(fraud!, false)).toBe(1);
  });
});

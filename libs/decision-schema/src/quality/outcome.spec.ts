import { fullSchema, normalized } from '../__fixtures__/schemas';
import { checkOutcome } from './outcome';

// fullSchema: intent (choice: refund, exchange, other), urgency (score: calm, annoyed, furious), fraud (probability).
const schema = normalized(fullSchema());
const paths = (body: unknown) => {
  const check = checkOutcome(schema, body);
  return check.ok ? [] : check.issues.map((issue) => issue.path).sort();
};

describe('checkOutcome', () => {
  it('accepts an option value (other included), a level label and a boolean, kept in question order', () => {
    const check = checkOutcome(schema, { answers: { fraud: true, urgency: 'furious', intent: 'other' }, action: 'block' });
    expect(check).toEqual({ ok: true, outcome: { answers: { intent: 'other', urgency: 'furious', fraud: true }, action: 'block' } });
    expect(Object.keys(check.ok ? check.outcome.answers : {})).toEqual(['intent', 'urgency', 'fraud']);
  });

  it('takes answers alone, an action alone, and an empty answers object beside an action', () => {
    expect(checkOutcome(schema, { answers: { fraud: false } })).toEqual({ ok: true, outcome: { answers: { fraud: false }, action: null } });
    expect(checkOutcome(schema, { action: 'continue' })).toEqual({ ok: true, outcome: { answers: {}, action: 'continue' } });
    expect(checkOutcome(schema, { answers: {}, action: 'escalate' })).toEqual({ ok: true, outcome: { answers: {}, action: 'escalate' } });
  });

  it('ignores other top-level fields', () => {
    expect(checkOutcome(schema, { action: 'fallback', note: 'x' })).toMatchObject({ ok: true });
  });

  it('needs answers, an action or both, in an object', () => {
    expect(paths({})).toEqual(['']);
    expect(paths({ answers: {} })).toEqual(['answers']);
    expect(paths(null)).toEqual(['']);
    expect(paths([])).toEqual(['']);
    expect(paths('x')).toEqual(['']);
    expect(paths({ answers: [] })).toEqual(['answers']);
    expect(paths({ answers: 'intent' })).toEqual(['answers']);
  });

  it('names every bad path at once: unknown keys, values of the wrong kind, an unknown action', () => {
    expect(paths({ answers: { nope: 'x', intent: 'bogus', urgency: 2, fraud: 'yes' }, action: 'maybe' })).toEqual([
      'action',
      'answers.fraud',
      'answers.intent',
      'answers.nope',
      'answers.urgency',
    ]);
  });

  it.each([
    ['intent', 1],
    ['intent', true],
    ['intent', null],
    ['urgency', 'very'],
    ['urgency', 1],
    ['fraud', 1],
    ['fraud', 0],
    ['fraud', 'true'],
    ['fraud', null],
  ])('refuses %s = %p', (key, value) => {
    expect(paths({ answers: { [key]: value } })).toEqual([`answers.${key}`]);
  });

  it('refuses inherited names such as constructor as question keys', () => {
    expect(paths({ answers: JSON.parse('{"constructor":"x","__proto__":"y"}') })).toEqual(['answers.__proto__', 'answers.constructor']);
  });

  it.each([null, 1, 'CONTINUE', ''])('refuses the action %p', (action) => {
    expect(paths({ action })).toEqual(['action']);
  });

  it('labels a rubric level without a label by its position', () => {
    const rubric = normalized({
      ...fullSchema(),
      questions: [{ key: 'size', kind: 'score', instructions: 'How big?', levels: [{ rubric: { max: 1 } }, { rubric: { max: 2 } }] }],
      composites: [],
      policies: [],
      destinations: [],
    });
    expect(checkOutcome(rubric, { answers: { size: '2' } })).toMatchObject({ ok: true });
    expect(checkOutcome(rubric, { answers: { size: '3' } })).toMatchObject({ ok: false });
  });
});

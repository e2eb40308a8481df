import {
  afterLeaving,
  AnswerToJudge,
  claimLeft,
  dueTone,
  initialDraft,
  moveField,
  outcomeText,
  pickOption,
  resolutionBody,
  reviewCommand,
  reviewFields,
  setField,
  spanText,
  stepItem,
} from './reviews';

const ANSWERS: AnswerToJudge[] = [
  { key: 'intent', kind: 'choice', outcomes: ['refund', 'exchange', 'other'], answer: 'refund' },
  { key: 'urgency', kind: 'score', outcomes: ['calm', 'annoyed'], answer: null },
  { key: 'fraud', kind: 'probability', outcomes: [true, false], answer: 0.2 },
];

describe('reviewCommand', () => {
  it('maps the inbox keys where nothing else wants them', () => {
    const keys = ['j', 'ArrowDown', 'k', 'ArrowUp', 'l', 'ArrowRight', 'h', 'ArrowLeft', 'Enter', 'Escape', 'c', 'n', '1', '9'];
    expect(keys.map((key) => reviewCommand({ key }, 'none'))).toEqual([
      { type: 'next' },
      { type: 'next' },
      { type: 'previous' },
      { type: 'previous' },
      { type: 'field', step: 1 },
      { type: 'field', step: 1 },
      { type: 'field', step: -1 },
      { type: 'field', step: -1 },
      { type: 'resolve' },
      { type: 'release' },
      { type: 'claim' },
      { type: 'note' },
      { type: 'pick', option: 0 },
      { type: 'pick', option: 8 },
    ]);
    expect(['0', 'x', 'Tab', ' '].map((key) => reviewCommand({ key }, 'none'))).toEqual([null, null, null, null]);
  });

  it('leaves typed text, a button’s Enter, a radio’s arrows and the browser’s shortcuts alone', () => {
    expect(['j', '1', 'Enter'].map((key) => reviewCommand({ key }, 'text'))).toEqual([null, null, null]);
    expect(reviewCommand({ key: 'Escape' }, 'text')).toEqual({ type: 'leave' });
    expect(['Enter', 'ArrowDown', 'ArrowLeft'].map((key) => reviewCommand({ key }, 'control'))).toEqual([null, null, null]);
    expect(reviewCommand({ key: 'j' }, 'control')).toEqual({ type: 'next' });
    expect(reviewCommand({ key: '2' }, 'control')).toEqual({ type: 'pick', option: 1 });
    expect(reviewCommand({ key: 'c', ctrlKey: true }, 'none')).toBeNull();
    expect(reviewCommand({ key: '1', altKey: true }, 'none')).toBeNull();
    expect(reviewCommand({ key: 'k', metaKey: true }, 'none')).toBeNull();
  });
});

describe('the draft of a resolution', () => {
  const fields = reviewFields(ANSWERS);

  it('has a field per question and one for the action, starting from what the machine said', () => {
    expect(fields.map((field) => field.key)).toEqual(['intent', 'urgency', 'fraud', null]);
    expect(fields[3]!.options).toEqual(['continue', 'block', 'escalate', 'fallback']);
    expect(initialDraft(ANSWERS, 'escalate')).toEqual({ field: 0, answers: { intent: 'refund', urgency: null, fraud: false }, action: 'escalate' });
    expect(initialDraft([{ ...ANSWERS[2]!, answer: 0.5 }], 'reject').answers).toEqual({ fraud: true });
    expect(initialDraft([{ ...ANSWERS[0]!, answer: 'unknown' }], null)).toEqual({ field: 0, answers: { intent: null }, action: null });
  });

  it('takes a digit as the current field’s option and moves on, staying on the action at the end', () => {
    let draft = initialDraft(ANSWERS, 'escalate');
    draft = pickOption(draft, fields, 1)!;
    expect(draft).toMatchObject({ field: 1, answers: { intent: 'exchange' } });
    draft = pickOption(draft, fields, 1)!;
    draft = pickOption(draft, fields, 0)!;
    expect(draft).toMatchObject({ field: 3, answers: { intent: 'exchange', urgency: 'annoyed', fraud: true } });
    draft = pickOption(draft, fields, 0)!;
    expect(draft).toMatchObject({ field: 3, action: 'continue' });
    expect(pickOption(draft, fields, 4)).toBeNull();
    expect(pickOption({ ...draft, field: 2 }, fields, 2)).toBeNull();
  });

  it('moves between fields within their bounds and sets a field by click without moving', () => {
    const draft = initialDraft(ANSWERS, 'escalate');
    expect(moveField(draft, fields, -1).field).toBe(0);
    expect(moveField(moveField(draft, fields, 1), fields, 1).field).toBe(2);
    expect(moveField({ ...draft, field: 3 }, fields, 1).field).toBe(3);
    expect(setField(draft, 'urgency', 'calm')).toEqual({ ...draft, answers: { ...draft.answers, urgency: 'calm' } });
    expect(setField(draft, null, 'block')).toEqual({ ...draft, action: 'block' });
  });

  it('sends only the answers given, the action when chosen and a note when written', () => {
    const draft = initialDraft(ANSWERS, 'escalate');
    expect(resolutionBody(draft, '  ')).toEqual({ answers: { intent: 'refund', fraud: false }, action: 'escalate' });
    expect(resolutionBody({ ...draft, action: null }, ' Looks fine. ')).toEqual({ answers: { intent: 'refund', fraud: false }, note: 'Looks fine.' });
  });
});

describe('moving through the queue', () => {
  const ids = ['a', 'b', 'c'];

  it('steps within the queue, from the first when none is chosen', () => {
    expect(stepItem(ids, null, 1)).toBe('a');
    expect(stepItem(ids, 'a', 1)).toBe('b');
    expect(stepItem(ids, 'c', 1)).toBe('c');
    expect(stepItem(ids, 'a', -1)).toBe('a');
    expect(stepItem(ids, 'gone', -1)).toBe('a');
    expect(stepItem([], 'a', 1)).toBeNull();
  });

  it('goes to the next item once one leaves, or the one before at the end', () => {
    expect(afterLeaving(ids, 'a')).toBe('b');
    expect(afterLeaving(ids, 'c')).toBe('b');
    expect(afterLeaving(['a'], 'a')).toBeNull();
    expect(afterLeaving(ids, 'gone')).toBe('a');
  });
});

describe('times', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');

  it('tells overdue, within the hour and later apart, and a resolved item as done', () => {
    expect(dueTone('2026-11-28T11:59:00Z', now, false)).toBe('overdue');
    expect(dueTone('2026-11-28T13:00:00Z', now, false)).toBe('soon');
    expect(dueTone('2026-11-28T13:00:01Z', now, false)).toBe('later');
    expect(dueTone('2026-11-28T11:00:00Z', now, true)).toBe('done');
  });

  it('says spans in minutes, hours and days', () => {
    expect([30_000, 45 * 60_000, 3 * 3_600_000, 200 * 60_000, 52 * 3_600_000, 48 * 3_600_000, -90 * 60_000].map(spanText)).toEqual([
      '<1 min',
      '45 min',
      '3 h',
      '3 h 20 min',
      '2 d 4 h',
      '2 d',
      '1 h 30 min',
    ]);
  });

  it('counts a claim down to the second and says nothing once it lapsed', () => {
    expect(claimLeft('2026-11-28T12:15:00Z', now)).toBe('15:00');
    expect(claimLeft('2026-11-28T12:00:09Z', now + 500)).toBe('0:09');
    expect(claimLeft('2026-11-28T12:00:00Z', now)).toBeNull();
    expect(claimLeft(null, now)).toBeNull();
    expect(claimLeft('not a date', now)).toBeNull();
  });

  it('reads probability outcomes as yes and no', () => {
    expect([true, false, 'refund', null].map((value) => outcomeText(value, 'Yes', 'No'))).toEqual(['Yes', 'No', 'refund', '—']);
  });
});

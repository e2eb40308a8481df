import { threeWayMerge } from './merge';

const base = {
  context: 'Support',
  state: { type: 'object', fields: { message: { type: 'string' } } },
  questions: [
    { key: 'intent', kind: 'choice', instructions: 'What?', options: [{ value: 'a' }, { value: 'other' }] },
    { key: 'fraud', kind: 'probability', instructions: 'Fraud?', criterion: 'x' },
  ],
  fallbackAction: 'escalate',
};

describe('threeWayMerge', () => {
  it('keeps both sides’ edits to different fields', () => {
    const mine = { ...base, context: 'Support desk' };
    const theirs = { ...base, fallbackAction: 'continue' };
    expect(threeWayMerge(base, mine, theirs)).toEqual({ merged: { ...base, context: 'Support desk', fallbackAction: 'continue' }, conflicts: [] });
  });

  it('merges inside questions by key, and keeps a question each side added', () => {
    const mine = { ...base, questions: [{ ...base.questions[0], instructions: 'Which intent?' }, base.questions[1], { key: 'mine', kind: 'probability' }] };
    const theirs = { ...base, questions: [base.questions[0], { ...base.questions[1], criterion: 'y' }, { key: 'theirs', kind: 'probability' }] };
    const { merged, conflicts } = threeWayMerge(base, mine, theirs);
    expect(conflicts).toEqual([]);
    expect((merged as typeof base).questions.map((q) => q.key)).toEqual(['intent', 'fraud', 'mine', 'theirs']);
    expect((merged as any).questions[0].instructions).toBe('Which intent?');
    expect((merged as any).questions[1].criterion).toBe('y');
  });

  it('honours a removal on one side when the other side left the item alone', () => {
    const mine = { ...base, questions: [base.questions[0]] };
    const theirs = { ...base, context: 'Other' };
    const { merged, conflicts } = threeWayMerge(base, mine, theirs);
    expect(conflicts).toEqual([]);
    expect(merged).toEqual({ ...base, context: 'Other', questions: [base.questions[0]] });
    const noKey = { ...base } as Record<string, unknown>;
    delete noKey.fallbackAction;
    expect(threeWayMerge(base, noKey, base).merged).toEqual(noKey);
  });

  it('names each place both changed differently and keeps mine there', () => {
    const mine = { ...base, context: 'Mine', fallbackAction: 'deny' };
    const theirs = { ...base, context: 'Theirs', fallbackAction: 'deny' };
    expect(threeWayMerge(base, mine, theirs)).toEqual({ merged: mine, conflicts: ['context'] });
  });

  it('treats a list whose length both sides changed differently as one conflict', () => {
    const b = { levels: ['low', 'high'] };
    const { merged, conflicts } = threeWayMerge(b, { levels: ['low', 'mid', 'high'] }, { levels: ['low'] });
    expect(conflicts).toEqual(['levels']);
    expect(merged).toEqual({ levels: ['low', 'mid', 'high'] });
  });

  it('merges lists item by item when their length did not change', () => {
    const b = { levels: ['low', 'high'] };
    expect(threeWayMerge(b, { levels: ['LOW', 'high'] }, { levels: ['low', 'HIGH'] })).toEqual({ merged: { levels: ['LOW', 'HIGH'] }, conflicts: [] });
  });

  it('keeps one side’s reordering of questions with the other side’s edits inside them', () => {
    const mine = { ...base, questions: [base.questions[1], base.questions[0]] };
    const theirs = { ...base, questions: [{ ...base.questions[0], instructions: 'changed' }, base.questions[1]] };
    const { merged, conflicts } = threeWayMerge(base, mine, theirs);
    expect(conflicts).toEqual([]);
    expect((merged as any).questions.map((q: { key: string }) => q.key)).toEqual(['fraud', 'intent']);
    expect((merged as any).questions[1].instructions).toBe('changed');
    const swapped = threeWayMerge(base, theirs, mine).merged as any;
    expect(swapped.questions.map((q: { key: string }) => q.key)).toEqual(['fraud', 'intent']);
  });

  it('refuses to merge questions that both sides reordered differently', () => {
    const three = { questions: [{ key: 'a' }, { key: 'b' }, { key: 'c' }] };
    const mine = { questions: [{ key: 'b' }, { key: 'a' }, { key: 'c' }] };
    const theirs = { questions: [{ key: 'a' }, { key: 'c' }, { key: 'b' }] };
    expect(threeWayMerge(three, mine, theirs)).toEqual({ merged: mine, conflicts: ['questions'] });
  });
});

import { jsonDiff } from './json-diff';

describe('jsonDiff', () => {
  it('finds nothing between equal documents', () => {
    expect(jsonDiff({ a: [1, { b: 'x' }], c: null }, { a: [1, { b: 'x' }], c: null })).toEqual([]);
  });

  it('names added, removed and changed keys at their dotted paths, in key order', () => {
    expect(jsonDiff({ a: 1, b: { c: 2 }, gone: true }, { a: 2, b: { c: 2, d: 3 } })).toEqual([
      { path: 'a', kind: 'changed', before: 1, after: 2 },
      { path: 'b.d', kind: 'added', after: 3 },
      { path: 'gone', kind: 'removed', before: true },
    ]);
  });

  it('compares plain arrays by index', () => {
    expect(jsonDiff({ xs: ['a', 'b'] }, { xs: ['a', 'c', 'd'] })).toEqual([
      { path: 'xs.1', kind: 'changed', before: 'b', after: 'c' },
      { path: 'xs.2', kind: 'added', after: 'd' },
    ]);
  });

  it('matches keyed objects (questions) by key, so a reordering is no change and an insertion is one', () => {
    const before = {
      questions: [
        { key: 'a', kind: 'score' },
        { key: 'b', kind: 'choice' },
      ],
    };
    expect(
      jsonDiff(before, {
        questions: [
          { key: 'b', kind: 'choice' },
          { key: 'a', kind: 'score' },
        ],
      }),
    ).toEqual([]);
    expect(
      jsonDiff(before, {
        questions: [
          { key: 'new', kind: 'probability' },
          { key: 'a', kind: 'score' },
          { key: 'b', kind: 'score' },
        ],
      }),
    ).toEqual([
      { path: 'questions.b.kind', kind: 'changed', before: 'choice', after: 'score' },
      { path: 'questions.new', kind: 'added', after: { key: 'new', kind: 'probability' } },
    ]);
  });

  it('reports a change of type, and a document appearing from nothing, as one change at the root', () => {
    expect(jsonDiff(null, { a: 1 })).toEqual([{ path: '', kind: 'changed', before: null, after: { a: 1 } }]);
    expect(jsonDiff({ a: [1] }, { a: { 0: 1 } })).toEqual([{ path: 'a', kind: 'changed', before: [1], after: { 0: 1 } }]);
  });
});

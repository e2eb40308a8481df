import { queryTextIssues } from './query-text';

describe('queryTextIssues', () => {
  it('accepts ordinary values, repeated parameters and an empty query', () => {
    expect(queryTextIssues({ decision: 'triage', include: ['probabilities', 'x'], limit: '10' })).toEqual([]);
    expect(queryTextIssues({})).toEqual([]);
    expect(queryTextIssues(undefined)).toEqual([]);
    expect(queryTextIssues(null)).toEqual([]);
  });

  it('names every parameter whose value holds U+0000, repeated values included', () => {
    expect(queryTextIssues({ decision: 'a\u0000b', status: 'success', include: ['ok', '\u0000'] })).toEqual([
      { path: 'decision', message: 'contains U+0000' },
      { path: 'include', message: 'contains U+0000' },
    ]);
  });

  it('refuses a parameter name holding U+0000 and shows it replaced', () => {
    expect(queryTextIssues({ 'dec\u0000ision': 'triage' })).toEqual([{ path: 'dec\ufffdision', message: 'contains U+0000' }]);
  });
});

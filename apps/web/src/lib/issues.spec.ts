import { fieldId, issuesAt, issuesUnder, setIn } from './issues';

describe('setIn', () => {
  it('sets a value deep inside a copy, leaving the original alone', () => {
    const original = { questions: [{ key: 'a', options: [{ value: 'x' }] }] };
    const next = setIn(original, ['questions', 0, 'options', 0, 'value'], 'y');
    expect(next).toEqual({ questions: [{ key: 'a', options: [{ value: 'y' }] }] });
    expect(original).toEqual({ questions: [{ key: 'a', options: [{ value: 'x' }] }] });
    expect(next.questions).not.toBe(original.questions);
  });

  it('creates missing objects and arrays on the way, and removes with undefined', () => {
    expect(setIn({}, ['settings', 'timeoutMs'], 5000)).toEqual({ settings: { timeoutMs: 5000 } });
    expect(setIn({}, ['questions', 0], { key: 'a' })).toEqual({ questions: [{ key: 'a' }] });
    expect(setIn({ a: 1, b: 2 }, ['a'], undefined)).toEqual({ b: 2 });
    expect(setIn({ xs: ['a', 'b', 'c'] }, ['xs', 1], undefined)).toEqual({ xs: ['a', 'c'] });
  });
});

describe('issues by path', () => {
  const issues = [
    { path: 'questions.0.key', message: 'bad key' },
    { path: 'questions.0', message: 'bad question' },
    { path: 'questions.10.key', message: 'another' },
  ];

  it('separates exact paths from those below, without confusing 1 with 10', () => {
    expect(issuesAt(issues, 'questions.0').map((issue) => issue.message)).toEqual(['bad question']);
    expect(issuesUnder(issues, 'questions.0').map((issue) => issue.message)).toEqual(['bad key', 'bad question']);
    expect(issuesUnder(issues, 'questions.1')).toEqual([]);
  });

  it('gives each path a distinct, valid element id', () => {
    expect(fieldId('questions.0.key')).toBe('f-questions_0_key');
    expect(fieldId('')).toBe('f-');
    expect(fieldId('state.fields.a b')).toMatch(/^[A-Za-z][\w-]*$/);
  });
});

import { issuesOf, jsonOfLength, minimalSchema, normalized, options, text } from './__fixtures__/schemas';
import type { ChoiceQuestion, ProbabilityQuestion, ScoreQuestion } from './schema-types';

type Json = Record<string, unknown>;

const choice = (extra: Json = {}): Json => ({ key: 'intent', kind: 'choice', instructions: 'Pick one.', options: options(2), ...extra });
const score = (extra: Json = {}): Json => ({ key: 'urgency', kind: 'score', instructions: 'Rate it.', levels: ['low', 'high'], ...extra });
const probability = (extra: Json = {}): Json => ({ key: 'fraud', kind: 'probability', instructions: 'Judge it.', criterion: 'Is fraud', ...extra });
const withQuestions = (...questions: unknown[]) => issuesOf({ ...minimalSchema(), questions });
const only = (question: unknown) => withQuestions(question);
const normalizedQuestion = (question: Json) => normalized({ ...minimalSchema(), questions: [question] }).questions[0];

describe('validateSchema: questions', () => {
  describe('count', () => {
    const many = (count: number) => Array.from({ length: count }, (_, i) => choice({ key: `q${i}` }));

    it.each([
      [1, []],
      [64, []],
      [0, [{ path: 'questions', message: 'must have 1 to 64 questions (has 0)' }]],
      [65, [{ path: 'questions', message: 'must have 1 to 64 questions (has 65)' }]],
    ])('%i questions', (count, expected) => {
      expect(withQuestions(...many(count))).toEqual(expected);
    });

    it('must be an array of objects', () => {
      expect(issuesOf({ ...minimalSchema(), questions: {} })).toEqual([{ path: 'questions', message: 'must be an array' }]);
      expect(withQuestions('intent')).toEqual([{ path: 'questions.0', message: 'must be an object' }]);
    });
  });

  describe('key', () => {
    it.each([
      ['a', []],
      [text(48), []],
      [text(49), [{ path: 'questions.0.key', message: 'must be at most 48 characters (is 49)' }]],
      ['Intent', [{ path: 'questions.0.key', message: 'must be snake_case: a lowercase letter, then lowercase letters, digits or _' }]],
      [7, [{ path: 'questions.0.key', message: 'must be a string' }]],
    ])('%p', (key, expected) => {
      expect(only(choice({ key }))).toEqual(expected);
    });

    it('is required and unique', () => {
      expect(only({ kind: 'choice', instructions: 'x', options: options(2) })).toEqual([{ path: 'questions.0.key', message: 'is required' }]);
      expect(withQuestions(choice(), score({ key: 'intent' }))).toEqual([{ path: 'questions.1.key', message: 'duplicates "intent"' }]);
    });
  });

  describe('kind', () => {
    it('is required and known', () => {
      expect(only({ key: 'q', instructions: 'x' })).toEqual([{ path: 'questions.0.kind', message: 'is required' }]);
      expect(only({ key: 'q', kind: 'rating', instructions: 'x', levels: [] })).toEqual([
        { path: 'questions.0.kind', message: 'must be one of choice, score, probability' },
      ]);
    });

    it('decides which properties are known', () => {
      expect(only(choice({ levels: ['a', 'b'], criterion: 'c' }))).toEqual([
        { path: 'questions.0.levels', message: 'unknown property' },
        { path: 'questions.0.criterion', message: 'unknown property' },
      ]);
      expect(only(score({ options: [], threshold: 0.5 }))).toEqual([
        { path: 'questions.0.options', message: 'unknown property' },
        { path: 'questions.0.threshold', message: 'unknown property' },
      ]);
      expect(only(probability({ options: [] }))).toEqual([{ path: 'questions.0.options', message: 'unknown property' }]);
    });
  });

  describe('instructions', () => {
    it.each([
      [1, []],
      [8000, []],
      [0, [{ path: 'questions.0.instructions', message: 'must not be empty' }]],
      [8001, [{ path: 'questions.0.instructions', message: 'must be 1 to 8,000 characters (is 8,001)' }]],
    ])('text of %i characters', (length, expected) => {
      expect(only(choice({ instructions: text(length) }))).toEqual(expected);
    });

    it('counts characters, not UTF-16 units', () => {
      expect(only(choice({ instructions: text(8000, '😀') }))).toEqual([]);
      expect(only(choice({ instructions: text(8001, 'é') }))).toEqual([
        { path: 'questions.0.instructions', message: 'must be 1 to 8,000 characters (is 8,001)' },
      ]);
    });

    it.each([
      [8000, []],
      [8001, [{ path: 'questions.0.instructions', message: 'must be 1 to 8,000 characters serialized (is 8,001)' }]],
    ])('JSON of %i serialized characters', (length, expected) => {
      expect(only(choice({ instructions: jsonOfLength(length) }))).toEqual(expected);
    });

    it('may be a JSON array, but not a bare number, boolean or null', () => {
      expect(only(choice({ instructions: ['step one', 'step two'] }))).toEqual([]);
      expect(only(choice({ instructions: 42 }))).toEqual([{ path: 'questions.0.instructions', message: 'must be text or JSON (an object or an array)' }]);
      expect(only(choice({ instructions: true }))).toEqual([{ path: 'questions.0.instructions', message: 'must be text or JSON (an object or an array)' }]);
      expect(only(choice({ instructions: null }))).toEqual([{ path: 'questions.0.instructions', message: 'is required' }]);
    });

    it('is kept as written, text or JSON', () => {
      expect(normalizedQuestion(choice({ instructions: { task: 'pick' } }))?.instructions).toEqual({ task: 'pick' });
    });

    describe('backticked names', () => {
      it('accepts declared fields, dotted paths into them and decision_context', () => {
        expect(only(choice({ instructions: 'Read `message`, `message.subject` and `decision_context`.' }))).toEqual([]);
      });

      it('flags names that are not declared fields, each once', () => {
        expect(only(choice({ instructions: 'Read `amount`, then `amount` again, and `customer.name`.' }))).toEqual([
          { path: 'questions.0.instructions', message: '`amount` is not a declared state field' },
          { path: 'questions.0.instructions', message: '`customer` is not a declared state field' },
        ]);
      });

      it('looks inside JSON instructions', () => {
        expect(only(choice({ instructions: { read: ['`message`', '`plan`'] } }))).toEqual([
          { path: 'questions.0.instructions', message: '`plan` is not a declared state field' },
        ]);
      });

      it('ignores backticked text that is not a name', () => {
        expect(only(choice({ instructions: 'Watch for `caps lock`, `{"a":1}`, `URL` and `3d`.' }))).toEqual([]);
      });

      it.each([{ type: 'text' }, { type: 'list', items: 'object' }])('does not apply to a %p state', (state) => {
        expect(issuesOf({ ...minimalSchema(), state, questions: [choice({ instructions: 'Read `anything`.' })] })).toEqual([]);
      });
    });
  });

  describe('minConfidence', () => {
    it.each([0, 0.5, 1, null])('accepts %p', (minConfidence) => {
      expect(only(choice({ minConfidence }))).toEqual([]);
    });

    it.each([-0.01, 1.01, '0.5'])('refuses %p', (minConfidence) => {
      expect(only(choice({ minConfidence }))).toEqual([
        { path: 'questions.0.minConfidence', message: typeof minConfidence === 'string' ? 'must be a number' : 'must be between 0 and 1' },
      ]);
    });

    it('is null when not given', () => {
      expect(normalizedQuestion(choice())?.minConfidence).toBeNull();
      expect(normalizedQuestion(choice({ minConfidence: 0.4 }))?.minConfidence).toBe(0.4);
    });
  });

  describe('choice', () => {
    it.each([
      [2, []],
      [254, []],
      [1, [{ path: 'questions.0.options', message: 'must have 2 to 254 options, not counting "other" (has 1)' }]],
      [255, [{ path: 'questions.0.options', message: 'must have 2 to 254 options, not counting "other" (has 255)' }]],
    ])('%i options', (count, expected) => {
      expect(only(choice({ options: options(count) }))).toEqual(expected);
    });

    it('requires options as an array', () => {
      expect(only(choice({ options: undefined }))).toEqual([{ path: 'questions.0.options', message: 'is required' }]);
      expect(only(choice({ options: { a: 1 } }))).toEqual([{ path: 'questions.0.options', message: 'must be an array' }]);
    });

    it('appends other once', () => {
      const question = normalizedQuestion(choice()) as ChoiceQuestion;
      expect(question.options).toEqual([...options(2), { value: 'other', description: null }]);
      expect(normalizedQuestion(question as unknown as Json)).toEqual(question);
    });

    describe('the reserved other', () => {
      it('is refused where an author wrote it', () => {
        const message = '"other" is reserved: every choice question gets it automatically';
        expect(only(choice({ options: [{ value: 'other' }, ...options(2)] }))).toEqual([{ path: 'questions.0.options.0.value', message }]);
        expect(only(choice({ options: [...options(2), { value: 'other', description: 'Anything else' }] }))).toEqual([
          { path: 'questions.0.options.2.value', message },
        ]);
      });

      it('is accepted last with no description, as normalization writes it, and not counted', () => {
        expect(only(choice({ options: [...options(254), { value: 'other', description: null }] }))).toEqual([]);
        expect(only(choice({ options: [...options(1), { value: 'other' }] }))).toEqual([
          { path: 'questions.0.options', message: 'must have 2 to 254 options, not counting "other" (has 1)' },
        ]);
        const question = normalizedQuestion(choice({ options: [...options(2), { value: 'other' }] })) as ChoiceQuestion;
        expect(question.options.map((o) => o.value)).toEqual(['o0', 'o1', 'other']);
      });
    });

    it('checks each option', () => {
      expect(
        only(
          choice({
            options: [
              { value: 'ok', description: text(2000) },
              { value: 'long', description: text(2001) },
              { value: text(49) },
              { value: 'ok' },
              { description: 'no value' },
              'plain',
              { value: 'extra', label: 'x' },
            ],
          }),
        ),
      ).toEqual([
        { path: 'questions.0.options.1.description', message: 'must be at most 2,000 characters (is 2,001)' },
        { path: 'questions.0.options.2.value', message: 'must be at most 48 characters (is 49)' },
        { path: 'questions.0.options.3.value', message: 'duplicates "ok"' },
        { path: 'questions.0.options.4.value', message: 'is required' },
        { path: 'questions.0.options.5', message: 'must be an object' },
        { path: 'questions.0.options.6.label', message: 'unknown property' },
      ]);
    });

    it('takes JSON option descriptions, measured serialized', () => {
      expect(only(choice({ options: [{ value: 'a', description: jsonOfLength(2000) }, { value: 'b' }] }))).toEqual([]);
      expect(only(choice({ options: [{ value: 'a', description: jsonOfLength(2001) }, { value: 'b' }] }))).toEqual([
        { path: 'questions.0.options.0.description', message: 'must be at most 2,000 characters serialized (is 2,001)' },
      ]);
    });
  });

  describe('score', () => {
    const labels = (count: number) => Array.from({ length: count }, (_, i) => `level ${i}`);

    it.each([
      [2, []],
      [10, []],
      [1, [{ path: 'questions.0.levels', message: 'must have 2 to 10 levels (has 1)' }]],
      [11, [{ path: 'questions.0.levels', message: 'must have 2 to 10 levels (has 11)' }]],
    ])('%i levels', (count, expected) => {
      expect(only(score({ levels: labels(count) }))).toEqual(expected);
    });

    it('requires levels as an array', () => {
      expect(only(score({ levels: undefined }))).toEqual([{ path: 'questions.0.levels', message: 'is required' }]);
      expect(only(score({ levels: 'low,high' }))).toEqual([{ path: 'questions.0.levels', message: 'must be an array' }]);
    });

    it.each([
      [1, []],
      [2000, []],
      [0, [{ path: 'questions.0.levels.0', message: 'must not be empty' }]],
      [2001, [{ path: 'questions.0.levels.0', message: 'must be 1 to 2,000 characters (is 2,001)' }]],
    ])('text level of %i characters', (length, expected) => {
      expect(only(score({ levels: [text(length), 'other level'] }))).toEqual(expected);
    });

    it('checks labelled levels', () => {
      expect(only(score({ levels: [{ label: text(255), description: text(2000) }, { label: 'b', description: null }, { label: 'c' }] }))).toEqual([]);
      expect(only(score({ levels: [{ label: text(256) }, { label: 'b', description: text(2001) }, { description: 'no label' }, { label: '' }, 3] }))).toEqual([
        { path: 'questions.0.levels.0.label', message: 'must be 1 to 255 characters (is 256)' },
        { path: 'questions.0.levels.1.description', message: 'must be at most 2,000 characters (is 2,001)' },
        { path: 'questions.0.levels.2.label', message: 'is required' },
        { path: 'questions.0.levels.3.label', message: 'must not be empty' },
        { path: 'questions.0.levels.4', message: 'must be a text, { label, description } or { label?, rubric }' },
      ]);
    });

    it('checks rubric levels, measured serialized', () => {
      expect(only(score({ levels: [{ rubric: jsonOfLength(2000) }, { label: 'b', rubric: ['x'] }] }))).toEqual([]);
      expect(only(score({ levels: [{ rubric: jsonOfLength(2001) }, { rubric: { a: 1 }, description: 'both' }, { rubric: 5 }] }))).toEqual([
        { path: 'questions.0.levels.0.rubric', message: 'must be 1 to 2,000 characters serialized (is 2,001)' },
        { path: 'questions.0.levels.1.description', message: 'unknown property' },
        { path: 'questions.0.levels.2.rubric', message: 'must be text or JSON (an object or an array)' },
      ]);
    });

    it('labels a rubric level without a label by its 1-based position', () => {
      const question = normalizedQuestion(score({ levels: ['low', { rubric: { a: 1 } }, { label: 'top', rubric: { b: 2 } }] })) as ScoreQuestion;
      expect(question.levels).toEqual(['low', { label: '2', rubric: { a: 1 } }, { label: 'top', rubric: { b: 2 } }]);
    });

    it('normalizes labelled levels with a description, leaves text levels as text', () => {
      const question = normalizedQuestion(score({ levels: ['low', { label: 'high' }] })) as ScoreQuestion;
      expect(question.levels).toEqual(['low', { label: 'high', description: null }]);
    });

    it('requires unique labels, whatever form they take', () => {
      expect(only(score({ levels: ['low', { label: 'low' }] }))).toEqual([{ path: 'questions.0.levels.1.label', message: 'duplicates "low"' }]);
      expect(only(score({ levels: ['2', { rubric: { a: 1 } }] }))).toEqual([{ path: 'questions.0.levels.1.label', message: 'duplicates "2"' }]);
      expect(only(score({ levels: ['a', 'a'] }))).toEqual([{ path: 'questions.0.levels.1', message: 'duplicates "a"' }]);
    });
  });

  describe('probability', () => {
    it.each([
      [1, []],
      [2000, []],
      [0, [{ path: 'questions.0.criterion', message: 'must not be empty' }]],
      [2001, [{ path: 'questions.0.criterion', message: 'must be 1 to 2,000 characters (is 2,001)' }]],
    ])('criterion of %i characters', (length, expected) => {
      expect(only(probability({ criterion: text(length) }))).toEqual(expected);
    });

    it('requires a criterion, text or JSON', () => {
      expect(only(probability({ criterion: undefined }))).toEqual([{ path: 'questions.0.criterion', message: 'is required' }]);
      expect(only(probability({ criterion: { signs: ['a'] } }))).toEqual([]);
      expect(only(probability({ criterion: jsonOfLength(2001) }))).toEqual([
        { path: 'questions.0.criterion', message: 'must be 1 to 2,000 characters serialized (is 2,001)' },
      ]);
    });

    it.each([
      [0, []],
      [1, []],
      [null, []],
      [-0.1, [{ path: 'questions.0.threshold', message: 'must be between 0 and 1' }]],
      [1.1, [{ path: 'questions.0.threshold', message: 'must be between 0 and 1' }]],
      ['high', [{ path: 'questions.0.threshold', message: 'must be a number' }]],
    ])('threshold %p', (threshold, expected) => {
      expect(only(probability({ threshold }))).toEqual(expected);
    });

    it('normalizes the threshold to null when absent', () => {
      expect((normalizedQuestion(probability()) as ProbabilityQuestion).threshold).toBeNull();
      expect((normalizedQuestion(probability({ threshold: 0.8 })) as ProbabilityQuestion).threshold).toBe(0.8);
    });
  });

  it('writes normalized questions in a stable property order', () => {
    expect(Object.keys(normalizedQuestion(probability()) ?? {})).toEqual(['key', 'kind', 'instructions', 'criterion', 'threshold', 'minConfidence']);
  });
});

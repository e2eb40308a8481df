import { fullSchema, issuesOf, normalized, text } from './__fixtures__/schemas';

type Json = Record<string, unknown>;

const withComposites = (composites: unknown) => issuesOf({ ...fullSchema(), composites, policies: [] });
const composite = (extra: Json = {}): Json => ({ key: 'risk', terms: [{ question: 'fraud', weight: 1 }], ...extra });
const withTerms = (...terms: unknown[]) => withComposites([composite({ terms })]);

describe('validateSchema: composites', () => {
  it('are optional and normalize to []', () => {
    expect(withComposites(undefined)).toEqual([]);
    expect(withComposites(null)).toEqual([]);
    expect(normalized({ ...fullSchema(), composites: undefined, policies: [] }).composites).toEqual([]);
  });

  it.each([
    [20, []],
    [21, [{ path: 'composites', message: 'must have at most 20 composites (has 21)' }]],
  ])('%i composites', (count, expected) => {
    expect(withComposites(Array.from({ length: count }, (_, i) => composite({ key: `c${i}` })))).toEqual(expected);
  });

  it('checks keys: required, snake_case, unique', () => {
    expect(withComposites([composite({ key: undefined }), composite({ key: 'Risk' }), composite(), composite()])).toEqual([
      { path: 'composites.0.key', message: 'is required' },
      { path: 'composites.1.key', message: 'must be snake_case: a lowercase letter, then lowercase letters, digits or _' },
      { path: 'composites.3.key', message: 'duplicates "risk"' },
    ]);
  });

  it('may share a key with a question: they live in different result objects', () => {
    expect(withComposites([composite({ key: 'fraud' })])).toEqual([]);
  });

  it.each([
    [500, []],
    [501, [{ path: 'composites.0.description', message: 'must be at most 500 characters (is 501)' }]],
  ])('description of %i characters', (length, expected) => {
    expect(withComposites([composite({ description: text(length) })])).toEqual(expected);
  });

  it('normalizes a missing description to null', () => {
    expect(normalized({ ...fullSchema(), composites: [composite()], policies: [] }).composites).toEqual([
      { key: 'risk', description: null, terms: [{ question: 'fraud', weight: 1 }] },
    ]);
  });

  it.each([
    [1, []],
    [20, []],
    [0, [{ path: 'composites.0.terms', message: 'must have 1 to 20 terms (has 0)' }]],
    [21, [{ path: 'composites.0.terms', message: 'must have 1 to 20 terms (has 21)' }]],
  ])('%i terms', (count, expected) => {
    expect(withTerms(...Array.from({ length: count }, () => ({ question: 'fraud', weight: 1 })))).toEqual(expected);
  });

  it('requires terms', () => {
    expect(withComposites([{ key: 'risk' }])).toEqual([{ path: 'composites.0.terms', message: 'is required' }]);
    expect(withComposites([composite({ terms: {} })])).toEqual([{ path: 'composites.0.terms', message: 'must be an array' }]);
  });

  describe('weight', () => {
    it.each([-100, -0.5, 0.5, 100])('accepts %p', (weight) => {
      expect(withTerms({ question: 'fraud', weight })).toEqual([]);
    });

    it.each([
      [-101, 'must be between -100 and 100'],
      [101, 'must be between -100 and 100'],
      [0, 'must not be 0'],
      ['2', 'must be a number'],
    ])('refuses %p', (weight, message) => {
      expect(withTerms({ question: 'fraud', weight })).toEqual([{ path: 'composites.0.terms.0.weight', message }]);
    });

    it('is required', () => {
      expect(withTerms({ question: 'fraud' })).toEqual([{ path: 'composites.0.terms.0.weight', message: 'is required' }]);
    });
  });

  describe('question and option', () => {
    it('refers to an existing question', () => {
      expect(withTerms({ question: 'nope', weight: 1 }, { weight: 1 })).toEqual([
        { path: 'composites.0.terms.0.question', message: 'refers to an unknown question "nope"' },
        { path: 'composites.0.terms.1.question', message: 'is required' },
      ]);
    });

    it('takes an option on choice questions only, where it is required and must exist', () => {
      expect(withTerms({ question: 'intent', option: 'refund', weight: 1 }, { question: 'intent', option: 'other', weight: 1 })).toEqual([]);
      expect(
        withTerms(
          { question: 'intent', weight: 1 },
          { question: 'intent', option: 'cancel', weight: 1 },
          { question: 'fraud', option: 'yes', weight: 1 },
          { question: 'urgency', option: 'calm', weight: 1 },
        ),
      ).toEqual([
        { path: 'composites.0.terms.0.option', message: 'is required on terms of choice questions' },
        { path: 'composites.0.terms.1.option', message: 'is not an option of "intent"' },
        { path: 'composites.0.terms.2.option', message: 'is only allowed on terms of choice questions' },
        { path: 'composites.0.terms.3.option', message: 'is only allowed on terms of choice questions' },
      ]);
    });

    it('flags unknown term properties', () => {
      expect(withTerms({ question: 'fraud', weight: 1, scale: 2 })).toEqual([{ path: 'composites.0.terms.0.scale', message: 'unknown property' }]);
    });
  });
});

describe('validateSchema: composite terms normalization', () => {
  it('treats a null option as absent', () => {
    const schema = normalized({ ...fullSchema(), composites: [composite({ terms: [{ question: 'fraud', option: null, weight: 1 }] })], policies: [] });
    expect(schema.composites[0]?.terms).toEqual([{ question: 'fraud', weight: 1 }]);
    expect(schema.composites[0]!.terms[0]).not.toHaveProperty('option');
  });
});

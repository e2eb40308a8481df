import { fullSchema, issuesOf, minimalSchema, normalized, questionOfTokens, text, withValue } from './__fixtures__/schemas';
import { exampleState } from './state';
import { estimateTokens } from './tokens';
import { InvalidSchemaError, normalizeSchema, validateSchema } from './validate-schema';

describe('validateSchema: the whole', () => {
  it.each([null, undefined, 'schema', 42, true, [], [minimalSchema()]])('refuses %p at the root', (input) => {
    expect(issuesOf(input)).toEqual([{ path: '', message: 'must be an object' }]);
  });

  it('accepts the minimal and the documented schema', () => {
    expect(issuesOf(minimalSchema())).toEqual([]);
    expect(issuesOf(fullSchema())).toEqual([]);
  });

  it('flags unknown top-level properties', () => {
    expect(issuesOf({ ...minimalSchema(), version: 2 })).toEqual([{ path: 'version', message: 'unknown property' }]);
  });

  it('requires state, questions and fallbackAction, all reported at once', () => {
    expect(issuesOf({})).toEqual([
      { path: 'state', message: 'is required' },
      { path: 'questions', message: 'is required' },
      { path: 'fallbackAction', message: 'is required' },
    ]);
  });

  it('lists every issue, not just the first', () => {
    const schema = fullSchema();
    withValue(schema, 'questions.0.key', 'Intent');
    withValue(schema, 'questions.1.levels', ['only']);
    withValue(schema, 'composites.0.terms.0.weight', 0);
    withValue(schema, 'policies.0.action', 'approve');
    withValue(schema, 'settings.timeoutMs', 10);
    withValue(schema, 'destinations.1.url', 'not a url');
    expect(issuesOf(schema)).toEqual([
      { path: 'questions.0.key', message: 'must be snake_case: a lowercase letter, then lowercase letters, digits or _' },
      { path: 'questions.1.levels', message: 'must have 2 to 10 levels (has 1)' },
      { path: 'composites.0.terms.0.weight', message: 'must not be 0' },
      // the question keyed "Intent" is invalid, so references to "intent" cannot be resolved
      { path: 'composites.0.terms.2.question', message: 'refers to an unknown question "intent"' },
      { path: 'policies.0.action', message: 'must be one of continue, block, escalate, fallback' },
      { path: 'settings.timeoutMs', message: 'must be between 500 and 30,000' },
      { path: 'destinations.0.when.0.question', message: 'refers to an unknown question "intent"' },
      { path: 'destinations.1.url', message: 'must be an http or https URL' },
    ]);
  });

  describe('context', () => {
    it.each([
      [0, true],
      [8000, true],
      [8001, false],
    ])('%i characters valid=%p', (length, valid) => {
      const issues = issuesOf({ ...minimalSchema(), context: text(length) });
      expect(issues).toEqual(valid ? [] : [{ path: 'context', message: 'must be at most 8,000 characters (is 8,001)' }]);
    });

    it('may be null and must otherwise be text', () => {
      expect(issuesOf({ ...minimalSchema(), context: null })).toEqual([]);
      expect(issuesOf({ ...minimalSchema(), context: { a: 1 } })).toEqual([{ path: 'context', message: 'must be a string' }]);
    });
  });

  describe('fallbackAction', () => {
    it.each(['continue', 'block', 'escalate', 'fallback'])('accepts %s', (action) => {
      expect(issuesOf({ ...minimalSchema(), fallbackAction: action })).toEqual([]);
    });

    it.each(['approve', 'Continue', 1])('refuses %p', (action) => {
      expect(issuesOf({ ...minimalSchema(), fallbackAction: action })).toEqual([
        { path: 'fallbackAction', message: 'must be one of continue, block, escalate, fallback' },
      ]);
    });
  });

  describe('settings', () => {
    const withSettings = (settings: unknown) => issuesOf({ ...minimalSchema(), settings });

    it('fills every default', () => {
      expect(normalized(minimalSchema()).settings).toEqual({
        engine: null,
        model: null,
        timeoutMs: 5000,
        onEngineError: 'error',
        storeInput: false,
        storeOutput: true,
      });
      expect(normalized({ ...minimalSchema(), settings: { engine: null, timeoutMs: null } }).settings.timeoutMs).toBe(5000);
    });

    it('keeps what the author set', () => {
      const settings = { engine: 'checkpoint', model: 'm', timeoutMs: 700, onEngineError: 'fallback', storeInput: true, storeOutput: false };
      expect(normalized({ ...minimalSchema(), settings }).settings).toEqual(settings);
    });

    it.each([
      [{ engine: 'llm' }, []],
      [{ engine: 'checkpoint' }, []],
      [{ engine: 'gpt' }, [{ path: 'settings.engine', message: 'must be one of llm, checkpoint' }]],
      [{ model: text(255) }, []],
      [{ model: text(256) }, [{ path: 'settings.model', message: 'must be 1 to 255 characters (is 256)' }]],
      [{ model: '' }, [{ path: 'settings.model', message: 'must not be empty' }]],
      [{ timeoutMs: 500 }, []],
      [{ timeoutMs: 30000 }, []],
      [{ timeoutMs: 499 }, [{ path: 'settings.timeoutMs', message: 'must be between 500 and 30,000' }]],
      [{ timeoutMs: 30001 }, [{ path: 'settings.timeoutMs', message: 'must be between 500 and 30,000' }]],
      [{ timeoutMs: 1000.5 }, [{ path: 'settings.timeoutMs', message: 'must be an integer' }]],
      [{ timeoutMs: '5000' }, [{ path: 'settings.timeoutMs', message: 'must be an integer' }]],
      [{ onEngineError: 'fallback' }, []],
      [{ onEngineError: 'error' }, []],
      [{ onEngineError: 'ignore' }, [{ path: 'settings.onEngineError', message: 'must be one of fallback, error' }]],
      [{ storeInput: 'yes' }, [{ path: 'settings.storeInput', message: 'must be true or false' }]],
      [{ storeOutput: 0 }, [{ path: 'settings.storeOutput', message: 'must be true or false' }]],
      [{ retries: 2 }, [{ path: 'settings.retries', message: 'unknown property' }]],
      [{ confidenceSource: 'model' }, []],
      [{ confidenceSource: 'tokens' }, []],
      [{ confidenceSource: 'logprobs' }, [{ path: 'settings.confidenceSource', message: 'must be one of model, tokens' }]],
    ])('%p', (settings, expected) => {
      expect(withSettings(settings)).toEqual(expected);
    });

    it('must be an object', () => {
      expect(withSettings([])).toEqual([{ path: 'settings', message: 'must be an object' }]);
    });

    it('keeps confidenceSource only as tokens, so a schema without it (or with model) normalizes as before', () => {
      const base = normalized(minimalSchema()).settings;
      expect(base).not.toHaveProperty('confidenceSource');
      expect(normalized({ ...minimalSchema(), settings: { confidenceSource: 'model' } }).settings).toEqual(base);
      expect(normalized({ ...minimalSchema(), settings: { confidenceSource: 'tokens' } }).settings).toEqual({ ...base, confidenceSource: 'tokens' });
    });
  });

  describe('normalization', () => {
    it('writes out every optional part of the minimal schema', () => {
      expect(normalized(minimalSchema())).toEqual({
        state: { type: 'object', fields: { message: { type: 'string', description: null, required: true, enum: null } } },
        context: null,
        questions: [
          {
            key: 'intent',
            kind: 'choice',
            instructions: 'What does the customer want? Read `message`.',
            options: [
              { value: 'refund', description: 'Wants the money back' },
              { value: 'exchange', description: null },
              { value: 'other', description: null },
            ],
            minConfidence: null,
          },
        ],
        composites: [],
        policies: [],
        fallbackAction: 'escalate',
        settings: { engine: null, model: null, timeoutMs: 5000, onEngineError: 'error', storeInput: false, storeOutput: true },
        destinations: [],
      });
    });

    it('is idempotent', () => {
      for (const schema of [minimalSchema(), fullSchema()]) {
        const once = normalized(schema);
        expect(validateSchema(once)).toEqual({ valid: true, schema: once });
      }
    });

    it('does not share objects with the input', () => {
      const input = fullSchema();
      const schema = normalized(input);
      // fullSchema's questions are intent, then urgency, whose third level has a rubric.
      const urgency = (input.questions as { levels: { rubric?: { signals: string[] } }[] }[])[1]!;
      (urgency.levels[2]!.rubric as { signals: string[] }).signals.push('changed');
      (input.questions as { key: string }[])[0]!.key = 'changed';
      expect(schema.questions[0]?.key).toBe('intent');
      expect(schema.questions[1]).toMatchObject({ levels: ['calm', expect.anything(), { rubric: { signals: ['threats', 'caps lock'] } }] });
    });
  });

  describe('room for a state in the token budget', () => {
    // A text state's example is "example": 9 characters serialized, 3 tokens.
    const withQuestions = (...questions: Record<string, unknown>[]) => ({ ...minimalSchema(), state: { type: 'text' }, questions });

    it('accepts a question that leaves room for the example state, refuses one token more', () => {
      expect(estimateTokens(JSON.stringify(exampleState(normalized({ ...minimalSchema(), state: { type: 'text' } }))).length)).toBe(3);
      expect(issuesOf(withQuestions(questionOfTokens('big', 31997)))).toEqual([]);
      expect(issuesOf(withQuestions(questionOfTokens('big', 31997, 1)))).toEqual([
        {
          path: 'questions.0',
          message: 'is about 31,998 tokens: with the example state (about 3 tokens) it passes the budget of 32,000 tokens per question',
        },
      ]);
    });

    it('checks all questions together against 64,000 tokens', () => {
      const three = [0, 1, 2].map((i) => questionOfTokens(`q${i}`, 16000));
      expect(issuesOf(withQuestions(...three, questionOfTokens('q3', 15997)))).toEqual([]);
      expect(issuesOf(withQuestions(...three, questionOfTokens('q3', 15997, 1)))).toEqual([
        {
          path: 'questions',
          message: 'are about 63,998 tokens together: with the example state (about 3 tokens) they pass the budget of 64,000 tokens for all questions',
        },
      ]);
    });
  });
});

describe('normalizeSchema', () => {
  it('returns the normalized schema', () => {
    expect(normalizeSchema(minimalSchema())).toEqual(normalized(minimalSchema()));
  });

  it('throws the issues', () => {
    expect(() => normalizeSchema({})).toThrow(InvalidSchemaError);
    expect(() => normalizeSchema({})).toThrow('state: is required; questions: is required; fallbackAction: is required');
    try {
      normalizeSchema(null);
    } catch (error) {
      expect((error as InvalidSchemaError).issues).toEqual([{ path: '', message: 'must be an object' }]);
    }
  });
});

describe('validateSchema: keys everywhere', () => {
  // Each case puts `key` in one list of keys of the documented schema; 48 characters pass, 49 do not.
  const placements: [string, (key: string) => Record<string, unknown>, string][] = [
    ['state field', (key) => withValue(fullSchema(), `state.fields.${key}`, { type: 'string' }), 'state.fields.KEY'],
    ['question', (key) => withValue(fullSchema(), 'questions.2.key', key), 'questions.2.key'],
    ['option value', (key) => withValue(fullSchema(), 'questions.0.options.1.value', key), 'questions.0.options.1.value'],
    ['composite', (key) => withValue(fullSchema(), 'composites.0.key', key), 'composites.0.key'],
    ['destination', (key) => withValue(fullSchema(), 'destinations.1.key', key), 'destinations.1.key'],
    ['param name', (key) => withValue(fullSchema(), `destinations.0.params.${key}`, { from: 'action' }), 'destinations.0.params.KEY'],
  ];

  it.each(placements)('%s: up to 48 characters of snake_case', (_name, place, path) => {
    const withoutReferences = (schema: Record<string, unknown>) => ({
      ...schema,
      policies: [],
      composites: path.startsWith('composites') ? schema.composites : [],
    });
    const key48 = `k${text(47)}`;
    const key49 = `k${text(48)}`;
    expect(issuesOf(withoutReferences(place(key48)))).toEqual([]);
    expect(issuesOf(withoutReferences(place(key49)))).toEqual([{ path: path.replace('KEY', key49), message: 'must be at most 48 characters (is 49)' }]);
    expect(issuesOf(withoutReferences(place('Bad-Key'))).map((issue) => issue.path)).toContain(path.replace('KEY', 'Bad-Key'));
  });
});

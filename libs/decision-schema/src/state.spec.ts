import fc from 'fast-check';
import { fullSchema, minimalSchema, normalized, questionOfTokens, text } from './__fixtures__/schemas';
import type { NormalizedSchema } from './schema-types';
import { checkStateAlone, exampleState, validateState } from './state';
import { TEMPLATES } from './templates';
import { estimateTokens, questionTokens } from './tokens';

const objectSchema = normalized(fullSchema());
const schemaWithState = (state: unknown): NormalizedSchema => normalized({ ...minimalSchema(), state });
const textSchema = schemaWithState({ type: 'text' });
const stringList = schemaWithState({ type: 'list', items: 'string' });
const objectList = schemaWithState({ type: 'list', items: 'object' });
const typed = schemaWithState({
  type: 'object',
  fields: {
    message: { type: 'string', required: true },
    s: { type: 'string' },
    n: { type: 'number' },
    i: { type: 'integer' },
    b: { type: 'boolean' },
    o: { type: 'object' },
    a: { type: 'array' },
    plan: { type: 'string', enum: ['free', 'pro'] },
    constructor: { type: 'integer', required: true },
  },
});

const problem = (field: string, message: string) => ({ ok: false, field, message });

describe('validateState', () => {
  it('names `state` when there is none', () => {
    expect(validateState(objectSchema, undefined)).toEqual(problem('state', 'state is required'));
  });

  describe('object state', () => {
    const base = { message: 'hi', constructor: 1 };

    it('accepts declared fields of the right types and forwards undeclared ones', () => {
      expect(validateState(typed, { ...base, s: 's', n: -1.5, i: 3, b: false, o: {}, a: [1], plan: 'pro', extra: { any: 'thing' } })).toEqual({ ok: true });
    });

    it.each([null, [], 'text', 3, true])('must be a JSON object, not %p', (state) => {
      expect(validateState(typed, state)).toEqual(problem('state', 'state must be a JSON object'));
    });

    it.each([
      ['s', 1, 'state.s must be a string'],
      ['n', '1', 'state.n must be a number'],
      ['n', Number.NaN, 'state.n must be a number'],
      ['n', Number.POSITIVE_INFINITY, 'state.n must be a number'],
      ['i', 1.5, 'state.i must be an integer'],
      ['i', '2', 'state.i must be an integer'],
      ['b', 'true', 'state.b must be true or false'],
      ['o', [], 'state.o must be an object'],
      ['o', 'x', 'state.o must be an object'],
      ['a', {}, 'state.a must be an array'],
      ['plan', 'enterprise', 'state.plan must be one of free, pro'],
      ['plan', 1, 'state.plan must be a string'],
    ])('checks %s = %p', (field, value, message) => {
      expect(validateState(typed, { ...base, [field]: value })).toEqual(problem(`state.${field}`, message));
    });

    it('requires required fields; null counts as absent', () => {
      expect(validateState(typed, { constructor: 1 })).toEqual(problem('state.message', 'state.message is required'));
      expect(validateState(typed, { ...base, message: null })).toEqual(problem('state.message', 'state.message is required'));
      expect(validateState(typed, { ...base, message: '' })).toEqual({ ok: true });
    });

    it('accepts null for optional fields', () => {
      expect(validateState(typed, { ...base, n: null, o: null, plan: null })).toEqual({ ok: true });
    });

    describe('sub-fields', () => {
      const withAddress = schemaWithState({
        type: 'object',
        fields: {
          message: { type: 'string' },
          address: {
            type: 'object',
            fields: { street: { type: 'string', required: true }, geo: { type: 'object', fields: { lat: { type: 'number', required: true } } } },
          },
        },
      });

      it('are checked inside a given object, with their full path', () => {
        expect(validateState(withAddress, { address: { street: 'Main', geo: { lat: 1.5 }, extra: true } })).toEqual({ ok: true });
        expect(validateState(withAddress, { address: {} })).toEqual(problem('state.address.street', 'state.address.street is required'));
        expect(validateState(withAddress, { address: { street: 1 } })).toEqual(problem('state.address.street', 'state.address.street must be a string'));
        expect(validateState(withAddress, { address: { street: 'x', geo: { lat: 'n' } } })).toEqual(
          problem('state.address.geo.lat', 'state.address.geo.lat must be a number'),
        );
      });

      it('are not required when their optional object is absent', () => {
        expect(validateState(withAddress, {})).toEqual({ ok: true });
        expect(validateState(withAddress, { address: null })).toEqual({ ok: true });
      });

      it('are filled in the example state', () => {
        expect(exampleState(withAddress)).toEqual({ message: 'example', address: { street: 'example', geo: { lat: 0 } } });
        expect(validateState(withAddress, exampleState(withAddress))).toEqual({ ok: true });
      });
    });

    it('reads only own properties: a field named constructor is not found on Object.prototype', () => {
      expect(validateState(typed, { message: 'hi' })).toEqual(problem('state.constructor', 'state.constructor is required'));
    });
  });

  describe('text state', () => {
    it('is a non-empty string', () => {
      expect(validateState(textSchema, 'x')).toEqual({ ok: true });
      expect(validateState(textSchema, ' ')).toEqual({ ok: true });
      for (const state of ['', 1, null, ['x'], { text: 'x' }]) {
        expect(validateState(textSchema, state)).toEqual(problem('state', 'state must be a non-empty string'));
      }
    });
  });

  describe('list state', () => {
    it.each([
      [1, true],
      [500, true],
      [0, false],
      [501, false],
    ])('%i items valid=%p', (count, valid) => {
      const result = validateState(
        stringList,
        Array.from({ length: count }, () => 'x'),
      );
      expect(result).toEqual(valid ? { ok: true } : problem('state', `state must have 1 to 500 items (has ${count})`));
    });

    it('checks the item type', () => {
      expect(validateState(stringList, ['a', 1])).toEqual(problem('state.1', 'state.1 must be a string'));
      expect(validateState(objectList, [{}, { a: 1 }])).toEqual({ ok: true });
      expect(validateState(objectList, [{}, []])).toEqual(problem('state.1', 'state.1 must be an object'));
      expect(validateState(objectList, [null])).toEqual(problem('state.0', 'state.0 must be an object'));
      expect(validateState(objectList, 'x')).toEqual(problem('state', 'state must be an array of 1 to 500 items'));
    });
  });

  describe('size of the state alone', () => {
    // "é" is one character and two bytes: the byte limit can be reached below the token limit.
    it('allows 131,072 bytes serialized, not one more', () => {
      const atLimit = text(65535, 'é'); // quotes + 65,535 × 2 bytes = 131,072 bytes
      expect(validateState(textSchema, atLimit)).toEqual({ ok: true });
      expect(validateState(textSchema, `${atLimit}a`)).toEqual(problem('state', 'state is 131,073 bytes serialized; the limit is 131,072 (128 KB)'));
    });

    it('counts the same bytes in a browser, which has no Buffer', () => {
      const atLimit = text(65535, 'é');
      const buffer = globalThis.Buffer;
      Reflect.deleteProperty(globalThis, 'Buffer');
      try {
        expect(validateState(textSchema, atLimit)).toEqual({ ok: true });
        expect(validateState(textSchema, `${atLimit}a`)).toEqual(problem('state', 'state is 131,073 bytes serialized; the limit is 131,072 (128 KB)'));
      } finally {
        globalThis.Buffer = buffer;
      }
    });

    it('allows about 32,000 tokens, not one more', () => {
      const atLimit = text(127998); // 128,000 characters serialized
      expect(checkStateAlone(textSchema, atLimit)).toEqual({ ok: true });
      expect(checkStateAlone(textSchema, `${atLimit}a`)).toEqual(problem('state', 'state is about 32,001 tokens; the limit is 32,000'));
    });
  });

  describe('token budget with the questions', () => {
    // The text state "aaa…" of n characters serializes to n + 2.
    const stateOfTokens = (tokens: number, extra = 0) => text(tokens * 4 - 2 + extra);

    it('fits the state and the longest question in 32,000 tokens', () => {
      const schema = normalized({ ...minimalSchema(), state: { type: 'text' }, questions: [questionOfTokens('big', 20000), questionOfTokens('small', 5000)] });
      expect(questionTokens(schema)).toEqual({ longest: { key: 'big', tokens: 20000 }, total: 25000 });
      expect(validateState(schema, stateOfTokens(12000))).toEqual({ ok: true });
      expect(validateState(schema, stateOfTokens(12000, 1))).toEqual(
        problem('state', 'state (about 12,001 tokens) plus the longest question, "big" (about 20,000 tokens), is about 32,001 tokens; the limit is 32,000'),
      );
      expect(checkStateAlone(schema, stateOfTokens(12000, 1))).toEqual({ ok: true });
    });

    it('fits the state and all questions in 64,000 tokens', () => {
      const questions = Array.from({ length: 8 }, (_, i) => questionOfTokens(`q${i}`, 5000));
      const schema = normalized({ ...minimalSchema(), state: { type: 'text' }, questions });
      expect(questionTokens(schema).total).toBe(40000);
      expect(validateState(schema, stateOfTokens(24000))).toEqual({ ok: true });
      expect(validateState(schema, stateOfTokens(24000, 1))).toEqual(
        problem('state', 'state (about 24,001 tokens) plus all questions (about 40,000 tokens) is about 64,001 tokens; the limit is 64,000'),
      );
    });
  });

  it('never throws on arbitrary JSON', () => {
    const schemas = [objectSchema, typed, textSchema, stringList, objectList];
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(...schemas), (state, schema) => {
        const result = validateState(schema, state);
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });
});

describe('estimateTokens', () => {
  it.each([
    [0, 0],
    [1, 1],
    [4, 1],
    [5, 2],
    [128000, 32000],
    [128001, 32001],
  ])('%i characters are about %i tokens', (length, tokens) => {
    expect(estimateTokens(length)).toBe(tokens);
  });
});

describe('exampleState', () => {
  it('fills every declared field, enums with their first value', () => {
    expect(exampleState(typed)).toEqual({ message: 'example', s: 'example', n: 0, i: 0, b: true, o: {}, a: [], plan: 'free', constructor: 0 });
  });

  it.each([
    ['text', textSchema, 'example'],
    ['string list', stringList, ['example']],
    ['object list', objectList, [{}]],
  ])('gives a %s state', (_name, schema, example) => {
    expect(exampleState(schema)).toEqual(example);
  });

  it('is accepted by its schema, for every template too', () => {
    const schemas = [objectSchema, typed, textSchema, stringList, objectList, ...TEMPLATES.map((t) => normalized(t.schema))];
    for (const schema of schemas) expect(validateState(schema, exampleState(schema))).toEqual({ ok: true });
  });
});

import { checkAgainstSchema, type JsonSchema } from './json-schema';

const paths = (schema: JsonSchema, value: unknown, root: unknown = {}, closedObjects = false) =>
  checkAgainstSchema(schema, value, root, { closedObjects }).map((problem) => `${problem.path}: ${problem.message}`);

describe('checkAgainstSchema', () => {
  it('checks types, with integers counting as numbers and type lists', () => {
    expect(paths({ type: 'number' }, 3)).toEqual([]);
    expect(paths({ type: 'integer' }, 3.5)).toEqual([': must be integer, is number']);
    expect(paths({ type: ['string', 'null'] }, null)).toEqual([]);
    expect(paths({ type: 'object' }, [])).toEqual([': must be object, is array']);
    expect(paths({ type: 'string' }, undefined)).toEqual([': must be string, is undefined']);
  });

  it('checks enum, const, string and number bounds, patterns and date-times', () => {
    expect(paths({ enum: ['a', 1] }, 1)).toEqual([]);
    expect(paths({ enum: ['a'] }, 'b')).toEqual([': must be one of "a"']);
    expect(paths({ const: '2.0' }, '2.1')).toEqual([': must be "2.0"']);
    expect(paths({ type: 'string', minLength: 2, maxLength: 3 }, 'a')).toEqual([': must be at least 2 characters']);
    expect(paths({ type: 'string', maxLength: 1 }, '😀')).toEqual([]);
    expect(paths({ type: 'string', pattern: '^a+$' }, 'ab')).toEqual([': must match ^a+$']);
    expect(paths({ type: 'number', minimum: 0, maximum: 1 }, 1.5)).toEqual([': must be at most 1']);
    expect(paths({ type: 'number', exclusiveMinimum: 0 }, 0)).toEqual([': must be above 0']);
    expect(paths({ type: 'string', format: 'date-time' }, '2026-11-23T10:00:00.123Z')).toEqual([]);
    expect(paths({ type: 'string', format: 'date-time' }, '2026-13-45T10:00:00Z')).toEqual([': must be an RFC 3339 date-time']);
  });

  it('checks objects: required, typed properties, additionalProperties, propertyNames and maxProperties', () => {
    const schema: JsonSchema = { type: 'object', required: ['a'], properties: { a: { type: 'integer' } }, additionalProperties: { type: 'string' } };
    expect(paths(schema, { a: 1, b: 'x' })).toEqual([]);
    expect(paths(schema, { b: 2 })).toEqual(['a: is required', 'b: must be string, is integer']);
    expect(paths({ type: 'object', properties: { a: {} }, additionalProperties: false }, { a: 1, z: 1 })).toEqual(['z: is not described by the schema']);
    expect(paths({ type: 'object', propertyNames: { pattern: '^[a-z]+$' } }, { Bad: 1 })).toEqual(['Bad: must match ^[a-z]+$']);
    expect(paths({ type: 'object', maxProperties: 0 }, { a: 1 })).toEqual([': must have at most 0 properties']);
  });

  it('closes objects that list properties only when asked to', () => {
    const schema: JsonSchema = { type: 'object', properties: { a: {} } };
    expect(paths(schema, { a: 1, extra: 2 })).toEqual([]);
    expect(paths(schema, { a: 1, extra: 2 }, {}, true)).toEqual(['extra: is not described by the schema']);
    expect(paths({ type: 'object' }, { anything: 1 }, {}, true)).toEqual([]);
  });

  it('checks arrays and their items with their index in the path', () => {
    const schema: JsonSchema = { type: 'array', minItems: 1, maxItems: 2, items: { type: 'object', required: ['id'] } };
    expect(paths(schema, [{ id: 1 }])).toEqual([]);
    expect(paths(schema, [])).toEqual([': must have at least 1 items']);
    expect(paths(schema, [{ id: 1 }, {}, { id: 3 }])).toEqual([': must have at most 2 items', '1.id: is required']);
  });

  it('follows local references, including escaped names', () => {
    const root = { components: { schemas: { Id: { type: 'string' }, 'a/b': { type: 'integer' } } } };
    expect(paths({ $ref: '#/components/schemas/Id' }, 1, root)).toEqual([': must be string, is integer']);
    expect(paths({ $ref: '#/components/schemas/a~1b' }, 1, root)).toEqual([]);
    expect(() => paths({ $ref: '#/components/schemas/Missing' }, 1, root)).toThrow('unresolvable reference');
    expect(() => paths({ $ref: 'https://example.com/schema' }, 1, root)).toThrow('only local references');
  });

  it('checks allOf, anyOf, oneOf and not', () => {
    expect(paths({ allOf: [{ type: 'number' }, { minimum: 2 }] }, 1)).toEqual([': must be at least 2']);
    expect(paths({ anyOf: [{ type: 'string' }, { type: 'integer' }] }, true)).toEqual([': matches none of the allowed shapes (anyOf)']);
    expect(paths({ oneOf: [{ type: 'number' }, { type: 'integer' }] }, 1)).toEqual([': matches 2 shapes; exactly one is allowed (oneOf)']);
    expect(paths({ oneOf: [{ type: 'number' }, { type: 'string' }] }, 'x')).toEqual([]);
    expect(paths({ not: { type: 'null' } }, null)).toEqual([': matches a shape it must not match']);
  });

  it("reports the discriminated shape's own problems when a oneOf has a discriminator", () => {
    const schema: JsonSchema = {
      oneOf: [
        { type: 'object', required: ['type', 'rule'], properties: { type: { const: 'policy' }, rule: { type: 'integer' } } },
        { type: 'object', required: ['type'], properties: { type: { const: 'default' } } },
      ],
      discriminator: { propertyName: 'type' },
    };
    expect(paths(schema, { type: 'policy', rule: 0 })).toEqual([]);
    expect(paths(schema, { type: 'policy' })).toEqual(['rule: is required']);
    expect(paths(schema, { type: 'nothing' })).toEqual([': matches none of the allowed shapes (oneOf)']);
  });

  it('refuses a schema keyword it does not understand, so a document cannot outgrow the checker', () => {
    expect(() => paths({ type: 'object', patternProperties: {} } as JsonSchema, {})).toThrow('unsupported JSON Schema keyword "patternProperties"');
    expect(paths({ type: 'object', 'x-anything': 1 } as JsonSchema, {})).toEqual([]);
  });
});

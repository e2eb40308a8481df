import { issuesOf, minimalSchema, normalized, text } from './__fixtures__/schemas';

const withState = (state: unknown) => issuesOf({ ...minimalSchema(), state });
const withFields = (fields: unknown) => withState({ type: 'object', fields });
const fieldsOf = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, { type: 'string' }]));

describe('validateSchema: state', () => {
  it('requires a state object with a known type', () => {
    expect(withState(null)).toEqual([{ path: 'state', message: 'is required' }]);
    expect(withState('object')).toEqual([{ path: 'state', message: 'must be an object' }]);
    expect(withState({ type: 'json' })).toEqual([{ path: 'state.type', message: 'must be one of object, text, list' }]);
    expect(withState({})).toEqual([{ path: 'state.type', message: 'must be one of object, text, list' }]);
  });

  describe('text', () => {
    it('has nothing but its type', () => {
      expect(withState({ type: 'text' })).toEqual([]);
      expect(withState({ type: 'text', fields: {}, items: 'string', max: 3 })).toEqual([
        { path: 'state.max', message: 'unknown property' },
        { path: 'state.items', message: 'unknown property' },
        { path: 'state.fields', message: 'unknown property' },
      ]);
    });
  });

  describe('list', () => {
    it.each(['string', 'object'])('accepts items %s', (items) => {
      expect(withState({ type: 'list', items })).toEqual([]);
      expect(normalized({ ...minimalSchema(), state: { type: 'list', items } }).state).toEqual({ type: 'list', items });
    });

    it('requires known items', () => {
      expect(withState({ type: 'list' })).toEqual([{ path: 'state.items', message: 'is required' }]);
      expect(withState({ type: 'list', items: 'number' })).toEqual([{ path: 'state.items', message: 'must be one of string, object' }]);
      expect(withState({ type: 'list', items: 'string', fields: {} })).toEqual([{ path: 'state.fields', message: 'unknown property' }]);
    });
  });

  describe('object', () => {
    it('requires fields as an object', () => {
      expect(withState({ type: 'object' })).toEqual([{ path: 'state.fields', message: 'is required' }]);
      expect(withFields([])).toEqual([{ path: 'state.fields', message: 'must be an object' }]);
      expect(withState({ type: 'object', fields: { message: { type: 'string' } }, items: 'string' })).toEqual([
        { path: 'state.items', message: 'unknown property' },
      ]);
    });

    it('accepts no fields at all', () => {
      const schema = minimalSchema();
      // minimalSchema has one question.
      (schema.questions as { instructions: string }[])[0]!.instructions = 'What does the customer want?';
      expect(issuesOf({ ...schema, state: { type: 'object', fields: {} } })).toEqual([]);
    });

    it.each([
      [50, []],
      [51, [{ path: 'state.fields', message: 'must have at most 50 fields (has 51)' }]],
    ])('%i fields', (count, expected) => {
      expect(withFields({ message: { type: 'string' }, ...fieldsOf(count - 1) })).toEqual(expected);
    });

    it.each([
      ['a', true],
      ['a'.repeat(48), true],
      ['snake_case_2', true],
      ['a'.repeat(49), false],
      ['Amount', false],
      ['2fa', false],
      ['_private', false],
      ['with-dash', false],
      ['with space', false],
      ['', false],
      ['ação', false],
    ])('field name %p valid=%p', (name, valid) => {
      const issues = withFields({ message: { type: 'string' }, [name]: { type: 'string' } });
      expect(issues.map((issue) => issue.path)).toEqual(valid ? [] : [`state.fields.${name}`]);
    });

    it('reserves decision_context, the key the context travels under', () => {
      expect(withFields({ message: { type: 'string' }, decision_context: { type: 'string' } })).toEqual([
        { path: 'state.fields.decision_context', message: '"decision_context" is reserved for the decision\'s context' },
      ]);
    });

    it.each(['string', 'number', 'integer', 'boolean', 'object', 'array'])('accepts field type %s', (type) => {
      expect(withFields({ message: { type: 'string' }, other_field: { type } })).toEqual([]);
    });

    it('checks each field', () => {
      expect(
        withFields({
          message: { type: 'string' },
          a: { type: 'date' },
          b: {},
          c: 'string',
          d: { type: 'string', description: text(256) },
          e: { type: 'string', required: 'yes' },
          f: { type: 'string', format: 'email' },
        }),
      ).toEqual([
        { path: 'state.fields.a.type', message: 'must be one of string, number, integer, boolean, object, array' },
        { path: 'state.fields.b.type', message: 'is required' },
        { path: 'state.fields.c', message: 'must be an object' },
        { path: 'state.fields.d.description', message: 'must be at most 255 characters (is 256)' },
        { path: 'state.fields.e.required', message: 'must be true or false' },
        { path: 'state.fields.f.format', message: 'unknown property' },
      ]);
    });

    it('takes a description of up to 255 characters', () => {
      expect(withFields({ message: { type: 'string', description: text(255) } })).toEqual([]);
      expect(withFields({ message: { type: 'string', description: null } })).toEqual([]);
    });

    describe('enum', () => {
      it('is for strings only', () => {
        expect(withFields({ message: { type: 'string', enum: ['a', 'b'] } })).toEqual([]);
        expect(withFields({ message: { type: 'string' }, n: { type: 'number', enum: ['1'] } })).toEqual([
          { path: 'state.fields.n.enum', message: 'is only allowed on string fields' },
        ]);
      });

      it('is a non-empty array of distinct strings', () => {
        expect(withFields({ message: { type: 'string', enum: [] } })).toEqual([
          { path: 'state.fields.message.enum', message: 'must have at least 1 value (has 0)' },
        ]);
        expect(withFields({ message: { type: 'string', enum: 'a' } })).toEqual([{ path: 'state.fields.message.enum', message: 'must be an array' }]);
        expect(withFields({ message: { type: 'string', enum: ['a', 1, 'a'] } })).toEqual([
          { path: 'state.fields.message.enum.1', message: 'must be a string' },
          { path: 'state.fields.message.enum.2', message: 'duplicates "a"' },
        ]);
      });
    });

    it('normalizes every field', () => {
      const schema = normalized({
        ...minimalSchema(),
        state: { type: 'object', fields: { message: { type: 'string', required: true, enum: ['x'] }, amount: { type: 'number', description: 'd' } } },
      });
      expect(schema.state).toEqual({
        type: 'object',
        fields: {
          message: { type: 'string', description: null, required: true, enum: ['x'] },
          amount: { type: 'number', description: 'd', required: false, enum: null },
        },
      });
    });

    describe('sub-fields', () => {
      const nested = (depth: number): Record<string, unknown> => (depth === 0 ? { type: 'string' } : { type: 'object', fields: { inner: nested(depth - 1) } });

      it("are declared on object fields, checked like the state's own, and normalized", () => {
        const address = { type: 'object', fields: { street: { type: 'string', required: true }, zip: { type: 'integer' } } };
        expect(withFields({ message: { type: 'string' }, address })).toEqual([]);
        expect(normalized({ ...minimalSchema(), state: { type: 'object', fields: { message: { type: 'string' }, address } } }).state).toEqual({
          type: 'object',
          fields: {
            message: { type: 'string', description: null, required: false, enum: null },
            address: {
              type: 'object',
              description: null,
              required: false,
              enum: null,
              fields: {
                street: { type: 'string', description: null, required: true, enum: null },
                zip: { type: 'integer', description: null, required: false, enum: null },
              },
            },
          },
        });
      });

      it('may be empty', () => {
        expect(withFields({ message: { type: 'string' }, address: { type: 'object', fields: {} } })).toEqual([]);
      });

      it('are only for object fields', () => {
        expect(withFields({ message: { type: 'string', fields: {} } })).toEqual([
          { path: 'state.fields.message.fields', message: 'is only allowed on object fields' },
        ]);
      });

      it('have the same checks as fields: keys, types, enums, limits', () => {
        expect(
          withFields({
            message: { type: 'string' },
            address: { type: 'object', fields: { 'Bad Key': { type: 'string' }, zip: { type: 'date' }, kind: { type: 'number', enum: ['a'] } } },
          }),
        ).toEqual([
          { path: 'state.fields.address.fields.Bad Key', message: expect.stringContaining('snake_case') },
          { path: 'state.fields.address.fields.zip.type', message: 'must be one of string, number, integer, boolean, object, array' },
          { path: 'state.fields.address.fields.kind.enum', message: 'is only allowed on string fields' },
        ]);
        expect(withFields({ message: { type: 'string' }, address: { type: 'object', fields: fieldsOf(51) } })).toEqual([
          { path: 'state.fields.address.fields', message: expect.stringContaining('50') },
        ]);
      });

      it('nest three levels deep at most; decision_context is reserved at the top only', () => {
        expect(withFields({ message: { type: 'string' }, a: nested(2) })).toEqual([]);
        expect(withFields({ message: { type: 'string' }, a: nested(3) })).toEqual([
          { path: 'state.fields.a.fields.inner.fields.inner.fields', message: 'state fields nest at most 3 levels deep' },
        ]);
        expect(withFields({ message: { type: 'string' }, a: { type: 'object', fields: { decision_context: { type: 'string' } } } })).toEqual([]);
      });
    });

    it('keeps a field named like an Object.prototype member as an ordinary field', () => {
      const schema = normalized({ ...minimalSchema(), state: { type: 'object', fields: { message: { type: 'string' }, constructor: { type: 'integer' } } } });
      expect(Object.keys((schema.state as { fields: object }).fields)).toEqual(['message', 'constructor']);
    });
  });
});

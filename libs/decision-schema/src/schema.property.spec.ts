import fc from 'fast-check';
import { fullSchema, minimalSchema } from './__fixtures__/schemas';
import { evaluate } from './evaluate';
import { outcomesOf } from './outcomes';
import { exampleState, validateState } from './state';
import { TEMPLATES } from './templates';
import { validateSchema, type ValidationResult } from './validate-schema';

type Segment = string | number;

const SOURCES: unknown[] = [minimalSchema(), fullSchema(), ...TEMPLATES.map((template) => template.schema)];

/** Values that sit on the edges the validators care about. */
const EDGE_VALUES = ['', 'other', 'threshold', 'state.x', 'x'.repeat(300), 0, -1, 1.5, 101, null, true, [], {}, ['a', 'b'], { label: 'l' }];

function pathsOf(value: unknown, prefix: Segment[] = []): Segment[][] {
  if (typeof value !== 'object' || value === null) return [prefix];
  const children = Array.isArray(value) ? value.map((item, i) => [i, item] as const) : Object.entries(value);
  return [prefix, ...children.flatMap(([key, child]) => pathsOf(child, [...prefix, key]))];
}

type Mutation = { at: number; op: 'replace' | 'delete' | 'add' | 'duplicate'; value: unknown; name: string };

/** Applies one mutation to a deep copy, at the path chosen by `at` among all paths of the value. */
function mutate(source: unknown, { at, op, value, name }: Mutation): unknown {
  const root = structuredClone(source);
  const paths = pathsOf(root).filter((path) => path.length > 0);
  // A schema object always has properties, so there are paths and `at % length` picks one; each has a last key.
  const path = paths[at % paths.length]!;
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<Segment, unknown>)[key], root) as Record<Segment, unknown>;
  const key = path[path.length - 1]!;
  const target = parent[key];
  if (op === 'replace') parent[key] = value;
  else if (op === 'delete' && Array.isArray(parent)) parent.splice(key as number, 1);
  else if (op === 'delete') delete parent[key];
  else if (op === 'add' && typeof target === 'object' && target !== null) {
    if (Array.isArray(target)) target.push(value);
    else (target as Record<string, unknown>)[name] = value;
  } else if (op === 'duplicate' && Array.isArray(parent)) parent.push(structuredClone(target));
  return root;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace', 'delete', 'add', 'duplicate'),
  value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...EDGE_VALUES)),
  name: fc.oneof(fc.constantFrom('key', 'options', 'label', 'rubric', 'option', 'and', 'when', 'params', 'value'), fc.string()),
});

const mutatedSchema = fc
  .tuple(fc.constantFrom(...SOURCES), fc.array(mutation, { minLength: 1, maxLength: 3 }))
  .map(([source, mutations]) => mutations.reduce(mutate, source));

function expectWellFormed(result: ValidationResult): void {
  if (result.valid) return;
  expect(result.issues.length).toBeGreaterThan(0);
  for (const issue of result.issues) {
    expect(typeof issue.path).toBe('string');
    expect(typeof issue.message).toBe('string');
  }
}

function expectIdempotent(result: ValidationResult): void {
  if (!result.valid) return;
  expect(validateSchema(result.schema)).toEqual(result);
  expect(validateSchema(JSON.parse(JSON.stringify(result.schema)))).toEqual(result);
}

describe('validateSchema properties', () => {
  it('never throws on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (input) => expectWellFormed(validateSchema(input))),
      { numRuns: 400 },
    );
  });

  it('never throws on arbitrary JavaScript values', () => {
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
    });
    fc.assert(
      fc.property(anything, (input) => expectWellFormed(validateSchema(input))),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary values inside a valid schema', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withNullPrototype: true, withSparseArray: true }), fc.nat(), (value, at) => {
        const input = mutate(fullSchema(), { at, op: 'replace', value, name: '' });
        expectWellFormed(validateSchema(input));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on mutated valid schemas, and normalizes the valid ones idempotently', () => {
    let validCount = 0;
    fc.assert(
      fc.property(mutatedSchema, (input) => {
        const result = validateSchema(input);
        expectWellFormed(result);
        expectIdempotent(result);
        if (result.valid) validCount++;
      }),
      { numRuns: 600 },
    );
    // the mutations must leave enough valid schemas for idempotency to be exercised
    expect(validCount).toBeGreaterThan(50);
  });

  it('normalizes every source idempotently', () => {
    for (const source of SOURCES) {
      const result = validateSchema(source);
      expect(result.valid).toBe(true);
      expectIdempotent(result);
    }
  });

  it('evaluates any valid schema on any distributions over its outcomes, and accepts its example state', () => {
    fc.assert(
      fc.property(mutatedSchema, fc.infiniteStream(fc.double({ min: 0.001, max: 1, noNaN: true })), (input, numbers) => {
        const result = validateSchema(input);
        if (!result.valid) return;
        const schema = result.schema;
        expect(validateState(schema, exampleState(schema))).toEqual({ ok: true });
        const iterator = numbers[Symbol.iterator]();
        const distributions = Object.fromEntries(
          schema.questions.map((question) => [question.key, Object.fromEntries(outcomesOf(question).map((o) => [o, iterator.next().value as number]))]),
        );
        const evaluation = evaluate(schema, distributions);
        for (const value of Object.values(evaluation.confidence)) {
          expect(value).toBeGreaterThanOrEqual(0);
          expect(value).toBeLessThanOrEqual(1);
        }
        for (const value of Object.values(evaluation.composites ?? {})) {
          expect(value).toBeGreaterThanOrEqual(-1 - 1e-12);
          expect(value).toBeLessThanOrEqual(1 + 1e-12);
        }
        expect(['continue', 'block', 'escalate', 'fallback']).toContain(evaluation.action);
      }),
      { numRuns: 200 },
    );
  });
});

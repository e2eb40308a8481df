// The subset of JSON Schema 2020-12 that the OpenAPI document uses, and a checker for it. The checker lets
// tests hold real responses against the published document without a schema compiler; it understands exactly
// the keywords below and refuses a schema that uses any other, so a document cannot silently outgrow it.

export type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

export interface JsonSchema {
  $ref?: string;
  type?: JsonType | JsonType[];
  title?: string;
  description?: string;
  enum?: readonly unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  maxProperties?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  not?: JsonSchema;
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  default?: unknown;
  examples?: unknown[];
  deprecated?: boolean;
  readOnly?: boolean;
  contentMediaType?: string;
}

const KNOWN = new Set<string>([
  '$ref',
  'type',
  'title',
  'description',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'maxProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'discriminator',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'contentMediaType',
]);

export interface SchemaProblem {
  /** JSON-pointer-like dotted path into the value (`data.0.metrics`); empty for the value itself. */
  path: string;
  message: string;
}

export interface CheckOptions {
  /**
   * Treat an object schema that lists `properties` and says nothing about `additionalProperties` as closed.
   * The document leaves objects open (clients must ignore new fields), but a test can ask whether every
   * field a real response carries is described.
   */
  closedObjects?: boolean;
}

/** Resolves `#/components/schemas/Name`-style references inside `root`. */
export function resolveRef(root: unknown, ref: string): JsonSchema {
  if (!ref.startsWith('#/')) throw new Error(`only local references are supported: ${ref}`);
  let node: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) throw new Error(`unresolvable reference ${ref}`);
    node = (node as Record<string, unknown>)[key];
  }
  return node as JsonSchema;
}

/** Every problem of `value` against `schema`; `root` holds the targets of `$ref`s (the OpenAPI document). */
export function checkAgainstSchema(schema: JsonSchema, value: unknown, root: unknown = {}, options: CheckOptions = {}): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  check(schema, value, '', { root, options, problems });
  return problems;
}

interface Context {
  root: unknown;
  options: CheckOptions;
  problems: SchemaProblem[];
}

function typeOf(value: unknown): JsonType | 'undefined' | 'other' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    case 'undefined':
      return 'undefined';
    default:
      return 'other';
  }
}

function hasType(value: unknown, type: JsonType): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function join(path: string, key: string | number): string {
  return path === '' ? String(key) : `${path}.${key}`;
}

function check(schema: JsonSchema, value: unknown, path: string, context: Context): void {
  const problem = (message: string) => context.problems.push({ path, message });
  for (const keyword of Object.keys(schema)) {
    if (!KNOWN.has(keyword) && !keyword.startsWith('x-')) throw new Error(`unsupported JSON Schema keyword "${keyword}" at ${path || '(root)'}`);
  }
  if (schema.$ref !== undefined) check(resolveRef(context.root, schema.$ref), value, path, context);

  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => hasType(value, type))) {
      problem(`must be ${types.join(' or ')}, is ${typeOf(value)}`);
      return;
    }
  }
  if (schema.enum !== undefined && !schema.enum.some((option) => sameJson(option, value)))
    problem(`must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  if (schema.const !== undefined && !sameJson(schema.const, value)) problem(`must be ${JSON.stringify(schema.const)}`);

  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) problem(`must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && length > schema.maxLength) problem(`must be at most ${schema.maxLength} characters`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) problem(`must match ${schema.pattern}`);
    if (schema.format === 'date-time' && (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) || Number.isNaN(Date.parse(value)))) {
      problem('must be an RFC 3339 date-time');
    }
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problem(`must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problem(`must be at most ${schema.maximum}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) problem(`must be above ${schema.exclusiveMinimum}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) problem(`must have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) problem(`must have at most ${schema.maxItems} items`);
    if (schema.items !== undefined) value.forEach((item, i) => check(schema.items!, item, join(path, i), context));
  }
  if (typeOf(value) === 'object') checkObject(schema, value as Record<string, unknown>, path, context);

  if (schema.allOf) for (const part of schema.allOf) check(part, value, path, context);
  if (schema.anyOf && !schema.anyOf.some((part) => quiet(part, value, path, context))) problem('matches none of the allowed shapes (anyOf)');
  if (schema.oneOf) {
    const matching = schema.oneOf.filter((part) => quiet(part, value, path, context)).length;
    if (matching !== 1) {
      // The nearest shape's own problems say more than "no match"; with a discriminator that shape is known.
      const chosen = discriminated(schema, value, context);
      if (matching === 0 && chosen) check(chosen, value, path, context);
      else problem(matching === 0 ? 'matches none of the allowed shapes (oneOf)' : `matches ${matching} shapes; exactly one is allowed (oneOf)`);
    }
  }
  if (schema.not && quiet(schema.not, value, path, context)) problem('matches a shape it must not match');
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, path: string, context: Context): void {
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) context.problems.push({ path: join(path, name), message: 'is required' });
  }
  if (schema.maxProperties !== undefined && Object.keys(value).length > schema.maxProperties) {
    context.problems.push({ path, message: `must have at most ${schema.maxProperties} properties` });
  }
  const closed =
    schema.additionalProperties === false ||
    (schema.additionalProperties === undefined && context.options.closedObjects === true && schema.properties !== undefined);
  for (const [name, item] of Object.entries(value)) {
    if (schema.propertyNames) check(schema.propertyNames, name, join(path, name), context);
    const described = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (described !== undefined) check(described, item, join(path, name), context);
    else if (typeof schema.additionalProperties === 'object') check(schema.additionalProperties, item, join(path, name), context);
    else if (closed) context.problems.push({ path: join(path, name), message: 'is not described by the schema' });
  }
}

function quiet(schema: JsonSchema, value: unknown, path: string, context: Context): boolean {
  const problems: SchemaProblem[] = [];
  check(schema, value, path, { ...context, problems });
  return problems.length === 0;
}

function discriminated(schema: JsonSchema, value: unknown, context: Context): JsonSchema | null {
  const property = schema.discriminator?.propertyName;
  if (!property || typeOf(value) !== 'object') return null;
  const tag = (value as Record<string, unknown>)[property];
  const mapped = typeof tag === 'string' ? schema.discriminator?.mapping?.[tag] : undefined;
  if (mapped) return resolveRef(context.root, mapped);
  return (
    schema.oneOf?.find((part) => {
      const target = part.$ref ? resolveRef(context.root, part.$ref) : part;
      const allowed = target.properties?.[property];
      return allowed !== undefined && (sameJson(allowed.const, tag) || (allowed.enum ?? []).some((option) => sameJson(option, tag)));
    }) ?? null
  );
}

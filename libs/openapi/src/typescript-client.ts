// A TypeScript client generated from an OpenAPI document: one type per component schema and one method per
// operation. It is what a client generator makes of our documents, small enough to read, and it proves that the
// per-decision document types a decision's state and answers (a program that sends a wrong state or reads an
// answer the decision does not have does not compile).
import type { OpenApiDocument } from './document';
import { resolveRef, type JsonSchema } from './json-schema';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const propertyName = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
const typeName = (ref: string) =>
  ref
    .split('/')
    .pop()!
    .replace(/[^A-Za-z0-9_$]/g, '_');

/** The TypeScript type of a JSON Schema, references written as the names of their components. */
export function typeOf(schema: JsonSchema): string {
  if (schema.$ref !== undefined) return typeName(schema.$ref);
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum !== undefined) return schema.enum.map((value) => JSON.stringify(value)).join(' | ') || 'never';
  if (schema.allOf) return schema.allOf.map((part) => `(${typeOf(part)})`).join(' & ');
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map((part) => `(${typeOf(part)})`).join(' | ');
  if (schema.type === undefined) return 'unknown';
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.map((type) => typeOfType(type, schema)).join(' | ');
}

function typeOfType(type: NonNullable<JsonSchema['type']>, schema: JsonSchema): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return schema.items ? `Array<${typeOf(schema.items)}>` : 'unknown[]';
    case 'object':
      return objectType(schema);
    default:
      return 'unknown';
  }
}

function objectType(schema: JsonSchema): string {
  if (schema.maxProperties === 0) return 'Record<string, never>';
  const required = new Set(schema.required ?? []);
  const members = Object.entries(schema.properties ?? {}).map(
    ([name, property]) => `${propertyName(name)}${required.has(name) ? '' : '?'}: ${typeOf(property)};`,
  );
  const extra = schema.additionalProperties;
  if (typeof extra === 'object') members.push(`[key: string]: ${members.length > 0 ? 'unknown' : typeOf(extra)};`);
  else if (extra === true || (extra === undefined && members.length === 0)) members.push('[key: string]: unknown;');
  return `{ ${members.join(' ')} }`;
}

interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: JsonSchema;
}

function parameterOf(document: OpenApiDocument, parameter: ParameterObject | { $ref: string }): ParameterObject {
  return ('$ref' in parameter ? resolveRef(document, parameter.$ref) : parameter) as unknown as ParameterObject;
}

/** The module text: `export type`s for every component schema and `createClient(options)`. */
export function typeScriptClient(document: OpenApiDocument): string {
  const lines: string[] = [`// Generated from "${String(document.info.title)}" (${String(document.info.version)}).`, ''];
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    if (schema.description) lines.push(`/** ${schema.description.replace(/\*\//g, '* /')} */`);
    lines.push(`export type ${typeName(name)} = ${typeOf(schema)};`);
  }
  lines.push(
    '',
    'export class ApiError extends Error {',
    '  constructor(readonly status: number, readonly body: unknown) {',
    '    super(`HTTP ${status}`);',
    '  }',
    '}',
    '',
    'export interface ClientOptions {',
    '  baseUrl?: string;',
    "  /** The bearer credential: an API key, or a secret URL's whsec_ secret. */",
    '  token?: string;',
    '}',
    '',
    'export function createClient(options: ClientOptions = {}) {',
    `  const baseUrl = options.baseUrl ?? ${JSON.stringify(document.servers[0]?.url ?? '')};`,
    '  async function request(method: string, path: string, query: Record<string, unknown> | undefined, body: unknown, headers: Record<string, string> | undefined): Promise<unknown> {',
    '    const search = new URLSearchParams();',
    '    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(name, String(value));',
    "    const url = `${baseUrl}${path}${search.toString() ? `?${search}` : ''}`;",
    "    const allHeaders: Record<string, string> = { accept: 'application/json', ...(headers ?? {}) };",
    '    if (options.token) allHeaders.authorization = `Bearer ${options.token}`;',
    "    if (body !== undefined) allHeaders['content-type'] = 'application/json';",
    '    const response = await fetch(url, { method, headers: allHeaders, body: body === undefined ? undefined : JSON.stringify(body) });',
    '    const text = await response.text();',
    '    const parsed: unknown = text ? JSON.parse(text) : undefined;',
    '    if (!response.ok) throw new ApiError(response.status, parsed);',
    '    return parsed;',
    '  }',
    '  return {',
  );
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      if (!operation.operationId) continue;
      const parameters: ParameterObject[] = (operation.parameters ?? []).map((parameter: ParameterObject | { $ref: string }) =>
        parameterOf(document, parameter),
      );
      const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
      const queryParameters = parameters.filter((parameter) => parameter.in === 'query');
      const bodySchema: JsonSchema | undefined = operation.requestBody?.content?.['application/json']?.schema;
      const success = Object.entries<any>(operation.responses).find(([status]) => /^2/.test(status));
      const responseSchema: JsonSchema | undefined = success?.[1]?.content?.['application/json']?.schema;
      const args: string[] = [];
      if (pathParameters.length > 0) args.push(`path: { ${pathParameters.map((p) => `${propertyName(p.name)}: ${typeOf(p.schema)};`).join(' ')} }`);
      if (queryParameters.length > 0) args.push(`query?: { ${queryParameters.map((p) => `${propertyName(p.name)}?: ${typeOf(p.schema)};`).join(' ')} }`);
      if (bodySchema) args.push(`body: ${typeOf(bodySchema)}`);
      args.push('headers?: Record<string, string>');
      const pathExpression = `\`${path.replace(/\{(\w+)\}/g, (_m, name: string) => `\${encodeURIComponent(String(args.path[${JSON.stringify(name)}]))}`)}\``;
      const argsOptional = pathParameters.length === 0 && !bodySchema;
      lines.push(
        `    /** ${String(operation.summary ?? '').replace(/\*\//g, '* /')} */`,
        `    async ${operation.operationId}(args${argsOptional ? '?' : ''}: { ${args.join('; ')} }): Promise<${responseSchema ? typeOf(responseSchema) : 'void'}> {`,
        `      return (await request(${JSON.stringify(method.toUpperCase())}, ${pathExpression.includes('args.path') ? pathExpression : JSON.stringify(path)}, ${queryParameters.length > 0 ? 'args?.query' : 'undefined'}, ${bodySchema ? 'args.body' : 'undefined'}, args?.headers)) as ${responseSchema ? typeOf(responseSchema) : 'void'};`,
        '    },',
      );
    }
  }
  lines.push('  };', '}', '');
  return lines.join('\n');
}

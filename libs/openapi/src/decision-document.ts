// The document narrowed to one decision: its run, contract and secret-URL operations and its event, with the
// state typed from the active version's state schema and the answers typed from its questions.
import { limits, PROBABILITY_OUTCOMES, type DecisionContract, type StateField, type StateSchema } from '@ds/decision-schema';
import { GENERIC_ANSWERS, ref, runRequest, runResponse, type AnswerShapes } from './components';
import { openApiDocument, type DocumentOptions, type OpenApiDocument } from './document';
import type { JsonSchema, JsonType } from './json-schema';

/** The operations kept, by path template, with the decision's slug written into the path. */
const KEPT: Array<{ path: string; methods: string[] }> = [
  { path: '/v1/decisions/{slug}', methods: ['post', 'get'] },
  { path: '/v1/hooks/{token}', methods: ['post'] },
];

export function stateJsonSchema(state: StateSchema): JsonSchema {
  switch (state.type) {
    case 'text':
      return { type: 'string', minLength: 1, description: 'A text state.' };
    case 'list':
      return {
        type: 'array',
        minItems: limits.LIST_ITEMS_MIN,
        maxItems: limits.LIST_ITEMS_MAX,
        items: state.items === 'string' ? { type: 'string' } : { type: 'object' },
        description: 'A list state.',
      };
    case 'object': {
      const properties = Object.fromEntries(Object.entries(state.fields).map(([name, field]) => [name, fieldSchema(field)]));
      const required = Object.entries(state.fields)
        .filter(([, field]) => field.required)
        .map(([name]) => name);
      // Undeclared fields are accepted and forwarded to the engine.
      return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: true };
    }
  }
}

function fieldSchema(field: StateField): JsonSchema {
  // An optional field may be sent as null: it counts as absent.
  const type: JsonType | JsonType[] = field.required ? field.type : [field.type, 'null'];
  const schema: JsonSchema = { type };
  if (field.description) schema.description = field.description;
  if (field.enum) schema.enum = field.required ? [...field.enum] : [...field.enum, null];
  if (field.fields) {
    const inner = Object.entries(field.fields);
    schema.properties = Object.fromEntries(inner.map(([name, innerField]) => [name, fieldSchema(innerField)]));
    const required = inner.filter(([, innerField]) => innerField.required).map(([name]) => name);
    if (required.length > 0) schema.required = required;
    schema.additionalProperties = true;
  }
  return schema;
}

/** Either every key with its typed value, or empty (after an engine-error fallback). */
function keyedOrEmpty(title: string, properties: Record<string, JsonSchema>, description: string): JsonSchema {
  const keys = Object.keys(properties);
  if (keys.length === 0) return { type: 'object', maxProperties: 0, description };
  return {
    description,
    anyOf: [
      { title, type: 'object', required: keys, properties, additionalProperties: false },
      { type: 'object', maxProperties: 0, description: 'After an engine-error fallback.' },
    ],
  };
}

/** The keyed parts of a run response typed for one decision, and the named schemas they refer to. */
export function answerShapes(contract: DecisionContract): { shapes: AnswerShapes; schemas: Record<string, JsonSchema> } {
  const result: Record<string, JsonSchema> = {};
  const confidence: Record<string, JsonSchema> = {};
  const scores: Record<string, JsonSchema> = {};
  const probabilities: Record<string, JsonSchema> = {};
  const distribution = (outcomes: string[]): JsonSchema => ({
    type: 'object',
    required: outcomes,
    properties: Object.fromEntries(outcomes.map((outcome) => [outcome, { type: 'number', minimum: 0, maximum: 1 }])),
    additionalProperties: false,
  });
  for (const question of contract.questions) {
    confidence[question.key] = { type: 'number', minimum: 0, maximum: 1 };
    switch (question.kind) {
      case 'choice': {
        const values = (question.options ?? []).map((option) => option.value);
        result[question.key] = { enum: values, description: 'The chosen option.' };
        probabilities[question.key] = distribution(values);
        break;
      }
      case 'score': {
        const labels = (question.levels ?? []).map((level) => level.label);
        result[question.key] = { enum: labels, description: 'The label of the most likely level.' };
        scores[question.key] = { type: 'number', minimum: 1, maximum: labels.length, description: 'Weighted level, counted from 1.' };
        probabilities[question.key] = distribution(labels);
        break;
      }
      case 'probability':
        result[question.key] = { type: 'number', minimum: 0, maximum: 1, description: 'Probability of yes.' };
        probabilities[question.key] = distribution([...PROBABILITY_OUTCOMES]);
        break;
    }
  }
  return {
    shapes: {
      state: ref('State'),
      result: ref('Result'),
      confidence: ref('Confidence'),
      scores: ref('Scores'),
      composites: GENERIC_ANSWERS.composites,
      probabilities: ref('Probabilities'),
    },
    schemas: {
      State: { title: 'State', ...stateJsonSchema(contract.state_schema) },
      Result: keyedOrEmpty('Result', result, 'Keyed by question key, in question order.'),
      Confidence: keyedOrEmpty('Confidence', confidence, 'Keyed by question key, 0 to 1.'),
      Scores: keyedOrEmpty('Scores', scores, 'Score questions: the weighted level, counted from 1.'),
      Probabilities: keyedOrEmpty('Probabilities', probabilities, 'Present only with ?include=probabilities: the distribution of every question.'),
    },
  };
}

/**
 * The public document narrowed to one decision. `contract` is the active version's contract (the body of
 * `GET /v1/decisions/{slug}`), which never holds the full schema, so neither does this document.
 */
export function decisionOpenApiDocument(options: DocumentOptions, contract: DecisionContract): OpenApiDocument {
  const full = openApiDocument(options);
  const { shapes, schemas: typed } = answerShapes(contract);
  const paths: OpenApiDocument['paths'] = {};
  for (const { path, methods } of KEPT) {
    const item = full.paths[path];
    if (item === undefined) throw new Error(`the API document has no ${path} to narrow`);
    const concrete = path.replace('{slug}', contract.slug);
    paths[concrete] = {};
    for (const method of methods) {
      const operation = structuredClone(item[method]);
      // The slug is fixed by the path; the slug parameter would only invite another decision's slug.
      operation.parameters = (operation.parameters ?? []).filter((parameter: { $ref?: string }) => parameter.$ref !== '#/components/parameters/Slug');
      paths[concrete][method] = operation;
    }
  }
  const runResponseSchema = runResponse(shapes);
  const schemas: Record<string, JsonSchema> = {
    ...full.components.schemas,
    ...typed,
    RunRequest: runRequest(shapes.state),
    RunResponse: runResponseSchema,
    HookBody: {
      description: 'The state itself, or `{ "state": <state> }` (a JSON object whose only key is `state` is unwrapped).',
      anyOf: [ref('State'), { type: 'object', required: ['state'], properties: { state: ref('State') }, additionalProperties: false }],
    },
  };
  // A decision with no score question never sends `scores`.
  if (!contract.questions.some((question) => question.kind === 'score')) {
    delete (runResponseSchema.properties as Record<string, JsonSchema>).scores;
  }
  return pruned({
    ...full,
    info: {
      ...full.info,
      title: `Decision ${contract.slug}, version ${contract.version}`,
      version: `${contract.slug}.v${contract.version}`,
      description:
        `Running the decision \`${contract.slug}\` (active version ${contract.version}), with its state and answers typed. ` +
        'The document changes only when a new version is deployed. The whole API is described at `/openapi.json`.',
    },
    paths,
    components: { ...full.components, schemas },
    tags: full.tags.filter((tag) => tag.name === 'Decisions' || tag.name === 'Secret URL'),
    'x-decision': { slug: contract.slug, version: contract.version },
  });
}

/** Drops the components nothing in the paths or webhooks refers to, so a generator makes only this decision's types. */
function pruned(document: OpenApiDocument): OpenApiDocument {
  const components = document.components as unknown as Record<string, Record<string, unknown>>;
  const reached = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && !reached.has(value)) {
        reached.add(value);
        const [, , section, name] = value.split('/');
        if (section !== undefined && name !== undefined) visit(components[section]?.[name]);
      } else visit(value);
    }
  };
  visit(document.paths);
  visit(document.webhooks);
  const keep = (section: 'schemas' | 'parameters' | 'headers') =>
    Object.fromEntries(Object.entries(document.components[section]).filter(([name]) => reached.has(`#/components/${section}/${name}`)));
  return {
    ...document,
    components: { ...document.components, schemas: keep('schemas') as Record<string, JsonSchema>, parameters: keep('parameters'), headers: keep('headers') },
  };
}

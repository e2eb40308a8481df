import { decisionContract, TEMPLATES, validateSchema, type NormalizedSchema, type StateField, type StateSchema } from '@ds/decision-schema';
import { validateOpenApi } from '../../../test/support/openapi-validator';
import { decisionOpenApiDocument, stateJsonSchema } from './decision-document';
import type { OpenApiDocument } from './document';
import { checkAgainstSchema, type JsonSchema } from './json-schema';

function normalized(schema: unknown): NormalizedSchema {
  const result = validateSchema(schema);
  if (!result.valid) throw new Error(JSON.stringify(result.issues));
  return result.schema;
}

const triage = normalized({
  state: {
    type: 'object',
    fields: { message: { type: 'string', required: true }, plan: { type: 'string', enum: ['free', 'pro'] }, amount: { type: 'number' } },
  },
  questions: [
    {
      key: 'intent',
      kind: 'choice',
      instructions: 'What does the customer want? Read `message`.',
      options: [
        { value: 'refund', description: null },
        { value: 'exchange', description: null },
      ],
    },
    {
      key: 'urgency',
      kind: 'score',
      instructions: 'How upset?',
      levels: ['calm', { label: 'annoyed', description: 'polite' }, { rubric: { signals: ['caps'] } }],
    },
    { key: 'fraud', kind: 'probability', instructions: 'Judge it.', criterion: 'Signs of fraud' },
  ],
  composites: [{ key: 'risk', terms: [{ question: 'fraud', weight: 1 }] }],
  policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.9 }, action: 'block' }],
  fallbackAction: 'escalate',
  destinations: [{ key: 'ops', type: 'webhook', url: 'https://hooks.example.com/secret-path' }],
});

const contract = decisionContract({ slug: 'support-triage', status: 'deployed', version: 4, schema: triage });
const doc = decisionOpenApiDocument({ serverUrl: 'https://api.example.com' }, contract);
const schemas = doc.components.schemas;

/** The document's schema called `name`; a missing one fails the test with its name. */
function schemaOf(document: OpenApiDocument, name: string): JsonSchema {
  const schema = document.components.schemas[name];
  if (schema === undefined) throw new Error(`the document has no schema ${name}`);
  return schema;
}

const check = (name: string, value: unknown) => checkAgainstSchema(schemaOf(doc, name), value, doc).map((p) => `${p.path}: ${p.message}`);

const response = {
  decision_id: `dec_${'a'.repeat(20)}`,
  execution_id: `exec_${'b'.repeat(20)}`,
  schema: 'support-triage',
  version: 4,
  result: { intent: 'refund', urgency: 'annoyed', fraud: 0.2 },
  confidence: { intent: 0.9, urgency: 0.5, fraud: 0.6 },
  scores: { urgency: 1.7 },
  composites: { risk: 0.2 },
  action: 'continue',
  action_reason: { type: 'default' },
  destinations: [{ key: 'ops', type: 'webhook', status: 'queued', delivery_id: `dlv_${'c'.repeat(20)}` }],
  metrics: { latency_ms: 12, engine: 'llm', model: 'sim-1', estimated_cost_usd: 0.0001, input_tokens: 300, output_tokens: 20 },
};

describe('the document narrowed to one decision', () => {
  it('is a valid OpenAPI 3.1 document', () => {
    expect(validateOpenApi(doc)).toEqual({ valid: true });
  });

  it("keeps the decision's run and contract under its own path, without a slug parameter, and the secret URL", () => {
    expect(Object.keys(doc.paths).sort()).toEqual(['/v1/decisions/support-triage', '/v1/hooks/{token}']);
    const run = doc.paths['/v1/decisions/support-triage']?.post;
    expect(run.parameters).not.toContainEqual({ $ref: '#/components/parameters/Slug' });
    expect(doc.paths['/v1/decisions/support-triage']?.get.operationId).toBe('getDecision');
    expect(doc.webhooks['decision.completed']).toBeDefined();
    expect(doc.info.version).toBe('support-triage.v4');
  });

  it('types the state from the state schema: required fields, enums, optional fields nullable, undeclared fields forwarded', () => {
    expect(check('State', { message: 'hi', plan: 'pro', amount: 3, extra: { any: 1 } })).toEqual([]);
    expect(check('State', { message: 'hi', plan: null })).toEqual([]);
    expect(check('State', { plan: 'gold' })).toEqual(['message: is required', 'plan: must be one of "free", "pro", null']);
    expect(check('RunRequest', { state: { message: 'hi' } })).toEqual([]);
    expect(check('RunRequest', { state: 'text' })).toEqual(['state: must be object, is string']);
  });

  it('types every answer from the questions: options with other, level labels, probabilities', () => {
    expect(check('RunResponse', response)).toEqual([]);
    expect(check('RunResponse', { ...response, result: { ...response.result, intent: 'other', urgency: '3' } })).toEqual([]);
    expect(check('RunResponse', { ...response, result: { ...response.result, intent: 'upgrade' } })).toEqual([
      'result: matches none of the allowed shapes (anyOf)',
    ]);
    expect(check('Result', { intent: 'refund', urgency: 'furious', fraud: 2 }).length).toBeGreaterThan(0);
    expect(check('Result', { intent: 'refund', urgency: 'calm', fraud: 1, surprise: 'x' }).length).toBeGreaterThan(0);
    expect(check('Scores', { urgency: 3 })).toEqual([]);
    expect(check('Scores', { urgency: 3.5 }).length).toBeGreaterThan(0);
    const probabilities = { intent: { refund: 0.7, exchange: 0.2, other: 0.1 }, urgency: { calm: 0.1, annoyed: 0.8, '3': 0.1 }, fraud: { yes: 0.2, no: 0.8 } };
    expect(check('Probabilities', probabilities)).toEqual([]);
    expect(check('Probabilities', { ...probabilities, fraud: { yes: 0.2 } }).length).toBeGreaterThan(0);
  });

  it('accepts the empty answers of an engine-error fallback', () => {
    const fallback = {
      ...response,
      result: {},
      confidence: {},
      scores: {},
      composites: {},
      action: 'escalate',
      action_reason: { type: 'engine_error', code: 'ENGINE_TIMEOUT' },
    };
    expect(check('RunResponse', fallback)).toEqual([]);
  });

  it('types the secret URL body as the state or { state }', () => {
    expect(check('HookBody', { message: 'hi' })).toEqual([]);
    expect(check('HookBody', { state: { message: 'hi' } })).toEqual([]);
    expect(check('HookBody', { plan: 'pro' }).length).toBeGreaterThan(0);
  });

  it('drops what the decision does not use and never carries the private parts of the schema', () => {
    expect(Object.keys(schemas)).not.toContain('SubWorkspace');
    expect(Object.keys(schemas)).not.toContain('Account');
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(['State', 'Result', 'Confidence', 'Scores', 'Probabilities', 'RunResponse', 'DecisionCompletedEvent']),
    );
    const text = JSON.stringify(doc);
    // The destination URL, the composite key and the policy operator live only in the full schema.
    for (const secret of ['hooks.example.com', '"risk"', '"gte"']) expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
  });

  it('leaves scores out for a decision without score questions', () => {
    const plain = normalized({
      state: { type: 'text' },
      questions: [{ key: 'spam', kind: 'probability', instructions: 'Spam?', criterion: 'It is spam' }],
      fallbackAction: 'block',
    });
    const narrowed = decisionOpenApiDocument(
      { serverUrl: 'https://api.example.com' },
      decisionContract({ slug: 'spam', status: 'deployed', version: 1, schema: plain }),
    );
    const run = schemaOf(narrowed, 'RunResponse');
    expect(Object.keys(run.properties!)).not.toContain('scores');
    expect(checkAgainstSchema(schemaOf(narrowed, 'State'), '', narrowed).length).toBeGreaterThan(0);
    expect(validateOpenApi(narrowed)).toEqual({ valid: true });
  });

  it('types every built-in template, whose sample state its own State schema accepts', () => {
    for (const template of TEMPLATES) {
      const schema = normalized(template.schema);
      const narrowed = decisionOpenApiDocument(
        { serverUrl: 'https://api.example.com' },
        decisionContract({ slug: template.id, status: 'deployed', version: 1, schema }),
      );
      expect({ template: template.id, problems: checkAgainstSchema(schemaOf(narrowed, 'State'), template.sample_state, narrowed) }).toEqual({
        template: template.id,
        problems: [],
      });
    }
  });
});

describe('stateJsonSchema', () => {
  const address: StateField = {
    type: 'object',
    description: null,
    required: false,
    enum: null,
    fields: { street: { type: 'string', description: null, required: true, enum: null } },
  };
  it.each<[StateSchema, unknown, boolean]>([
    [{ type: 'text' }, 'hello', true],
    [{ type: 'text' }, '', false],
    [{ type: 'list', items: 'string' }, ['a'], true],
    [{ type: 'list', items: 'string' }, [], false],
    [{ type: 'list', items: 'string' }, Array(501).fill('a'), false],
    [{ type: 'list', items: 'object' }, [{}], true],
    [{ type: 'list', items: 'object' }, ['a'], false],
    [{ type: 'object', fields: { n: { type: 'integer', description: null, required: true, enum: null } } }, { n: 2 }, true],
    [{ type: 'object', fields: { n: { type: 'integer', description: null, required: true, enum: null } } }, { n: 2.5 }, false],
    [{ type: 'object', fields: { b: { type: 'boolean', description: 'flag', required: false, enum: null } } }, {}, true],
    [{ type: 'object', fields: { a: address } }, { a: { street: 'Main', extra: 1 } }, true],
    [{ type: 'object', fields: { a: address } }, { a: null }, true],
    [{ type: 'object', fields: { a: address } }, { a: {} }, false],
    [{ type: 'object', fields: { a: address } }, { a: { street: 3 } }, false],
  ])('%j accepts %j: %s', (state, value, accepted) => {
    expect(checkAgainstSchema(stateJsonSchema(state), value).length === 0).toBe(accepted);
  });
});

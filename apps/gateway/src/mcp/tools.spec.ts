import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ServiceError } from '@ds/contracts';
import { TEMPLATES, validateSchema } from '@ds/decision-schema';
import { callTool, mcpServer } from './mcp-server';
import { ToolBackend, toolArguments, TOOL_LIST, TOOLS } from './tools';
import { defined } from '../../../../test/e2e/support/api';

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema';
const STATE = {
  anyOf: [{ type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} }, { type: 'string' }, { type: 'array', items: {} }],
  description: "The state, as the decision's state_schema describes it (get_decision): an object, a text or a list.",
};
const SLUG = { type: 'string', description: "The decision's slug, as listed by list_decisions." };
const NO_ARGUMENTS = { $schema: SCHEMA, type: 'object', properties: {}, additionalProperties: false };

/** The pure tools must answer without asking the services anything. */
const unreachable: ToolBackend = new Proxy({} as ToolBackend, {
  get: (_target, name) => () => Promise.reject(new Error(`the backend's ${String(name)} was called`)),
});

const asIs = (error: unknown) => (error instanceof ServiceError ? error : new ServiceError('INTERNAL_ERROR', 'unexpected'));

function problem(run: () => unknown): { code: string; details: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error('no error');
}

describe('the published tools', () => {
  it('are the nine of the spec and the two of review, every one read-only except run_decision and resolve_review', () => {
    expect(TOOL_LIST.map((tool) => tool.name)).toEqual([
      'get_account',
      'list_decisions',
      'get_decision',
      'check_state',
      'run_decision',
      'list_executions',
      'list_reviews',
      'resolve_review',
      'list_templates',
      'get_template',
      'validate_schema',
    ]);
    for (const tool of TOOL_LIST.filter((candidate) => candidate.name !== 'run_decision' && candidate.name !== 'resolve_review')) {
      expect({ name: tool.name, readOnlyHint: tool.annotations.readOnlyHint }).toEqual({ name: tool.name, readOnlyHint: true });
    }
    expect(TOOLS.get('run_decision')!.annotations).toEqual({
      title: 'Run a decision',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    });
    expect(TOOLS.get('resolve_review')!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false, openWorldHint: true });
    // A resolution is not a run: it does not count in the decisions window.
    expect([...TOOLS.values()].filter((tool) => tool.countsAsRun).map((tool) => tool.name)).toEqual(['run_decision']);
    expect(TOOL_LIST.every((tool) => tool.description.length > 20 && tool.title.length > 0)).toBe(true);
  });

  it('resolve a review with the rest of the arguments as the body, and list reviews with the REST query', async () => {
    const asked: unknown[] = [];
    const backend = {
      resolveReview: async (id: string, body: unknown) => (asked.push({ id, body }), { id }),
      listReviews: async (query: unknown) => (asked.push(query), { data: [], has_more: false, next_cursor: null }),
    } as unknown as ToolBackend;
    const resolve = TOOLS.get('resolve_review')!;
    await resolve.call(toolArguments(resolve, { id: 'rev_a', answers: { intent: 'refund' }, action: 'continue' }), backend);
    const list = TOOLS.get('list_reviews')!;
    await list.call(toolArguments(list, { reason: 'audit', decision_id: 'dec_a1' }), backend);
    expect(asked).toEqual([
      { id: 'rev_a', body: { answers: { intent: 'refund' }, action: 'continue' } },
      { limit: 20, cursor: null, status: null, decisionId: 'dec_a1', reason: 'audit' },
    ]);
    expect(problem(() => toolArguments(list, { status: 'pending', decision_id: 'dec-1' }))).toEqual({
      code: 'INVALID_REQUEST',
      details: [
        { path: 'status', message: 'must be one of open, claimed, expired, resolved' },
        { path: 'decision_id', message: 'must be a decision id (dec_…)' },
      ],
    });
  });

  it('publish exactly the input schemas their arguments are checked against', () => {
    const schemas = Object.fromEntries(TOOL_LIST.map((tool) => [tool.name, tool.inputSchema]));
    expect(schemas).toEqual({
      get_account: NO_ARGUMENTS,
      list_decisions: NO_ARGUMENTS,
      list_templates: NO_ARGUMENTS,
      get_decision: { $schema: SCHEMA, type: 'object', properties: { slug: SLUG }, required: ['slug'], additionalProperties: false },
      check_state: { $schema: SCHEMA, type: 'object', properties: { slug: SLUG, state: STATE }, required: ['slug', 'state'], additionalProperties: false },
      run_decision: {
        $schema: SCHEMA,
        type: 'object',
        properties: {
          slug: SLUG,
          state: STATE,
          include_probabilities: { type: 'boolean', description: 'true adds the distribution of every question under probabilities.' },
          version: {
            type: 'integer',
            minimum: 1,
            maximum: 2_147_483_647,
            description: 'Runs this deployed version instead of the active one, for reproducible answers; the answer says which version ran.',
          },
        },
        required: ['slug', 'state'],
        additionalProperties: false,
      },
      list_executions: {
        $schema: SCHEMA,
        type: 'object',
        properties: {
          decision: { type: 'string', description: 'Only executions of this decision (its slug).' },
          status: { type: 'string', enum: ['success', 'error'], description: 'Only executions with this status.' },
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Executions per page, 1 to 100.' },
          cursor: { type: 'string', minLength: 1, maxLength: 200, description: 'next_cursor of the previous page.' },
        },
        additionalProperties: false,
      },
      list_reviews: {
        $schema: SCHEMA,
        type: 'object',
        properties: {
          status: { type: 'string', enum: ['open', 'claimed', 'expired', 'resolved'], description: 'Only items in this status.' },
          decision_id: { type: 'string', pattern: '^dec_[A-Za-z0-9]{1,64}$', description: 'Only items of this decision (its id).' },
          reason: { type: 'string', enum: ['action', 'low_confidence', 'engine_error', 'audit'], description: 'Only items sent to review for this reason.' },
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page, 1 to 100.' },
          cursor: { type: 'string', minLength: 1, maxLength: 200, description: 'next_cursor of the previous page.' },
        },
        additionalProperties: false,
      },
      resolve_review: {
        $schema: SCHEMA,
        type: 'object',
        properties: {
          id: { type: 'string', description: 'The review item id (rev_…), as listed by list_reviews.' },
          answers: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {}, description: 'The right answer per question key.' },
          action: { type: 'string', description: 'The right action: continue, block, escalate or fallback.' },
          note: { type: 'string', maxLength: 2000, description: 'Why, in the reviewer’s words.' },
        },
        required: ['id'],
        additionalProperties: false,
      },
      get_template: {
        $schema: SCHEMA,
        type: 'object',
        properties: { id: { type: 'string', description: 'The template id, as listed by list_templates.' } },
        required: ['id'],
        additionalProperties: false,
      },
      validate_schema: {
        $schema: SCHEMA,
        type: 'object',
        properties: { schema: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {}, description: 'A decision schema.' } },
        required: ['schema'],
        additionalProperties: false,
      },
    });
  });
});

describe('tool arguments', () => {
  const tool = (name: string) => TOOLS.get(name)!;

  it('fill defaults and keep what was given', () => {
    expect(toolArguments(tool('list_executions'), undefined)).toEqual({ limit: 20 });
    expect(toolArguments(tool('list_executions'), { limit: 100, status: 'error', decision: 'triage', cursor: 'abc' })).toEqual({
      limit: 100,
      status: 'error',
      decision: 'triage',
      cursor: 'abc',
    });
    expect(toolArguments(tool('run_decision'), { slug: 'triage', state: ['a'], include_probabilities: true })).toEqual({
      slug: 'triage',
      state: ['a'],
      include_probabilities: true,
    });
    expect(toolArguments(tool('run_decision'), { slug: 'triage', state: {}, version: 3 })).toEqual({ slug: 'triage', state: {}, version: 3 });
    expect(toolArguments(tool('check_state'), { slug: 'triage', state: '' })).toEqual({ slug: 'triage', state: '' });
  });

  it('refuse with INVALID_REQUEST and one { path, message } per problem', () => {
    expect(problem(() => toolArguments(tool('list_executions'), { limit: 101, status: 'done', cursor: '', extra: 1 }))).toEqual({
      code: 'INVALID_REQUEST',
      details: [
        { path: 'status', message: 'must be success or error' },
        { path: 'limit', message: 'must be an integer from 1 to 100' },
        { path: 'cursor', message: 'is not a valid cursor' },
        { path: 'extra', message: 'is not an argument of list_executions' },
      ],
    });
    expect(problem(() => toolArguments(tool('list_executions'), { limit: 2.5 })).details).toEqual([
      { path: 'limit', message: 'must be an integer from 1 to 100' },
    ]);
    expect(problem(() => toolArguments(tool('run_decision'), {}))).toEqual({
      code: 'INVALID_REQUEST',
      details: [
        { path: 'slug', message: 'is required' },
        { path: 'state', message: 'is required' },
      ],
    });
    expect(problem(() => toolArguments(tool('run_decision'), { slug: 7, state: 3, include_probabilities: 'yes' })).details).toEqual([
      { path: 'slug', message: 'must be a string' },
      { path: 'state', message: 'must be an object, a string or an array' },
      { path: 'include_probabilities', message: 'must be true or false' },
    ]);
    for (const version of [0, 1.5, -1, 2 ** 31, null]) {
      expect(problem(() => toolArguments(tool('run_decision'), { slug: 'triage', state: {}, version })).details).toEqual([
        { path: 'version', message: 'must be a version number: a whole number from 1 to 2147483647' },
      ]);
    }
    expect(problem(() => toolArguments(tool('run_decision'), { slug: 'triage', state: {}, version: '2' })).details).toEqual([
      { path: 'version', message: 'must be a version number: a whole number from 1 to 2147483647, as a JSON number (1, not "1")' },
    ]);
    expect(problem(() => toolArguments(tool('validate_schema'), { schema: [] })).details).toEqual([{ path: 'schema', message: 'must be an object' }]);
    expect(problem(() => toolArguments(tool('get_account'), 'x')).details).toEqual([{ path: '', message: 'arguments must be an object' }]);
  });
});

describe('calling a tool', () => {
  it('answers the JSON as structuredContent and the same JSON as text', async () => {
    const result = await callTool('list_templates', {}, { backend: unreachable, requestId: 'req_1', mapError: asIs });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({
      data: TEMPLATES.map(({ id, name, description, category, patterns }) => ({ id, name, description, category, patterns })),
    });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
    expect((result.structuredContent as { data: unknown[] }).data).toHaveLength(9);
  });

  it('gives a template with its schema and sample state, and NOT_FOUND for an unknown one', async () => {
    const template = defined(TEMPLATES[0]);
    const found = await callTool('get_template', { id: template.id }, { backend: unreachable, requestId: 'req_1', mapError: asIs });
    expect(found.structuredContent).toEqual({
      id: template.id,
      name: template.name,
      description: template.description,
      category: template.category,
      patterns: template.patterns,
      schema: template.schema,
      sample_state: template.sample_state,
    });
    const missing = await callTool('get_template', { id: 'no-such-template' }, { backend: unreachable, requestId: 'req_2', mapError: asIs });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toEqual({ error: { code: 'NOT_FOUND', message: 'No template no-such-template.', request_id: 'req_2' } });
    expect(JSON.parse((missing.content[0] as { text: string }).text)).toEqual(missing.structuredContent);
  });

  it('validates a schema: the normalized schema, or every issue', async () => {
    const { schema } = defined(TEMPLATES[0]);
    const valid = await callTool('validate_schema', { schema }, { backend: unreachable, requestId: 'req_1', mapError: asIs });
    const expected = validateSchema(schema);
    expect(expected.valid).toBe(true);
    expect(valid.structuredContent).toEqual({ valid: true, schema: (expected as { schema: unknown }).schema });
    const invalid = await callTool('validate_schema', { schema: { questions: [] } }, { backend: unreachable, requestId: 'req_1', mapError: asIs });
    expect(invalid.isError).toBeUndefined();
    expect(invalid.structuredContent).toMatchObject({ valid: false, issues: expect.arrayContaining([expect.objectContaining({ path: 'state' })]) });
  });

  it('lists at most 50 issues of a schema and says how many more there were', async () => {
    const schema = { questions: Array.from({ length: 5_000 }, () => ({})) };
    const all = validateSchema(schema);
    expect(all.valid).toBe(false);
    const total = (all as { issues: unknown[] }).issues.length;
    expect(total).toBeGreaterThan(5_000);
    const result = await callTool('validate_schema', { schema }, { backend: unreachable, requestId: 'req_1', mapError: asIs });
    const content = result.structuredContent as { issues: unknown[]; issues_not_listed: number };
    expect(content.issues).toHaveLength(50);
    expect(content.issues_not_listed).toBe(total - 50);
    expect(JSON.stringify(result).length).toBeLessThan(16 * 1024);
  });

  it('lists at most 50 unknown arguments, each path cut to 200 characters', async () => {
    const args = { id: 'x', ...Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`${'k'.repeat(1_000)}${i}`, 1])) };
    const result = await callTool('get_template', args, { backend: unreachable, requestId: 'req_1', mapError: asIs });
    const error = (result.structuredContent as { error: { message: string; details: Array<{ path: string }> } }).error;
    expect(error.details).toHaveLength(50);
    expect(error.details.every((issue) => issue.path.length === 200 && issue.path.endsWith('…'))).toBe(true);
    expect(error.message).toBe('The arguments of get_template are not valid. The first 50 issues are listed in details; 950 more are not.');
  });

  it('answers an unknown tool and invalid arguments as tool errors with the API error object', async () => {
    const unknown = await callTool('delete_everything', {}, { backend: unreachable, requestId: 'req_9', mapError: asIs });
    expect(unknown).toMatchObject({ isError: true, structuredContent: { error: { code: 'NOT_FOUND', request_id: 'req_9' } } });
    const invalid = await callTool('get_template', { id: 5 }, { backend: unreachable, requestId: 'req_9', mapError: asIs });
    expect(invalid.structuredContent).toEqual({
      error: {
        code: 'INVALID_REQUEST',
        message: 'The arguments of get_template are not valid.',
        request_id: 'req_9',
        details: [{ path: 'id', message: 'must be a string' }],
      },
    });
  });

  it('reports every call with its tool and outcome, unknown names as one', async () => {
    const seen: string[] = [];
    const observe = (tool: string, outcome: string) => seen.push(`${tool}:${outcome}`);
    await callTool('list_templates', {}, { backend: unreachable, requestId: 'req_1', mapError: asIs, observe });
    await callTool('get_template', {}, { backend: unreachable, requestId: 'req_1', mapError: asIs, observe });
    await callTool('x'.repeat(500), {}, { backend: unreachable, requestId: 'req_1', mapError: asIs, observe });
    expect(seen).toEqual(['list_templates:ok', 'get_template:INVALID_REQUEST', 'unknown:NOT_FOUND']);
  });

  it('refuses a malformed slug as DECISION_NOT_FOUND before asking any service', async () => {
    const counted: string[] = [];
    const backend = new Proxy({} as ToolBackend, {
      get: (_target, name) => () => {
        counted.push(String(name));
        return name === 'countRun' ? Promise.resolve() : Promise.reject(new Error('asked'));
      },
    });
    for (const name of ['get_decision', 'check_state', 'run_decision']) {
      const args = name === 'get_decision' ? { slug: 'Not A Slug' } : { slug: 'Not A Slug', state: {} };
      const result = await callTool(name, args, { backend, requestId: 'req_1', mapError: asIs });
      expect({ name, code: (result.structuredContent as { error: { code: string } }).error.code }).toEqual({ name, code: 'DECISION_NOT_FOUND' });
    }
    // Only the run counts in the decisions window, before its arguments are read, as the run endpoint does.
    expect(counted).toEqual(['countRun']);
  });
});

describe('the SDK client against the server', () => {
  it('lists the tools and calls one over the protocol', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = mcpServer({ backend: unreachable, requestId: 'req_1', mapError: asIs });
    await server.connect(serverSide);
    const client = new Client({ name: 'unit', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'decision-service' });
      const { tools } = await client.listTools();
      expect(tools).toEqual(TOOL_LIST);
      const template = defined(TEMPLATES[1]);
      const result = await client.callTool({ name: 'get_template', arguments: { id: template.id } });
      expect(result.structuredContent).toMatchObject({ id: template.id, sample_state: template.sample_state });
    } finally {
      await client.close();
      await server.close();
    }
  });
});

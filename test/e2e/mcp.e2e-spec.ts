import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  baseUrl,
  call,
  createDecision,
  deployedDecision,
  expectError,
  newWorkspace,
  opsPort,
  Reply,
  roomyWorkspace,
  runDecision,
  scriptEngine,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';

/**
 * POST /mcp, the agent tool server: every tool and tool error through the SDK's own client, and the transport
 * rules, windows and billing with plain HTTP requests (which need no initialize handshake).
 */

const ACCEPT = 'application/json, text/event-stream';
const admin = (method: string, path: string, body: unknown) => call(method, path, { token: process.env.E2E_ADMIN_TOKEN, body });

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl()}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

interface ToolAnswer {
  isError: boolean;
  json: any;
  text: string;
}

/** Calls a tool and checks what every answer must be: one text item holding exactly the structured JSON. */
async function tool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: Array<{ type: string; text: string }>;
    structuredContent: any;
    isError?: boolean;
  };
  expect(result.content).toHaveLength(1);
  const item = result.content[0]!;
  expect(item.type).toBe('text');
  expect(JSON.parse(item.text)).toEqual(result.structuredContent);
  return { isError: result.isError === true, json: result.structuredContent, text: item.text };
}

async function toolError(client: Client, name: string, args: Record<string, unknown>, code: string): Promise<any> {
  const answer = await tool(client, name, args);
  expect({ isError: answer.isError, code: answer.json.error?.code }).toEqual({ isError: true, code });
  expect(answer.json.error.request_id).toMatch(/^req_/);
  expect(typeof answer.json.error.message).toBe('string');
  expect(answer.text).not.toMatch(/\bat .+\.(js|ts):\d+/);
  return answer.json.error;
}

/** One JSON-RPC message over plain HTTP, with the headers the spec asks for unless told otherwise. */
function rpc(token: string | null, message: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return call('POST', '/mcp', { token, body: message, headers: { accept: ACCEPT, ...headers } });
}

const toolsCall = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

async function setPlan(ws: Workspace, plan: string, overrides: Record<string, unknown>): Promise<void> {
  const reply = await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { plan, overrides });
  expect(reply.status).toBe(200);
}

describe('the tools, through the SDK client', () => {
  let ws: Workspace;
  let client: Client;

  beforeAll(async () => {
    ws = await roomyWorkspace();
    await deployedDecision(ws, 'triage', triageSchema());
    client = await connect(ws.apiKey);
  });

  afterAll(async () => {
    await client?.close();
  });

  it('lists the eleven tools with their input schemas, every one read-only except run_decision and resolve_review', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'decision-service' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
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
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect({ name: t.name, readOnly: t.annotations?.readOnlyHint }).toEqual({
        name: t.name,
        readOnly: t.name !== 'run_decision' && t.name !== 'resolve_review',
      });
    }
    const run = tools.find((t) => t.name === 'run_decision')!;
    expect(run.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(run.inputSchema).toMatchObject({
      required: ['slug', 'state'],
      properties: { include_probabilities: { type: 'boolean' } },
      additionalProperties: false,
    });
    expect(tools.find((t) => t.name === 'list_executions')!.inputSchema.properties).toMatchObject({
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      status: { enum: ['success', 'error'] },
    });
  });

  it('get_account, list_decisions and get_decision answer the bodies of the REST endpoints', async () => {
    const account = await tool(client, 'get_account');
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(account.isError).toBe(false);
    expect(account.json).toEqual(me.body);
    expect(account.json).toMatchObject({ workspace: { id: ws.workspaceId }, api_key: { id: ws.keyId } });

    const listed = await tool(client, 'list_decisions');
    expect(listed.json).toEqual((await call('GET', '/v1/decisions', { token: ws.apiKey })).body);
    expect(listed.json.data.map((d: { slug: string }) => d.slug)).toEqual(['triage']);

    const contract = await tool(client, 'get_decision', { slug: 'triage' });
    expect(contract.json).toEqual((await call('GET', '/v1/decisions/triage', { token: ws.apiKey })).body);
    expect(contract.json).toMatchObject({ slug: 'triage', status: 'deployed', version: 1, state_schema: { type: 'object' } });
    expect(contract.json).toHaveProperty('example_state');
    for (const hidden of ['policies', 'composites', 'destinations', 'settings', 'context']) expect(contract.json).not.toHaveProperty(hidden);
  });

  it('check_state answers valid or the reason a run would fail, and runs nothing', async () => {
    const before = (await tool(client, 'get_account')).json.usage.used;
    expect((await tool(client, 'check_state', { slug: 'triage', state: { message: 'Broken screen' } })).json).toEqual({ valid: true });
    expect((await tool(client, 'check_state', { slug: 'triage', state: { amount: 3 } })).json).toEqual({ valid: false, message: 'state.message is required' });
    expect((await tool(client, 'check_state', { slug: 'triage', state: { message: 'x', amount: 'lots' } })).json).toEqual({
      valid: false,
      message: 'state.amount must be a number',
    });
    expect((await tool(client, 'check_state', { slug: 'triage', state: 'just text' })).json).toEqual({ valid: false, message: 'state must be a JSON object' });
    const huge = await tool(client, 'check_state', { slug: 'triage', state: { message: 'x'.repeat(129_000) } });
    expect(huge.json).toEqual({ valid: false, message: expect.stringMatching(/^state is about [\d,]+ tokens; the limit is 32,000$/) });
    expect((await tool(client, 'get_account')).json.usage.used).toBe(before);
  });

  it('run_decision runs and bills like the run endpoint, recorded with source mcp', async () => {
    const before = (await tool(client, 'get_account')).json.usage.used;
    const run = await tool(client, 'run_decision', { slug: 'triage', state: { message: 'My phone arrived broken' } });
    expect(run.isError).toBe(false);
    expect(run.json).toMatchObject({
      schema: 'triage',
      version: 1,
      decision_id: expect.stringMatching(/^dec_/),
      execution_id: expect.stringMatching(/^exec_/),
    });
    expect(Object.keys(run.json.result)).toEqual(['intent', 'urgency', 'fraud']);
    expect(run.json).not.toHaveProperty('probabilities');
    expect(['continue', 'block', 'escalate', 'fallback']).toContain(run.json.action);
    expect(run.json.metrics).toMatchObject({ engine: 'llm', input_tokens: expect.any(Number) });

    const withProbabilities = await tool(client, 'run_decision', { slug: 'triage', state: { message: 'Refund please' }, include_probabilities: true });
    expect(Object.keys(withProbabilities.json.probabilities)).toEqual(['intent', 'urgency', 'fraud']);
    expect((await tool(client, 'get_account')).json.usage.used).toBe(before + 2);

    const executions = await call('GET', '/v1/executions?limit=2', { token: ws.apiKey });
    const recorded = executions.body.data.find((execution: { id: string }) => execution.id === run.json.execution_id);
    expect(recorded).toMatchObject({ source: 'mcp', status: 'success', livemode: true });
  });

  it('list_executions answers the executions endpoint’s body with its filters and cursor, never inputs', async () => {
    const marker = uniqueMarker();
    await deployedDecision(ws, 'listed', triageSchema(marker));
    for (let i = 0; i < 3; i++) expect((await runDecision(ws, 'listed', { message: `${marker} run ${i}` })).status).toBe(200);
    expectError(await runDecision(ws, 'listed', { amount: 1 }), 422, 'INVALID_STATE');

    const all = await tool(client, 'list_executions', { decision: 'listed' });
    expect(all.json).toEqual((await call('GET', '/v1/executions?decision=listed', { token: ws.apiKey })).body);
    expect(all.json.data).toHaveLength(4);
    expect(all.text).not.toContain(marker);
    for (const execution of all.json.data) {
      for (const field of ['input', 'state', 'body']) expect(execution).not.toHaveProperty(field);
    }

    const errors = await tool(client, 'list_executions', { decision: 'listed', status: 'error' });
    expect(errors.json.data).toHaveLength(1);
    expect(errors.json.data[0].status).toBe('error');

    const first = await tool(client, 'list_executions', { decision: 'listed', status: 'success', limit: 2 });
    expect(first.json.data).toHaveLength(2);
    expect(first.json.has_more).toBe(true);
    const second = await tool(client, 'list_executions', { decision: 'listed', status: 'success', limit: 2, cursor: first.json.next_cursor });
    expect(second.json.data).toHaveLength(1);
    expect(second.json.has_more).toBe(false);
  });

  it('list_templates, get_template and validate_schema answer without a decision of the workspace', async () => {
    const templates = await tool(client, 'list_templates');
    expect(templates.json.data).toHaveLength(9);
    for (const summary of templates.json.data) expect(Object.keys(summary).sort()).toEqual(['category', 'description', 'id', 'name', 'patterns']);
    const template = await tool(client, 'get_template', { id: templates.json.data[0].id });
    expect(template.json).toMatchObject({ ...templates.json.data[0], schema: expect.any(Object), sample_state: expect.anything() });

    const valid = await tool(client, 'validate_schema', { schema: template.json.schema });
    expect(valid.json.valid).toBe(true);
    expect(valid.json.schema.questions.find((q: { kind: string }) => q.kind === 'choice').options.map((o: { value: string }) => o.value)).toContain('other');
    const invalid = await tool(client, 'validate_schema', { schema: { ...template.json.schema, questions: [] } });
    expect(invalid.isError).toBe(false);
    expect(invalid.json).toEqual({ valid: false, issues: expect.arrayContaining([{ path: 'questions', message: expect.any(String) }]) });
    for (const issue of invalid.json.issues) expect(Object.keys(issue).sort()).toEqual(['message', 'path']);

    // A template's sample state runs on a decision deployed from it.
    await deployedDecision(ws, 'from-template', template.json.schema);
    expect((await tool(client, 'check_state', { slug: 'from-template', state: template.json.sample_state })).json).toEqual({ valid: true });
  });
});

describe('tool errors carry the API error object', () => {
  it('unknown tool, invalid arguments, unknown or malformed slug, undeployed, disabled, invalid state, engine failure', async () => {
    const ws = await roomyWorkspace();
    const marker = uniqueMarker();
    const engineFails = await deployedDecision(ws, 'engine-fails', triageSchema(marker));
    await scriptEngine(marker, [{ status: 400, errorMessage: `rejected (${marker})` }], true);
    await createDecision(ws, 'undeployed', triageSchema());
    const disabled = await deployedDecision(ws, 'disabled', triageSchema());
    expect(
      (await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${disabled}/endpoint`, { token: ws.session, body: { enabled: false } })).status,
    ).toBe(200);
    const client = await connect(ws.apiKey);
    try {
      expect((await toolError(client, 'no_such_tool', {}, 'NOT_FOUND')).message).toContain('no_such_tool');
      expect((await toolError(client, 'run_decision', { slug: 'triage', state: 5, extra: true }, 'INVALID_REQUEST')).details).toEqual([
        { path: 'state', message: 'must be an object, a string or an array' },
        { path: 'extra', message: 'is not an argument of run_decision' },
      ]);
      expect((await toolError(client, 'list_executions', { limit: 500 }, 'INVALID_REQUEST')).details).toEqual([
        { path: 'limit', message: 'must be an integer from 1 to 100' },
      ]);
      await toolError(client, 'get_template', { id: 'no-such-template' }, 'NOT_FOUND');
      for (const name of ['get_decision', 'check_state', 'run_decision']) {
        const args = name === 'get_decision' ? {} : { state: { message: 'hi' } };
        await toolError(client, name, { slug: 'no-such-decision', ...args }, 'DECISION_NOT_FOUND');
        await toolError(client, name, { slug: 'Not_A_Slug', ...args }, 'DECISION_NOT_FOUND');
        await toolError(client, name, { slug: 'undeployed', ...args }, 'DECISION_NOT_DEPLOYED');
      }
      await toolError(client, 'run_decision', { slug: 'disabled', state: { message: 'hi' } }, 'DECISION_DISABLED');
      expect((await toolError(client, 'run_decision', { slug: 'disabled', state: {} }, 'DECISION_DISABLED')).code).toBe('DECISION_DISABLED');
      const invalidState = await toolError(client, 'run_decision', { slug: 'engine-fails', state: { amount: 1 } }, 'INVALID_STATE');
      expect(invalidState.message).toContain('state.message');
      const engine = await toolError(client, 'run_decision', { slug: 'engine-fails', state: { message: 'hi' } }, 'ENGINE_INVALID_REQUEST');
      expect(engine.message).toContain(`rejected (${marker})`);
      // Refused and failed runs are never billed.
      expect((await tool(client, 'get_account')).json.usage.used).toBe(0);
      expect(engineFails).toMatch(/^dec_/);
    } finally {
      await client.close();
    }
  });

  it('CREDITS_EXHAUSTED, SPEND_CAP_REACHED and QUOTA_EXCEEDED with their details, as on the run endpoint', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'capped', triageSchema());
    await setPlan(ws, 'genesis', { included_decisions: 1 });
    const client = await connect(ws.apiKey);
    try {
      expect((await tool(client, 'run_decision', { slug: 'capped', state: { message: 'included' } })).isError).toBe(false);
      const exhausted = await toolError(client, 'run_decision', { slug: 'capped', state: { message: 'no credits' } }, 'CREDITS_EXHAUSTED');
      expect(exhausted.details).toEqual({ used: 1, included: 1, availableCents: 0, currency: 'usd', billingUrl: expect.stringMatching(/^https?:\/\//) });

      expect((await admin('POST', `/admin/v1/workspaces/${ws.workspaceId}/credits`, { kind: 'paid', amount_cents: 10, currency: 'usd' })).status).toBe(201);
      expect((await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/spend-cap`, { spend_cap_cents: 0 })).status).toBe(200);
      const capped = await toolError(client, 'run_decision', { slug: 'capped', state: { message: 'at the cap' } }, 'SPEND_CAP_REACHED');
      expect(capped.details).toMatchObject({ spendCapCents: 0, currency: 'usd' });

      await setPlan(ws, 'genesis', { included_decisions: 1, hard_cap: true });
      const quota = await toolError(client, 'run_decision', { slug: 'capped', state: { message: 'hard cap' } }, 'QUOTA_EXCEEDED');
      expect(quota.details).toEqual({ used: 1, included: 1, periodEnd: expect.any(String), upgradeUrl: expect.any(String) });
      expect((await tool(client, 'get_account')).json.usage.used).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe('windows and billing', () => {
  it('every /mcp request counts in the reads window; run_decision also in the decisions window, shared with the run endpoint', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'windowed', triageSchema());
    await setPlan(ws, 'genesis', { rate_limit_per_minute: 4 });
    const mcpRun = (id: number) => rpc(ws.apiKey, toolsCall(id, 'run_decision', { slug: 'windowed', state: { message: `run ${id}` } }));

    // reads 1 and 2, decisions 1 and 2
    for (const id of [1, 2]) {
      const reply = await mcpRun(id);
      expect(reply.status).toBe(200);
      expect(reply.body.result.isError).toBeUndefined();
      expect(reply.headers.get('x-ratelimit-limit')).toBe('4');
      expect(reply.headers.get('x-ratelimit-remaining')).toBe(String(4 - id));
    }
    // decisions 3 and 4 through the run endpoint, then the decisions window is used up
    expect((await runDecision(ws, 'windowed', { message: 'rest 1' })).status).toBe(200);
    expect((await runDecision(ws, 'windowed', { message: 'rest 2' })).status).toBe(200);
    expectError(await runDecision(ws, 'windowed', { message: 'rest 3' }), 429, 'RATE_LIMITED');

    // reads 3: the request is answered, the run is refused as a tool error
    const refused = await mcpRun(3);
    expect(refused.status).toBe(200);
    expect(refused.body.result.isError).toBe(true);
    expect(refused.body.result.structuredContent.error).toMatchObject({ code: 'RATE_LIMITED', details: { retryAfter: expect.any(Number) } });
    // reads 4: a read tool still works
    const listed = await rpc(ws.apiKey, toolsCall(4, 'list_decisions'));
    expect(listed.status).toBe(200);
    expect(listed.body.result.structuredContent.data).toHaveLength(1);
    expect(listed.headers.get('x-ratelimit-remaining')).toBe('0');
    // reads 5: the reads window is used up for /mcp and for the REST reads alike
    const limited = await rpc(ws.apiKey, toolsCall(5, 'list_decisions'));
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expectError(await call('GET', '/v1/me', { token: ws.apiKey }), 429, 'RATE_LIMITED');
  });

  it('bills run_decision like an API call, with the same quota, and records source mcp', async () => {
    const ws = await roomyWorkspace();
    await deployedDecision(ws, 'billed', triageSchema());
    for (const id of [1, 2, 3]) {
      const reply = await rpc(ws.apiKey, toolsCall(id, 'run_decision', { slug: 'billed', state: { message: `run ${id}` } }));
      expect(reply.body.result.structuredContent.execution_id).toMatch(/^exec_/);
    }
    const invalid = await rpc(ws.apiKey, toolsCall(4, 'run_decision', { slug: 'billed', state: { amount: 2 } }));
    expect(invalid.body.result.structuredContent.error.code).toBe('INVALID_STATE');
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.body.usage).toMatchObject({ used: 3, reserved: 0 });
    const executions = await call('GET', '/v1/executions?decision=billed', { token: ws.apiKey });
    expect(executions.body.data.map((e: { source: string; status: string }) => `${e.source}:${e.status}`)).toEqual([
      'mcp:error',
      'mcp:success',
      'mcp:success',
      'mcp:success',
    ]);
  });
});

describe('the transport, over plain HTTP', () => {
  let ws: Workspace;

  beforeAll(async () => {
    ws = await roomyWorkspace();
  });

  it('answers one JSON-RPC message with JSON, without a session or an initialize handshake', async () => {
    const reply = await rpc(ws.apiKey, { jsonrpc: '2.0', id: 'first', method: 'tools/list' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('mcp-session-id')).toBeNull();
    expect(reply.headers.get('x-request-id')).toMatch(/^req_/);
    expect(reply.headers.get('x-ratelimit-limit')).toBe('1000000');
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: 'first', result: { tools: expect.any(Array) } });
    expect(reply.body.result.tools).toHaveLength(11);

    const called = await rpc(ws.apiKey, toolsCall(2, 'list_templates'), { 'x-request-id': 'my-request-1' });
    expect(called.body.result.structuredContent.data).toHaveLength(9);
    expect(JSON.parse(called.body.result.content[0].text)).toEqual(called.body.result.structuredContent);
    expect(called.headers.get('x-request-id')).toBe('my-request-1');

    const toolFailure = await rpc(ws.apiKey, toolsCall(3, 'nope'), { 'x-request-id': 'my-request-2' });
    expect(toolFailure.body.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'NOT_FOUND', request_id: 'my-request-2' } } });

    const metrics = await (await fetch(`http://127.0.0.1:${opsPort(0)}/metrics`)).text();
    expect(metrics).toMatch(/^decision_service_mcp_tool_calls_total\{[^}]*tool="list_templates",outcome="ok"[^}]*\} [1-9]/m);
    expect(metrics).toMatch(/^decision_service_mcp_tool_calls_total\{[^}]*tool="unknown",outcome="NOT_FOUND"[^}]*\} [1-9]/m);

    const initialized = await rpc(ws.apiKey, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(initialized.status).toBe(202);
    const unknownMethod = await rpc(ws.apiKey, { jsonrpc: '2.0', id: 4, method: 'resources/list' });
    expect(unknownMethod.body).toMatchObject({ id: 4, error: { code: -32601 } });
    expect((await rpc(ws.apiKey, { jsonrpc: '2.0', id: 5, method: 'ping' })).body).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
    const oldProtocol = await rpc(ws.apiKey, { jsonrpc: '2.0', id: 6, method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' });
    expect(oldProtocol.status).toBe(400);
    expect(oldProtocol.body).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringContaining('Unsupported protocol version') } });
  });

  it('is one path for every method, each declared as an API-key route in the reads window', async () => {
    const table = (await (await fetch(`http://127.0.0.1:${opsPort(0)}/routes`)).json()) as { routes: Array<{ method: string; url: string; access: unknown }> };
    const mcp = table.routes.filter((route) => route.url.startsWith('/mcp'));
    expect(mcp.map((route) => route.method).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'POST']);
    for (const route of mcp) expect(route).toEqual({ method: route.method, url: '/mcp', access: { kind: 'api-key', window: 'reads' } });
  });

  it('refuses GET, HEAD and DELETE with 405: no event stream and no sessions', async () => {
    for (const method of ['GET', 'DELETE', 'HEAD']) {
      const reply = await call(method, '/mcp', { token: ws.apiKey, headers: { accept: 'text/event-stream' } });
      expect({ method, status: reply.status, allow: reply.headers.get('allow') }).toEqual({ method, status: 405, allow: 'POST' });
      if (method !== 'HEAD') expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: expect.any(Number), message: expect.any(String) } });
    }
  });

  it('answers 406 without the Accept header of the spec', async () => {
    for (const accept of [undefined, 'application/json', 'text/event-stream', '*/*']) {
      const headers: Record<string, string> = accept === undefined ? {} : { accept };
      const reply = await call('POST', '/mcp', { token: ws.apiKey, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers });
      expect({ accept, status: reply.status }).toEqual({ accept, status: 406 });
      expect(reply.body).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringContaining('Not Acceptable') } });
    }
  });

  it('answers a batch with 400 and runs none of it', async () => {
    const before = (await call('GET', '/v1/me', { token: ws.apiKey })).body.usage.used;
    await deployedDecision(ws, 'batched', triageSchema());
    const batch = [toolsCall(1, 'run_decision', { slug: 'batched', state: { message: 'a' } }), toolsCall(2, 'list_templates')];
    const reply = await rpc(ws.apiKey, batch);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('one message per request') } });
    expect((await rpc(ws.apiKey, [])).status).toBe(400);
    expect((await call('GET', '/v1/me', { token: ws.apiKey })).body.usage.used).toBe(before);
  });

  it('answers a body that is not JSON, an empty body, another content type and an oversized body with the API’s own errors', async () => {
    const post = (rawBody: string | undefined, contentType = 'application/json') =>
      call('POST', '/mcp', { token: ws.apiKey, rawBody, headers: { accept: ACCEPT, 'content-type': contentType } });
    const notJson = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expectError(notJson, 400, 'INVALID_REQUEST');
    expect(notJson.body.error.message).toBe('The request body is not valid JSON.');
    expectError(await post('tools/list'), 400, 'INVALID_REQUEST');
    expectError(await post(''), 400, 'INVALID_REQUEST');
    expectError(await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), 'text/plain'), 400, 'INVALID_REQUEST');
    const huge = JSON.stringify(toolsCall(1, 'validate_schema', { schema: { context: 'x'.repeat(140_000) } }));
    expectError(await post(huge), 413, 'PAYLOAD_TOO_LARGE');
    // Valid JSON that is not a JSON-RPC message is the protocol's own parse error.
    const notRpc = await rpc(ws.apiKey, { hello: 'world' });
    expect(notRpc.status).toBe(400);
    expect(notRpc.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });

  it('refuses a missing, malformed, unknown or revoked key and a session with 401 and WWW-Authenticate: Bearer', async () => {
    const own = await newWorkspace();
    const second = await call('POST', `/app/v1/workspaces/${own.workspaceId}/api-keys`, { token: own.session, body: { name: 'to revoke', mode: 'live' } });
    expect(second.status).toBe(201);
    expect((await rpc(second.body.key, toolsCall(1, 'get_account'))).status).toBe(200);
    expect((await call('DELETE', `/app/v1/workspaces/${own.workspaceId}/api-keys/${second.body.id}`, { token: own.session })).status).toBe(204);

    for (const [credential, token] of [
      ['no key', null],
      ['a malformed key', 'not-a-key'],
      ['an unknown key', `svc_live_${'Q'.repeat(32)}`],
      ['a revoked key', second.body.key as string],
      ['a session', own.session],
    ] as const) {
      const reply = await rpc(token, toolsCall(1, 'get_account'));
      expectError(reply, 401, 'INVALID_API_KEY');
      expect({ credential, header: reply.headers.get('www-authenticate') }).toEqual({ credential, header: 'Bearer' });
      expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
    }
    for (const path of ['/mcp', '/%6Dcp', '/%6d%63%70']) {
      const get = await call('GET', path, { token: null });
      expectError(get, 401, 'INVALID_API_KEY');
      expect({ path, header: get.headers.get('www-authenticate') }).toEqual({ path, header: 'Bearer' });
    }
    expect((await call('GET', '/v1/me', { token: null })).headers.get('www-authenticate')).toBeNull();
  });

  it('the SDK client is refused with a bad key and works with a test key', async () => {
    await expect(connect(`svc_live_${'Q'.repeat(32)}`)).rejects.toThrow();
    const testWs = await newWorkspace('test');
    await deployedDecision(testWs, 'tested', triageSchema());
    const client = await connect(testWs.apiKey);
    try {
      const run = await tool(client, 'run_decision', { slug: 'tested', state: { message: 'from a test key' } });
      expect(run.isError).toBe(false);
      expect((await tool(client, 'get_account')).json).toMatchObject({ api_key: { mode: 'test' }, usage: { used: 1 } });
      const executions = await tool(client, 'list_executions', {});
      expect(executions.json.data).toEqual([expect.objectContaining({ id: run.json.execution_id, source: 'mcp', livemode: false })]);
    } finally {
      await client.close();
    }
  });
});

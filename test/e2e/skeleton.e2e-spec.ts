import { Client } from 'pg';
import { call, deploy, createDecision, deployedDecision, expectError, newWorkspace, runDecision, signUp, triageSchema, uniqueMarker } from './support/api';

describe('the thin slice: a decision answers end to end', () => {
  it('runs a deployed decision through gateway, runner, engine-proxy and the engine', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'refund-triage', triageSchema());
    const reply = await runDecision(ws, 'refund-triage', { message: 'I want my money back', amount: 120 });

    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ schema: 'refund-triage', version: 1 });
    expect(reply.body.decision_id).toMatch(/^dec_[A-Za-z0-9]{20}$/);
    expect(reply.body.execution_id).toMatch(/^exec_[A-Za-z0-9]{20}$/);
    expect(Object.keys(reply.body.result)).toEqual(['intent', 'urgency', 'fraud']);
    expect(['refund', 'exchange', 'other']).toContain(reply.body.result.intent);
    expect(['calm', 'annoyed', 'furious']).toContain(reply.body.result.urgency);
    expect(reply.body.result.fraud).toBeGreaterThanOrEqual(0);
    expect(reply.body.result.fraud).toBeLessThanOrEqual(1);
    expect(Object.keys(reply.body.confidence)).toEqual(['intent', 'urgency', 'fraud']);
    expect(['continue', 'block', 'escalate', 'fallback']).toContain(reply.body.action);
    expect(typeof reply.body.action_reason.type).toBe('string');
    expect(reply.body.metrics).toMatchObject({ engine: 'llm', model: 'sim-standard-2026-11-01' });
    expect(reply.body.metrics.input_tokens).toBeGreaterThan(0);
    expect(reply.body.metrics.estimated_cost_usd).toBeGreaterThan(0);
    expect(Number.isInteger(reply.body.metrics.latency_ms)).toBe(true);
  });

  it('records the execution with the caller request id, and never returns the input', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'recorded', triageSchema(undefined, { settings: { storeInput: true } }));
    const reply = await runDecision(ws, 'recorded', { message: 'secret text 12345' }, { 'x-request-id': 'client-req.42:a' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-request-id')).toBe('client-req.42:a');

    const executions = await call('GET', '/v1/executions', { token: ws.apiKey });
    expect(executions.status).toBe(200);
    expect(executions.body.data).toHaveLength(1);
    expect(executions.body.data[0]).toMatchObject({ id: reply.body.execution_id, status: 'success', source: 'api', request_id: 'client-req.42:a', version: 1 });
    expect(executions.text).not.toContain('secret text 12345');

    // The input is kept because the version says storeInput, but only in the runner's own table.
    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await db.connect();
    const stored = await db.query('SELECT input, request_id FROM decision_runner.executions WHERE id = $1', [reply.body.execution_id]);
    await db.end();
    expect(stored.rows[0]).toEqual({ input: { state: { message: 'secret text 12345' } }, request_id: 'client-req.42:a' });
  });

  it('replaces an invalid X-Request-ID with a generated one', async () => {
    const ws = await newWorkspace();
    const reply = await call('GET', '/v1/decisions', { token: ws.apiKey, headers: { 'x-request-id': 'bad id with spaces' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-request-id')).toMatch(/^req_[A-Za-z0-9]{20}$/);
  });

  it('uses the checkpoint engine when the decision pins it, reporting the checkpoint name at no cost', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'pinned', triageSchema(uniqueMarker(), { settings: { engine: 'checkpoint' } }));
    const reply = await runDecision(ws, 'pinned', { message: 'hello' });
    expect(reply.status).toBe(200);
    expect(reply.body.metrics).toMatchObject({ engine: 'checkpoint', model: 'ckpt-triage-7b', estimated_cost_usd: 0 });
  });

  it('answers 404 DECISION_NOT_FOUND, 409 DECISION_NOT_DEPLOYED and 409 DECISION_DISABLED', async () => {
    const ws = await newWorkspace();
    expectError(await runDecision(ws, 'nothing-here', { message: 'x' }), 404, 'DECISION_NOT_FOUND');
    expectError(await runDecision(ws, 'Not_A_Slug', { message: 'x' }), 404, 'DECISION_NOT_FOUND');
    const { id } = await createDecision(ws, 'draft-only', triageSchema());
    expectError(await runDecision(ws, 'draft-only', { message: 'x' }), 409, 'DECISION_NOT_DEPLOYED');
    await deploy(ws, id);
    const off = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/endpoint`, { token: ws.session, body: { enabled: false } });
    expect(off.body).toEqual({ enabled: false });
    expectError(await runDecision(ws, 'draft-only', { message: 'x' }), 409, 'DECISION_DISABLED');
  });

  it('keeps workspaces apart: a key never reaches another workspace’s decision', async () => {
    const [a, b] = await Promise.all([newWorkspace(), newWorkspace()]);
    await deployedDecision(a, 'private-one', triageSchema());
    expectError(await runDecision(b, 'private-one', { message: 'x' }), 404, 'DECISION_NOT_FOUND');
    const listed = await call('GET', '/v1/decisions', { token: b.apiKey });
    expect(listed.body.data).toEqual([]);
    const foreign = await call('POST', `/app/v1/workspaces/${a.workspaceId}/api-keys`, { token: b.session, body: { name: 'x', mode: 'live' } });
    expectError(foreign, 403, 'FORBIDDEN');
    expect(foreign.body.error.details).toEqual({ reason: 'workspace_access' });
  });
});

describe('the application endpoints', () => {
  it('signs up, signs in, signs out', async () => {
    const user = await signUp();
    const signIn = await call('POST', '/app/v1/auth/sign-in', { body: { email: user.email, password: user.password } });
    expect(signIn.status).toBe(200);
    expect(signIn.body.user).toMatchObject({ email: user.email, name: 'Test User' });
    const token = signIn.body.session.token;
    expect((await call('POST', '/app/v1/workspaces', { token, body: { name: 'mine' } })).status).toBe(201);
    expect((await call('POST', '/app/v1/auth/sign-out', { token })).status).toBe(204);
    expectError(await call('POST', '/app/v1/workspaces', { token, body: { name: 'mine' } }), 401, 'UNAUTHORIZED');
    expectError(await call('POST', '/app/v1/auth/sign-in', { body: { email: user.email, password: 'wrongpassword1' } }), 401, 'UNAUTHORIZED');
    expectError(await call('POST', '/app/v1/auth/sign-up', { body: { email: user.email, password: 'anotherpass1', name: 'x' } }), 409, 'CONFLICT');
  });

  it('refuses a weak password and lists every problem', async () => {
    const reply = await call('POST', '/app/v1/auth/sign-up', { body: { email: 'not-an-email', password: 'short', name: '' } });
    expectError(reply, 400, 'INVALID_REQUEST');
    expect(reply.body.error.details.map((d: { path: string }) => d.path)).toEqual(['email', 'password', 'name']);
  });

  it('locks sign-in for the e-mail after 5 wrong attempts', async () => {
    const user = await signUp();
    for (let i = 0; i < 5; i++) {
      expectError(await call('POST', '/app/v1/auth/sign-in', { body: { email: user.email, password: 'wrongpassword1' } }), 401, 'UNAUTHORIZED');
    }
    expectError(await call('POST', '/app/v1/auth/sign-in', { body: { email: user.email, password: user.password } }), 429, 'RATE_LIMITED');
  });

  it('creates, lists and revokes API keys; a revoked key is refused at once', async () => {
    const ws = await newWorkspace();
    const created = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session, body: { name: 'second', mode: 'test' } });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^svc_test_[A-Za-z0-9]{32}$/);
    expect(created.body.id).toMatch(/^key_[A-Za-z0-9]{20}$/);
    const listed = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session });
    expect(listed.body.data.map((k: { name: string }) => k.name)).toEqual(['tests', 'second']);
    expect(listed.text).not.toContain(created.body.key);
    expect((await call('GET', '/v1/decisions', { token: created.body.key })).status).toBe(200);
    expect((await call('DELETE', `/app/v1/workspaces/${ws.workspaceId}/api-keys/${created.body.id}`, { token: ws.session })).status).toBe(204);
    expectError(await call('GET', '/v1/decisions', { token: created.body.key }), 401, 'INVALID_API_KEY');
    expectError(await call('DELETE', `/app/v1/workspaces/${ws.workspaceId}/api-keys/${created.body.id}`, { token: ws.session }), 404, 'NOT_FOUND');
  });

  it('refuses API keys on the application and operator endpoints with 403', async () => {
    const ws = await newWorkspace();
    expectError(await call('POST', '/app/v1/workspaces', { token: ws.apiKey, body: { name: 'x' } }), 403, 'FORBIDDEN');
    expectError(await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { token: ws.apiKey, body: { plan: 'growth' } }), 403, 'FORBIDDEN');
  });

  it('answers 401 INVALID_API_KEY for missing, malformed and unknown keys', async () => {
    expectError(await call('GET', '/v1/decisions'), 401, 'INVALID_API_KEY');
    expectError(await call('GET', '/v1/decisions', { token: 'svc_live_short' }), 401, 'INVALID_API_KEY');
    expectError(await call('GET', '/v1/decisions', { token: `svc_live_${'A'.repeat(32)}` }), 401, 'INVALID_API_KEY');
  });

  it('lets the operator change a plan, with a valid token only', async () => {
    const ws = await newWorkspace();
    const path = `/admin/v1/workspaces/${ws.workspaceId}/plan`;
    expectError(await call('PUT', path, { token: 'wrong-token-wrong-token', body: { plan: 'growth' } }), 401, 'UNAUTHORIZED');
    const changed = await call('PUT', path, { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'growth', overrides: { hard_cap: true } } });
    expect(changed.status).toBe(200);
    expect(changed.body.plan).toMatchObject({ name: 'growth', rate_limit_per_minute: 2000, hard_cap: true });
    expectError(await call('PUT', path, { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'platinum' } }), 400, 'INVALID_REQUEST');
    expectError(
      await call('PUT', '/admin/v1/workspaces/00000000-0000-0000-0000-000000000000/plan', { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'growth' } }),
      404,
      'WORKSPACE_NOT_FOUND',
    );
  });
});

describe('the edge', () => {
  it('serves /health without a key', async () => {
    const reply = await call('GET', '/health');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: 'ok' });
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    expectError(await call('GET', '/nowhere'), 404, 'NOT_FOUND');
  });

  it('refuses malformed JSON, non-object bodies and bad Content-Type with 400', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'bodies', triageSchema());
    const run = (options: { rawBody?: string; headers?: Record<string, string> }) => call('POST', '/v1/decisions/bodies', { token: ws.apiKey, ...options });
    const malformed = await run({ rawBody: '{"state": ', headers: { 'content-type': 'application/json' } });
    expectError(malformed, 400, 'INVALID_REQUEST');
    expect(malformed.body.error.details[0].path).toBe('');
    expectError(await run({ rawBody: '[1,2]', headers: { 'content-type': 'application/json' } }), 400, 'INVALID_REQUEST');
    expectError(await run({ rawBody: '', headers: { 'content-type': 'application/json' } }), 400, 'INVALID_REQUEST');
    expectError(await run({ rawBody: '{"state":{}}', headers: { 'content-type': 'text/plain' } }), 400, 'INVALID_REQUEST');
    expectError(
      await run({ rawBody: '{"state":{"message":"x"}}', headers: { 'content-type': 'application/json', 'idempotency-key': 'bad key!' } }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('refuses a body over 128 KB with 413 and accepts one at the limit', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'big-bodies', triageSchema());
    const envelope = '{"state":{"message":"","pad":""}}'.length;
    const atLimit = `{"state":{"message":"","pad":"${'x'.repeat(131_072 - envelope)}"}}`;
    expect(Buffer.byteLength(atLimit)).toBe(131_072);
    const accepted = await call('POST', '/v1/decisions/big-bodies', { token: ws.apiKey, rawBody: atLimit, headers: { 'content-type': 'application/json' } });
    expect(accepted.status).not.toBe(413);
    const over = await call('POST', '/v1/decisions/big-bodies', { token: ws.apiKey, rawBody: `${atLimit} `, headers: { 'content-type': 'application/json' } });
    expectError(over, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('checks the key before the slug and the slug before the body', async () => {
    expectError(await call('POST', '/v1/decisions/BAD_SLUG', { rawBody: '{', headers: { 'content-type': 'application/json' } }), 401, 'INVALID_API_KEY');
    const ws = await newWorkspace();
    expectError(
      await call('POST', '/v1/decisions/BAD_SLUG', { token: ws.apiKey, rawBody: 'x'.repeat(200_000), headers: { 'content-type': 'application/json' } }),
      404,
      'DECISION_NOT_FOUND',
    );
  });
});

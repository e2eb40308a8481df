import { Client } from 'pg';
import { SUBJECTS } from '@ds/contracts';
import {
  call,
  deployedDecision,
  engineRequests,
  expectError,
  newWorkspace,
  Reply,
  runDecision,
  scriptEngine,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';
import { ServiceRpc } from './support/engine-rpc';

/**
 * The engine's failures as the public API shows them, through gateway, runner and engine-proxy to the
 * scripted simulator. Every test has its own workspace and a marker in its decision's context, so its
 * script applies to its own engine requests only.
 */

/** A workspace with a deployed decision whose context carries a fresh marker. */
async function scripted(settings: Record<string, unknown> = {}): Promise<{ ws: Workspace; marker: string; run: () => Promise<Reply & { ms: number }> }> {
  const ws = await newWorkspace();
  const marker = uniqueMarker();
  await deployedDecision(ws, 'scripted', triageSchema(marker, { settings }));
  const run = async () => {
    const started = Date.now();
    const reply = await runDecision(ws, 'scripted', { message: 'My order arrived broken' });
    return { ...reply, ms: Date.now() - started };
  };
  return { ws, marker, run };
}

describe('engine failures map to the public ENGINE_* errors', () => {
  it.each([
    ['429', [{ status: 429 }], 503, 'ENGINE_RATE_LIMITED', 3],
    ['529', [{ status: 529 }], 503, 'ENGINE_RATE_LIMITED', 3],
    ['500', [{ status: 500 }], 503, 'ENGINE_UNAVAILABLE', 3],
    ['502', [{ status: 502 }], 503, 'ENGINE_UNAVAILABLE', 3],
    ['503', [{ status: 503 }], 503, 'ENGINE_UNAVAILABLE', 3],
    ['a dropped connection', [{ drop: true }], 503, 'ENGINE_UNAVAILABLE', 3],
    ['401', [{ status: 401 }], 502, 'ENGINE_AUTH_FAILED', 1],
    ['403', [{ status: 403 }], 502, 'ENGINE_AUTH_FAILED', 1],
    ['a malformed answer', [{ malformed: true }], 502, 'ENGINE_ERROR', 1],
    ['an answer missing a question', [{ incomplete: true }], 502, 'ENGINE_ERROR', 1],
    ['an answer with an unknown outcome', [{ unknownOutcome: true }], 502, 'ENGINE_ERROR', 1],
    ['an answer with an unknown question', [{ answers: { not_asked: { yes: 1 } } }], 502, 'ENGINE_ERROR', 1],
  ])('%s answers %i %s after %i attempt(s)', async (_what, steps, status, code, attempts) => {
    const { marker, run } = await scripted();
    await scriptEngine(marker, steps, true);
    const reply = await run();
    expectError(reply, status, code);
    expect(await engineRequests(marker)).toHaveLength(attempts);
  });

  it('400 answers 502 ENGINE_INVALID_REQUEST with the provider’s reason, without a retry', async () => {
    const { marker, run } = await scripted();
    await scriptEngine(marker, [{ status: 400, errorMessage: `response_format: schema too deep (${marker})` }], true);
    const reply = await run();
    expectError(reply, 502, 'ENGINE_INVALID_REQUEST');
    expect(reply.body.error.message).toContain(`response_format: schema too deep (${marker})`);
    expect(await engineRequests(marker)).toHaveLength(1);
  });

  it('a slow answer past timeoutMs answers 504 ENGINE_TIMEOUT at the deadline', async () => {
    const { marker, run } = await scripted({ timeoutMs: 1_000 });
    await scriptEngine(marker, [{ delayMs: 4_000 }]);
    const reply = await run();
    expectError(reply, 504, 'ENGINE_TIMEOUT');
    expect(reply.ms).toBeGreaterThanOrEqual(1_000);
    // Well before the simulator would have answered: the deadline cut the attempt short.
    expect(reply.ms).toBeLessThan(3_500);
    expect(await engineRequests(marker)).toHaveLength(1);
  });

  it('retries transient failures and answers 200 when a retry succeeds', async () => {
    const { marker, run } = await scripted();
    await scriptEngine(marker, [{ status: 503 }, { drop: true }, {}]);
    const reply = await run();
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body.result)).toEqual(['intent', 'urgency', 'fraud']);
    expect(await engineRequests(marker)).toHaveLength(3);
  });

  it('never makes a fourth attempt, even when it would succeed', async () => {
    const { marker, run } = await scripted();
    await scriptEngine(marker, [{ status: 500 }, { status: 529 }, { status: 503 }, {}]);
    expectError(await run(), 503, 'ENGINE_UNAVAILABLE');
    expect(await engineRequests(marker)).toHaveLength(3);
  });
});

describe('Retry-After and the deadline', () => {
  it('waits the Retry-After the provider asked for when the deadline leaves room (Retry-After 1, timeoutMs 5000)', async () => {
    const { marker, run } = await scripted({ timeoutMs: 5_000 });
    await scriptEngine(marker, [{ status: 429, retryAfter: 1 }, {}]);
    const reply = await run();
    expect(reply.status).toBe(200);
    const requests = await engineRequests(marker);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(1_000);
  });

  it('does not retry when Retry-After reaches past the deadline (Retry-After 10, timeoutMs 2000)', async () => {
    const { marker, run } = await scripted({ timeoutMs: 2_000 });
    await scriptEngine(marker, [{ status: 429, retryAfter: 10 }, {}]);
    const reply = await run();
    expectError(reply, 503, 'ENGINE_RATE_LIMITED');
    expect(reply.ms).toBeLessThan(5_000);
    expect(await engineRequests(marker)).toHaveLength(1);
  });

  it('retries a 503 with Retry-After only while it fits, then answers the last failure', async () => {
    const { marker, run } = await scripted({ timeoutMs: 2_500 });
    // The first wait fits (1 s of 2.5 s), the second would end past the deadline.
    await scriptEngine(marker, [{ status: 503, retryAfter: 1 }, { status: 503, retryAfter: 2 }, {}]);
    const reply = await run();
    expectError(reply, 503, 'ENGINE_UNAVAILABLE');
    const requests = await engineRequests(marker);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(1_000);
    expect(reply.ms).toBeLessThan(2_500 + 1_000);
  });
});

describe('onEngineError: fallback', () => {
  it('reports the engine the call was routed to, here the workspace’s default, in metrics', async () => {
    const { ws, marker, run } = await scripted({ onEngineError: 'fallback' });
    const settings = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/engine-settings`, { token: ws.session, body: { default_engine: 'checkpoint' } });
    expect(settings.status).toBe(200);
    await scriptEngine(marker, [{ status: 503 }], true);
    const reply = await run();
    expect(reply.status).toBe(200);
    expect(reply.body.action_reason).toEqual({ type: 'engine_error', code: 'ENGINE_UNAVAILABLE' });
    expect([reply.body.metrics.engine, reply.body.metrics.model]).toEqual(['checkpoint', 'ckpt-triage-7b']);
  });

  it.each([
    ['ENGINE_UNAVAILABLE', [{ status: 503 }], {}],
    ['ENGINE_RATE_LIMITED', [{ status: 429 }], {}],
    ['ENGINE_AUTH_FAILED', [{ status: 401 }], {}],
    ['ENGINE_INVALID_REQUEST', [{ status: 400 }], {}],
    ['ENGINE_ERROR', [{ incomplete: true }], {}],
    ['ENGINE_TIMEOUT', [{ delayMs: 3_000 }], { timeoutMs: 500 }],
  ])('turns %s into a 200 with the fallback action and an empty result, not billed', async (code, steps, settings) => {
    const { ws, marker, run } = await scripted({ onEngineError: 'fallback', ...settings });
    await scriptEngine(marker, steps, true);
    const reply = await run();
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      schema: 'scripted',
      version: 1,
      result: {},
      confidence: {},
      action: 'escalate',
      action_reason: { type: 'engine_error', code },
    });
    expect(reply.body.execution_id).toMatch(/^exec_/);
    expect(Number.isInteger(reply.body.metrics.latency_ms)).toBe(true);
    const executions = await call('GET', '/v1/executions', { token: ws.apiKey });
    expect(executions.body.data[0]).toMatchObject({
      id: reply.body.execution_id,
      status: 'success',
      action: 'escalate',
      action_reason: { type: 'engine_error', code },
    });
  });
});

describe('failed runs are executions with status error', () => {
  it('records every engine failure, and the status filter finds them', async () => {
    const { ws, marker, run } = await scripted({ timeoutMs: 800 });
    await scriptEngine(marker, [{ status: 401 }, { delayMs: 2_000 }, {}]);
    const auth = await run();
    const timeout = await run();
    const ok = await run();
    expectError(auth, 502, 'ENGINE_AUTH_FAILED');
    expectError(timeout, 504, 'ENGINE_TIMEOUT');
    expect(ok.status).toBe(200);

    const errors = await call('GET', '/v1/executions?status=error', { token: ws.apiKey });
    expect(errors.status).toBe(200);
    expect(errors.body.data.map((e: { status: string; error: { code: string } }) => [e.status, e.error.code])).toEqual([
      ['error', 'ENGINE_TIMEOUT'],
      ['error', 'ENGINE_AUTH_FAILED'],
    ]);
    for (const execution of errors.body.data) {
      expect(execution).toMatchObject({ decision: 'scripted', version: 1, result: null, action: null });
      expect(typeof execution.error.message).toBe('string');
      expect(execution.request_id).toMatch(/^req_/);
    }
    expect(errors.body.data.map((e: { request_id: string }) => e.request_id)).toEqual([timeout.headers.get('x-request-id'), auth.headers.get('x-request-id')]);
    const successes = await call('GET', '/v1/executions?status=success', { token: ws.apiKey });
    expect(successes.body.data.map((e: { id: string }) => e.id)).toEqual([ok.body.execution_id]);
  });
});

describe('a workspace’s own provider key', () => {
  const rpc = new ServiceRpc();
  afterAll(() => rpc.close());

  it('is saved encrypted, used for the workspace’s runs, shown only by its last four characters', async () => {
    const { ws, marker, run } = await scripted();
    const ownKey = `sk-own-${marker.slice(-12)}`;
    expect(await rpc.ok(SUBJECTS.engine.setProviderKey, { workspaceId: ws.workspaceId, provider: 'openai', apiKey: ownKey })).toEqual({
      provider: 'openai',
      last4: ownKey.slice(-4),
    });
    expect(await rpc.ok(SUBJECTS.engine.getProviderKey, { workspaceId: ws.workspaceId })).toEqual({ provider: 'openai', last4: ownKey.slice(-4) });
    expect(await rpc.ok(SUBJECTS.engine.getSettings, { workspaceId: ws.workspaceId })).toEqual({
      useOwnKey: true,
      providerKey: { provider: 'openai', last4: ownKey.slice(-4) },
      llmProvider: 'openai',
      defaultEngine: null,
      serviceDefaultEngine: 'llm',
    });

    expect((await run()).status).toBe(200);
    const [request] = await engineRequests(marker);
    expect((request as unknown as { headers: Record<string, string> }).headers.authorization).toBe(`Bearer ${ownKey}`);

    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await db.connect();
    try {
      const stored = await db.query('SELECT sealed, last4 FROM engine_proxy.provider_credentials WHERE workspace_id = $1', [ws.workspaceId]);
      expect(stored.rows).toHaveLength(1);
      expect(stored.rows[0].last4).toBe(ownKey.slice(-4));
      expect(stored.rows[0].sealed.includes(Buffer.from(ownKey))).toBe(false);
      expect(stored.rows[0].sealed.includes(Buffer.from(ownKey.slice(0, 10)))).toBe(false);
    } finally {
      await db.end();
    }
  });

  it('answers 424 ENGINE_NOT_CONFIGURED when chosen but not saved, and never turns that into a fallback', async () => {
    const { ws, marker, run } = await scripted({ onEngineError: 'fallback' });
    await rpc.ok(SUBJECTS.engine.setProviderKey, { workspaceId: ws.workspaceId, provider: 'openai', apiKey: 'sk-own-to-be-deleted' });
    expect(await rpc.ok(SUBJECTS.engine.deleteProviderKey, { workspaceId: ws.workspaceId })).toEqual({ deleted: true });
    expect(await rpc.ok(SUBJECTS.engine.deleteProviderKey, { workspaceId: ws.workspaceId })).toEqual({ deleted: false });
    expect(await rpc.ok(SUBJECTS.engine.getProviderKey, { workspaceId: ws.workspaceId })).toBeNull();
    // Deleting the key keeps the choice: the workspace is not moved onto the shared key behind its back.
    expect(await rpc.ok(SUBJECTS.engine.getSettings, { workspaceId: ws.workspaceId })).toMatchObject({ useOwnKey: true, providerKey: null });

    const refused = await run();
    expectError(refused, 424, 'ENGINE_NOT_CONFIGURED');
    expect(await engineRequests(marker)).toHaveLength(0);
    const errors = await call('GET', '/v1/executions?status=error', { token: ws.apiKey });
    expect(errors.body.data[0]).toMatchObject({ status: 'error', error: { code: 'ENGINE_NOT_CONFIGURED' } });

    expect(await rpc.ok(SUBJECTS.engine.setSettings, { workspaceId: ws.workspaceId, useOwnKey: false })).toMatchObject({ useOwnKey: false, providerKey: null });
    expect((await run()).status).toBe(200);
    const [request] = await engineRequests(marker);
    expect((request as unknown as { headers: Record<string, string> }).headers.authorization).toBe('Bearer sim-key');
  });

  it('answers 424 when the saved key is for a provider this service does not speak', async () => {
    const { ws, marker, run } = await scripted();
    await rpc.ok(SUBJECTS.engine.setProviderKey, { workspaceId: ws.workspaceId, provider: 'anthropic', apiKey: 'sk-ant-api03-own-key' });
    const reply = await run();
    expectError(reply, 424, 'ENGINE_NOT_CONFIGURED');
    expect(reply.body.error.message).toContain('anthropic');
    expect(await engineRequests(marker)).toHaveLength(0);
  });

  it('refuses malformed keys and settings with INVALID_REQUEST naming each field', async () => {
    const ws = await newWorkspace();
    const bad = await rpc.call(SUBJECTS.engine.setProviderKey, { workspaceId: ws.workspaceId, provider: 'azure', apiKey: 'short' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', status: 400 } });
    expect(!bad.ok && (bad.error.details as Array<{ path: string }>).map((d) => d.path)).toEqual(['provider', 'api_key']);
    const long = await rpc.call(SUBJECTS.engine.setProviderKey, { workspaceId: ws.workspaceId, provider: 'openai', apiKey: 'k'.repeat(513) });
    expect(long).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', details: [{ path: 'api_key' }] } });
    expect(await rpc.ok(SUBJECTS.engine.setProviderKey, { workspaceId: ws.workspaceId, provider: 'openai', apiKey: 'k'.repeat(512) })).toEqual({
      provider: 'openai',
      last4: 'kkkk',
    });
    const settings = await rpc.call(SUBJECTS.engine.setSettings, { workspaceId: ws.workspaceId, useOwnKey: 'yes' });
    expect(settings).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', details: [{ path: 'use_own_key' }] } });
  });
});

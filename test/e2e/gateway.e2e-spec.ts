import { Client } from 'pg';
import { call, deployedDecision, engineRequests, expectError, newWorkspace, scriptEngine, triageSchema, uniqueMarker, Workspace } from './support/api';
import { GatewayProcess, startGateway, waitFor } from './support/cluster';

/** Two gateway replicas: the cluster's own (A) and one more (B), sharing PostgreSQL, NATS and Redis. */
let b: GatewayProcess;
const A = () => process.env.E2E_BASE_URL!;

beforeAll(async () => {
  b = await startGateway();
}, 60_000);

afterAll(async () => {
  await b?.stop();
});

async function secondKey(ws: Workspace, mode: 'live' | 'test' = 'live'): Promise<string> {
  const reply = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session, body: { name: 'second', mode } });
  return reply.body.key;
}

function run(base: string, token: string, slug: string, state: unknown, headers: Record<string, string> = {}) {
  return call('POST', `/v1/decisions/${slug}`, { token, body: { state }, headers }, base);
}

async function executionCount(ws: Workspace): Promise<number> {
  const reply = await call('GET', '/v1/executions?limit=100', { token: ws.apiKey, headers: {} });
  return reply.body.data.length;
}

describe('rate-limit windows', () => {
  it('sends the window on every authenticated response, and none with a 401', async () => {
    const ws = await newWorkspace();
    const before = Math.floor(Date.now() / 1000);
    const first = await call('GET', '/v1/decisions', { token: ws.apiKey });
    const second = await call('GET', '/v1/decisions', { token: ws.apiKey });
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('58');
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(before + 59);
    expect(reset).toBeLessThanOrEqual(before + 61);
    expect(second.headers.get('x-ratelimit-reset')).toBe(first.headers.get('x-ratelimit-reset'));
    expect(first.headers.get('ratelimit-policy')).toBe('"decisions";q=60;w=60, "reads";q=60;w=60, "webhooks";q=60;w=60, "outcomes";q=120;w=60');
    expect(second.headers.get('ratelimit')).toMatch(/^"reads";r=58;t=(59|60)$/);
    // An error after the key still counts and still carries the headers.
    const missing = await call('GET', '/v1/decisions/no-such', { token: ws.apiKey });
    expectError(missing, 404, 'DECISION_NOT_FOUND');
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('57');
    const unauthenticated = await call('GET', '/v1/decisions', { token: `svc_live_${'x'.repeat(32)}` });
    expectError(unauthenticated, 401, 'INVALID_API_KEY');
    expect(unauthenticated.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('counts one window per workspace across keys and gateway replicas: exactly the plan’s limit passes', async () => {
    const ws = await newWorkspace();
    const keys = [ws.apiKey, await secondKey(ws)] as const;
    // Requests with an invalid key are refused before the window and use none of it.
    for (let i = 0; i < 5; i++) expectError(await call('GET', '/v1/decisions', { token: `svc_live_${'y'.repeat(32)}` }, b.baseUrl), 401, 'INVALID_API_KEY');
    const replies = await Promise.all(
      Array.from({ length: 70 }, (_, i) => call('GET', '/v1/decisions', { token: keys[i % 2] }, i % 2 === 0 ? A() : b.baseUrl)),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(60);
    const limited = replies.filter((r) => r.status === 429);
    expect(limited).toHaveLength(10);
    for (const reply of limited) {
      expectError(reply, 429, 'RATE_LIMITED');
      const retryAfter = Number(reply.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(reply.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    // The decisions window is a window of its own.
    await deployedDecision(ws, 'own-window', triageSchema());
    expect((await run(b.baseUrl, keys[1], 'own-window', { message: 'hi' })).status).toBe(200);
  });

  it('applies a new plan’s limit at once on every replica', async () => {
    const ws = await newWorkspace();
    expect((await call('GET', '/v1/decisions', { token: ws.apiKey }, b.baseUrl)).headers.get('x-ratelimit-limit')).toBe('60');
    const changed = await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'developer' } });
    expect(changed.status).toBe(200);
    await waitFor(
      async () => (await call('GET', '/v1/decisions', { token: ws.apiKey }, b.baseUrl)).headers.get('x-ratelimit-limit') === '300',
      2_000,
      'the new limit on B',
    );
  });
});

describe('API keys across replicas', () => {
  it('refuses a key revoked through one gateway on the other within a second', async () => {
    const ws = await newWorkspace();
    const key = await secondKey(ws);
    expect((await call('GET', '/v1/decisions', { token: key }, b.baseUrl)).status).toBe(200);
    const listed = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session });
    const id = listed.body.data.find((k: { name: string }) => k.name === 'second').id;
    expect((await call('DELETE', `/app/v1/workspaces/${ws.workspaceId}/api-keys/${id}`, { token: ws.session })).status).toBe(204);
    await waitFor(async () => (await call('GET', '/v1/decisions', { token: key }, b.baseUrl)).status === 401, 1_000, 'B refusing the revoked key');
  });

  it('holds 50 active keys per workspace', async () => {
    const ws = await newWorkspace();
    for (let i = 1; i < 50; i++)
      expect((await call('POST', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session, body: { name: `k${i}`, mode: 'live' } })).status).toBe(
        201,
      );
    expectError(
      await call('POST', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session, body: { name: 'k50', mode: 'live' } }),
      409,
      'CONFLICT',
    );
    expect((await call('DELETE', `/app/v1/workspaces/${ws.workspaceId}/api-keys/${ws.keyId}`, { token: ws.session })).status).toBe(204);
    expect((await call('POST', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session, body: { name: 'k50', mode: 'live' } })).status).toBe(201);
  });

  it('runs test keys for real but marks them not live', async () => {
    const ws = await newWorkspace();
    const testKey = await secondKey(ws, 'test');
    await deployedDecision(ws, 'test-mode', triageSchema());
    expect((await run(A(), testKey, 'test-mode', { message: 'hi' })).status).toBe(200);
    const executions = await call('GET', '/v1/executions', { token: ws.apiKey });
    expect(executions.body.data[0]).toMatchObject({ status: 'success', livemode: false });
  });
});

describe('idempotency keys', () => {
  it('replays a fresh 200 byte for byte, without running or billing again', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'idem', triageSchema(marker));
    const first = await run(A(), ws.apiKey, 'idem', { message: 'hi', amount: 1 }, { 'idempotency-key': 'order-1' });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The same JSON with keys in another order is the same request; it may arrive through another replica.
    const replay = await call(
      'POST',
      '/v1/decisions/idem',
      { token: ws.apiKey, rawBody: '{"state":{"amount":1,"message":"hi"}}', headers: { 'content-type': 'application/json', 'idempotency-key': 'order-1' } },
      b.baseUrl,
    );
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('x-ratelimit-remaining')).toBe('58');
    expect(await engineRequests(marker)).toHaveLength(1);
    expect(await executionCount(ws)).toBe(1);
  });

  it('refuses the same key with another request, another slug included, without Retry-After', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'idem-a', triageSchema());
    await deployedDecision(ws, 'idem-b', triageSchema());
    expect((await run(A(), ws.apiKey, 'idem-a', { message: 'one' }, { 'idempotency-key': 'k' })).status).toBe(200);
    for (const reply of [
      await run(A(), ws.apiKey, 'idem-a', { message: 'two' }, { 'idempotency-key': 'k' }),
      await run(A(), ws.apiKey, 'idem-b', { message: 'one' }, { 'idempotency-key': 'k' }),
    ]) {
      expectError(reply, 409, 'IDEMPOTENCY_CONFLICT');
      expect(reply.headers.get('retry-after')).toBeNull();
    }
    // Keys belong to a workspace: another workspace may use the same key.
    const other = await newWorkspace();
    await deployedDecision(other, 'idem-a', triageSchema());
    expect((await run(A(), other.apiKey, 'idem-a', { message: 'two' }, { 'idempotency-key': 'k' })).status).toBe(200);
  });

  it('frees the key when the run fails, and does not keep engine-error fallbacks', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'strict', triageSchema());
    expectError(await run(A(), ws.apiKey, 'strict', { amount: 3 }, { 'idempotency-key': 'retry-me' }), 422, 'INVALID_STATE');
    expect((await run(A(), ws.apiKey, 'strict', { message: 'fixed' }, { 'idempotency-key': 'retry-me' })).status).toBe(200);

    const marker = uniqueMarker();
    await deployedDecision(ws, 'falls-back', triageSchema(marker, { settings: { onEngineError: 'fallback' } }));
    await scriptEngine(marker, [{ status: 401 }]);
    const fallback = await run(A(), ws.apiKey, 'falls-back', { message: 'x' }, { 'idempotency-key': 'fb' });
    expect(fallback.status).toBe(200);
    expect(fallback.body.action_reason).toEqual({ type: 'engine_error', code: 'ENGINE_AUTH_FAILED' });
    const again = await run(A(), ws.apiKey, 'falls-back', { message: 'x' }, { 'idempotency-key': 'fb' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.action_reason.type).not.toBe('engine_error');
    expect(await engineRequests(marker)).toHaveLength(2);
  });

  it('runs exactly once for 50 parallel requests with one key across two replicas', async () => {
    const ws = await newWorkspace();
    await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'developer' } });
    const marker = uniqueMarker();
    await deployedDecision(ws, 'crowd', triageSchema(marker));
    await scriptEngine(marker, [{ delayMs: 1_000 }]);
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => run(i % 2 ? A() : b.baseUrl, ws.apiKey, 'crowd', { message: 'same' }, { 'idempotency-key': 'crowd-1' })),
    );
    const fresh = replies.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const reply of replies.filter((r) => r !== fresh[0])) {
      if (reply.status === 409) {
        expectError(reply, 409, 'IDEMPOTENCY_CONFLICT');
        expect(reply.headers.get('retry-after')).toBe('1');
      } else {
        expect(reply.status).toBe(200);
        expect(reply.headers.get('idempotent-replayed')).toBe('true');
        expect(reply.text).toBe(fresh[0]!.text);
      }
    }
    expect(replies.filter((r) => r.status === 409).length).toBeGreaterThan(0);
    expect(await engineRequests(marker)).toHaveLength(1);
    expect(await executionCount(ws)).toBe(1);
  });

  it('keeps a stored key through a gateway restart, and forgets it after 24 hours', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'durable', triageSchema(marker));
    const first = await run(b.baseUrl, ws.apiKey, 'durable', { message: 'hi' }, { 'idempotency-key': 'durable-1' });
    expect(first.status).toBe(200);

    const port = Number(new URL(b.baseUrl).port);
    await b.stop();
    b = await startGateway(port);
    const replay = await run(b.baseUrl, ws.apiKey, 'durable', { message: 'hi' }, { 'idempotency-key': 'durable-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await engineRequests(marker)).toHaveLength(1);

    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await db.connect();
    await db.query(`UPDATE gateway.idempotency_keys SET expires_at = now() - interval '1 second' WHERE workspace_id = $1 AND key = 'durable-1'`, [
      ws.workspaceId,
    ]);
    await db.end();
    const later = await run(b.baseUrl, ws.apiKey, 'durable', { message: 'hi' }, { 'idempotency-key': 'durable-1' });
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.execution_id).not.toBe(first.body.execution_id);
    expect(await engineRequests(marker)).toHaveLength(2);
  }, 60_000);
});

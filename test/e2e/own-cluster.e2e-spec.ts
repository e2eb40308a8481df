import { readFileSync } from 'node:fs';
import { SUBJECTS } from '@ds/contracts';
import type { EngineSimulator } from '@ds/engine-simulator';
import { call, triageSchema, uniqueMarker } from './support/api';
import { ServiceRpc } from './support/engine-rpc';
import { Cluster, NatsServer, OwnCluster, startOwnCluster, startReplica, waitFor } from './support/cluster';

const SERVICES = 6;
/** Small enough that a Member's decision can build a run answer NATS cannot carry. */
const MAX_PAYLOAD = 64 * 1024;

/**
 * A cluster of its own, so that stopping its NATS, or the cluster itself, disturbs no other test.
 * The tests run in order: the last one shuts the cluster down.
 */
describe('a cluster of its own', () => {
  let own: OwnCluster;
  let nats: NatsServer;
  let cluster: Cluster;
  let simulator: EngineSimulator;

  beforeAll(async () => {
    own = await startOwnCluster(
      'own',
      {
        LOG_LEVEL: 'info',
        // Short enough to watch the ledger settle a reservation nobody settled; longer than any run here.
        BILLING_SETTLE_AFTER_MS: '4000',
        BILLING_SWEEP_INTERVAL_MS: '500',
      },
      { maxPayload: MAX_PAYLOAD },
    );
    ({ cluster, nats, simulator } = own);
  }, 120_000);

  afterAll(async () => {
    await own?.stop();
  });

  const api = (method: string, path: string, options = {}) => call(method, path, options, cluster.baseUrl);
  const readiness = (i: number) => call('GET', '/readyz', {}, `http://127.0.0.1:${cluster.opsBase + i}`);
  const allReady = async (expected: boolean) =>
    (await Promise.all(Array.from({ length: SERVICES }, (_, i) => readiness(i)))).every((r) => (r.status === 200) === expected);

  async function workspaceWithDecision(slug: string, context: string, overrides: Record<string, unknown> = {}) {
    const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${uniqueMarker()}@example.com`, password: 'correcthorse42', name: 'x' } });
    const session = user.body.session.token;
    const workspace = await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'own' } });
    const key = await api('POST', `/app/v1/workspaces/${workspace.body.id}/api-keys`, { token: session, body: { name: 'k', mode: 'live' } });
    const decision = await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions`, {
      token: session,
      body: { slug, name: slug, schema: triageSchema(context, overrides) },
    });
    expect((await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions/${decision.body.id}/deploy`, { token: session })).status).toBe(201);
    return key.body.key as string;
  }

  it('carries the request id into the log lines of the services behind the gateway', async () => {
    const marker = uniqueMarker();
    const key = await workspaceWithDecision('logged', marker);
    await call('POST', '/_sim/scripts', { body: { match: marker, steps: [{ status: 503 }] } }, simulator.url);
    const reply = await api('POST', '/v1/decisions/logged', { token: key, body: { state: { message: 'hi' } }, headers: { 'x-request-id': `trace.${marker}` } });
    expect(reply.status).toBe(200);
    const retryLine = readFileSync(cluster.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'retrying the engine call' && entry.request_id === `trace.${marker}`);
    expect(retryLine).toMatchObject({ service: 'engine-proxy', level: 'warn', code: 'ENGINE_UNAVAILABLE' });
  });

  it('refuses, records and does not bill a run whose answer is larger than NATS carries', async () => {
    // Ten function destinations each carrying a 7,000-character state field: about 70 KB of answer.
    const destinations = Array.from({ length: 10 }, (_, i) => ({
      key: `copy_${i}`,
      type: 'function',
      function: 'archive',
      params: { text: { from: 'state.message' } },
    }));
    const key = await workspaceWithDecision('oversize-answer', uniqueMarker(), { destinations });
    const reply = await api('POST', '/v1/decisions/oversize-answer', { token: key, body: { state: { message: 'x'.repeat(7_000) } } });
    expect({ status: reply.status, code: reply.body.error?.code }).toEqual({ status: 400, code: 'INVALID_REQUEST' });
    expect(reply.body.error.message).toMatch(/too large to send/);
    expect(reply.body.error.message).not.toMatch(/NATS|bytes|\d/);
    const executions = await api('GET', '/v1/executions', { token: key });
    expect(executions.body.data.map((execution: { status: string }) => execution.status)).toEqual(['error']);
    const me = await api('GET', '/v1/me', { token: key });
    expect(me.body.usage).toMatchObject({ used: 0, reserved: 0 });
    const small = await api('POST', '/v1/decisions/oversize-answer', { token: key, body: { state: { message: 'short' } } });
    expect(small.status).toBe(200);
  });

  it('releases a reservation whose run never recorded an execution, as if its runner had died', async () => {
    const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${uniqueMarker()}@example.com`, password: 'correcthorse42', name: 'x' } });
    const workspace = await api('POST', '/app/v1/workspaces', { token: user.body.session.token, body: { name: 'orphan' } });
    const key = await api('POST', `/app/v1/workspaces/${workspace.body.id}/api-keys`, { token: user.body.session.token, body: { name: 'k', mode: 'live' } });
    const rpc = new ServiceRpc(nats.url);
    try {
      // What a runner does at step 6 before dying: the hold exists, no execution ever will.
      await rpc.ok(SUBJECTS.billing.reserve, { workspaceId: workspace.body.id, executionId: 'exec_orphanedrun00000000' });
      const me = () => api('GET', '/v1/me', { token: key.body.key });
      expect((await me()).body.usage).toMatchObject({ used: 0, reserved: 1 });
      await waitFor(async () => (await me()).body.usage.reserved === 0, 15_000, 'the sweeper releasing the hold');
      expect((await me()).body.usage.used).toBe(0);
      // Released for good: the same execution cannot be reserved again.
      const again = await rpc.call(SUBJECTS.billing.reserve, { workspaceId: workspace.body.id, executionId: 'exec_orphanedrun00000000' });
      expect(again).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    } finally {
      await rpc.close();
    }
  }, 30_000);

  it('turns unready when NATS stops and ready again when it returns, without restarting any service', async () => {
    expect(await allReady(true)).toBe(true);
    const pid = cluster.process.pid;
    const key = await workspaceWithDecision('during-outage', uniqueMarker());

    await nats.stop();
    await waitFor(() => allReady(false), 20_000, 'every service unready');
    // A request that needs another service is refused, not buffered: 503 with Retry-After, the error shape,
    // the request id, no internals (no subject names).
    const failed = await api('POST', '/v1/decisions/during-outage', { token: key, body: { state: { message: 'x' } }, headers: { 'x-request-id': 'outage-1' } });
    expect(failed.status).toBe(503);
    expect(failed.body).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), request_id: 'outage-1' } });
    expect(failed.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(failed.text).not.toMatch(/v1\.[a-z-]+\./);
    const read = await api('GET', '/v1/decisions', { token: key });
    expect({ status: read.status, code: read.body.error?.code }).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    const during = await readiness(1);
    expect(during.body).toMatchObject({ status: 'unavailable', checks: { nats: false, database: true } });
    expect((await call('GET', '/livez', {}, `http://127.0.0.1:${cluster.opsBase + 1}`)).status).toBe(200);

    await nats.start();
    await waitFor(() => allReady(true), 30_000, 'every service ready again');
    expect(cluster.process.pid).toBe(pid);
    expect(cluster.process.exitCode).toBeNull();
    // Work flows again over the restored connections: a whole run crosses every service on its path.
    await waitFor(
      async () => (await api('POST', '/v1/decisions/during-outage', { token: key, body: { state: { message: 'back' } } })).status === 200,
      15_000,
      'a run after the outage',
    );
  }, 90_000);

  it('lets exactly 30 of 300 parallel playground runs through in a minute, across two runner replicas', async () => {
    const replica = await startReplica('decision-runner', { DATABASE_URL: own.databaseUrl, NATS_URL: nats.url, RUNNER_SECRETS_DEV_KEY: 'true' });
    try {
      const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${uniqueMarker()}@example.com`, password: 'correcthorse42', name: 'x' } });
      const session = user.body.session.token;
      const workspace = await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'playground race' } });
      const marker = uniqueMarker();
      const decision = await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions`, {
        token: session,
        body: { slug: 'race', name: 'race', schema: triageSchema(marker) },
      });
      const path = `/app/v1/workspaces/${workspace.body.id}/decisions/${decision.body.id}/playground`;
      const replies = await Promise.all(
        Array.from({ length: 300 }, (_, i) => api('POST', path, { token: session, body: { state: { message: `race ${i}` } } })),
      );
      const statuses = new Map<number, number>();
      for (const reply of replies) statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
      expect(Object.fromEntries(statuses)).toEqual({ 200: 30, 429: 270 });
      // A refused run never reaches the engine.
      const engineCalls = await call('GET', `/_sim/requests?match=${marker}`, {}, simulator.url);
      expect(engineCalls.body.data).toHaveLength(30);
      // The second replica answered its share of the race: the count is shared, not per process.
      const metrics = await fetch(`${replica.opsUrl}/metrics`).then((r) => r.text());
      const handled = metrics
        .split('\n')
        .filter((line) => line.startsWith('decision_service_rpc_handled_total') && line.includes(`subject="${SUBJECTS.runner.playground}"`))
        .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
      expect(handled).toBeGreaterThan(0);
    } finally {
      await replica.stop();
    }
  }, 120_000);

  it('finishes a run already in flight when it is told to stop', async () => {
    const marker = uniqueMarker();
    const key = await workspaceWithDecision('in-flight', marker);
    await call('POST', '/_sim/scripts', { body: { match: marker, steps: [{ delayMs: 1_500 }] } }, simulator.url);
    const running = api('POST', '/v1/decisions/in-flight', { token: key, body: { state: { message: 'slow' } } });
    await waitFor(async () => (await call('GET', `/_sim/requests?match=${marker}`, {}, simulator.url)).body.data.length === 1, 5_000, 'the engine call');

    const stopped = cluster.stop();
    const reply = await running;
    expect(reply.status).toBe(200);
    expect(reply.body.execution_id).toMatch(/^exec_/);
    await stopped;
    expect(cluster.process.exitCode).toBe(0);
    const log = readFileSync(cluster.logFile, 'utf8');
    expect(log).not.toContain('graceful shutdown took too long');
    expect(log.match(/"msg":"stopped"/g)).toHaveLength(6);
  }, 30_000);
});

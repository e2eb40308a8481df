import { call } from './support/api';
import { Cluster, freshDatabase, NatsServer, startCluster, startNats, waitFor } from './support/cluster';

const SERVICES = 6;

/** A cluster of its own, so that stopping its NATS disturbs no other test. */
describe('readiness follows NATS', () => {
  let nats: NatsServer;
  let cluster: Cluster;

  beforeAll(async () => {
    const [databaseUrl, server] = await Promise.all([freshDatabase('decision_service_e2e_outage_test'), startNats()]);
    nats = server;
    cluster = await startCluster({ DATABASE_URL: databaseUrl, NATS_URL: nats.url }, 'outage');
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await nats?.stop();
  });

  const readiness = (i: number) => call('GET', '/readyz', {}, `http://127.0.0.1:${cluster.opsBase + i}`);
  const allReady = async (expected: boolean) => (await Promise.all(Array.from({ length: SERVICES }, (_, i) => readiness(i)))).every((r) => (r.status === 200) === expected);

  it('turns unready when NATS stops and ready again when it returns, without restarting any service', async () => {
    expect(await allReady(true)).toBe(true);
    const pid = cluster.process.pid;

    await nats.stop();
    await waitFor(() => allReady(false), 20_000, 'every service unready');
    const during = await readiness(1);
    expect(during.body).toMatchObject({ status: 'unavailable', checks: { nats: false, database: true } });
    expect((await call('GET', '/livez', {}, `http://127.0.0.1:${cluster.opsBase + 1}`)).status).toBe(200);

    await nats.start();
    await waitFor(() => allReady(true), 30_000, 'every service ready again');
    expect(cluster.process.pid).toBe(pid);
    expect(cluster.process.exitCode).toBeNull();
    expect((await call('GET', '/health', {}, cluster.baseUrl)).status).toBe(200);
    // Requests flow again over the restored connection: a session-less app call reaches the gateway,
    // and a sign-up travels gateway → billing-ledger over NATS when the workspace is created.
    const signUp = await call('POST', '/app/v1/auth/sign-up', { body: { email: `outage-${Date.now()}@example.com`, password: 'correcthorse42', name: 'x' } }, cluster.baseUrl);
    expect(signUp.status).toBe(201);
    await waitFor(async () => (await call('POST', '/app/v1/workspaces', { token: signUp.body.session.token, body: { name: 'after' } }, cluster.baseUrl)).status === 201, 15_000, 'a NATS round trip');
  }, 90_000);
});

import { readFileSync } from 'node:fs';
import { call, triageSchema, uniqueMarker } from './support/api';
import { Cluster, OwnCluster, startOwnCluster, waitFor } from './support/cluster';

/**
 * The all-in-one launcher as a supervisor: a service killed with SIGKILL comes back by itself while the rest
 * keep answering, and a service that keeps dying stops the launcher with its name. A cluster of its own, since
 * the last test ends it.
 */
describe('the all-in-one launcher supervises its services', () => {
  let own: OwnCluster;
  let cluster: Cluster;
  let apiKey: string;

  beforeAll(async () => {
    own = await startOwnCluster('supervision', {
      // Long enough for the test to see the gap a crash leaves; the crash-loop limit small enough to reach.
      RESTART_DELAY_MS: '1500',
      CRASH_LOOP_LIMIT: '3',
    });
    cluster = own.cluster;
    const api = (method: string, path: string, options = {}) => call(method, path, options, cluster.baseUrl);
    const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${uniqueMarker()}@example.com`, password: 'correcthorse42', name: 'x' } });
    const session = user.body.session.token;
    const workspace = await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'supervised' } });
    apiKey = (await api('POST', `/app/v1/workspaces/${workspace.body.id}/api-keys`, { token: session, body: { name: 'k', mode: 'live' } })).body.key;
    const decision = await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions`, {
      token: session,
      body: { slug: 'triage', name: 'triage', schema: triageSchema('supervision') },
    });
    expect((await api('POST', `/app/v1/workspaces/${workspace.body.id}/decisions/${decision.body.id}/deploy`, { token: session })).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await own?.stop();
  });

  const log = () => readFileSync(cluster.logFile, 'utf8');
  const run = () => call('POST', '/v1/decisions/triage', { token: apiKey, body: { state: { message: 'where is my parcel?' } } }, cluster.baseUrl);

  /** The pid the launcher last reported for a service: at start, or when it came back. */
  function pidOf(service: string): number {
    const started = new RegExp(`all-in-one: processes: .*?${service} (\\d+)`).exec(log());
    const back = [...log().matchAll(new RegExp(`all-in-one: ${service} is back \\(pid (\\d+)`, 'g'))].pop();
    return Number((back ?? started)![1]);
  }

  async function killAndWaitForReturn(service: string): Promise<void> {
    const returns = (log().match(new RegExp(`${service} is back`, 'g')) ?? []).length;
    process.kill(pidOf(service), 'SIGKILL');
    await waitFor(async () => (log().match(new RegExp(`${service} is back`, 'g')) ?? []).length > returns, 30_000, `${service} back`);
  }

  it('restarts a killed decision-runner; meanwhile runs get a clear 503, and traffic resumes', async () => {
    expect((await run()).status).toBe(200);
    const pid = pidOf('decision-runner');
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => log().includes('decision-runner crashed (signal SIGKILL); restarting in 1500 ms'), 10_000, 'the crash to be logged');

    const during = await run();
    expect(during.status).toBe(503);
    expect(during.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(during.headers.get('retry-after')).toMatch(/^\d+$/);
    // The gateway and the others stay up and say so.
    expect((await call('GET', '/health', {}, cluster.baseUrl)).status).toBe(200);

    await waitFor(async () => (await run()).status === 200, 30_000, 'runs to succeed again');
    // The runner can answer before the launcher's own readiness poll has seen it and said so.
    await waitFor(async () => log().includes('decision-runner is back'), 30_000, 'the launcher to report the return');
    expect(pidOf('decision-runner')).not.toBe(pid);
    expect(cluster.process.exitCode).toBeNull();
  }, 60_000);

  it('comes back from a crash of each other service too', async () => {
    for (const service of ['engine-proxy', 'billing-ledger', 'gateway']) {
      await killAndWaitForReturn(service);
      await waitFor(async () => (await run().catch(() => ({ status: 0 }))).status === 200, 30_000, `runs after ${service} returned`);
    }
  }, 120_000);

  it('stops everything, naming the service, when it crashes in a loop', async () => {
    let code: number | null | undefined;
    cluster.process.once('exit', (exitCode) => (code = exitCode));
    // The limit is three crashes a minute; earlier tests may have spent some of them, so kill until it gives up.
    for (let kills = 1; code === undefined; kills++) {
      expect(kills).toBeLessThanOrEqual(3);
      const returns = (log().match(/decision-runner is back/g) ?? []).length;
      process.kill(pidOf('decision-runner'), 'SIGKILL');
      await waitFor(async () => code !== undefined || (log().match(/decision-runner is back/g) ?? []).length > returns, 30_000, 'a return or the end');
    }
    expect(code).toBe(1);
    expect(log()).toMatch(/decision-runner crashed 3 times within a minute \(last: signal SIGKILL\); it is in a crash loop, stopping everything/);
  }, 90_000);
});

import { call, newWorkspace, opsPort, runDecision, deployedDecision, triageSchema } from './support/api';
import { startGateway, waitFor } from './support/cluster';

const SERVICES = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner'];
const ops = (index: number) => `http://127.0.0.1:${opsPort(index)}`;

describe('probes and metrics of every service', () => {
  it.each(SERVICES.map((name, index) => [name, index] as const))('%s answers liveness, readiness and metrics', async (_name, index) => {
    expect((await call('GET', '/livez', {}, ops(index))).body).toEqual({ status: 'ok' });
    const ready = await call('GET', '/readyz', {}, ops(index));
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok', checks: { nats: true, database: true } });
    const metrics = await call('GET', '/metrics', {}, ops(index));
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(metrics.text).toContain(`process_cpu_user_seconds_total{service="${SERVICES[index]}"}`);
  });

  it('counts handled requests with RED metrics on both sides of a NATS hop', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'metered', triageSchema());
    expect((await runDecision(ws, 'metered', { message: 'hello' })).status).toBe(200);
    const gateway = (await call('GET', '/metrics', {}, ops(0))).text;
    expect(gateway).toMatch(/decision_service_http_requests_total\{method="POST",route="\/v1\/decisions\/:slug",status="200",service="gateway"\} [1-9]/);
    expect(gateway).toMatch(/decision_service_rpc_calls_total\{subject="v1\.decision-runner\.run",outcome="ok",service="gateway"\} [1-9]/);
    const runner = (await call('GET', '/metrics', {}, ops(1))).text;
    expect(runner).toMatch(/decision_service_rpc_handled_total\{subject="v1\.decision-runner\.run",outcome="ok",service="decision-runner"\} [1-9]/);
    expect(runner).toContain('decision_service_rpc_handle_duration_seconds_bucket');
    const engine = (await call('GET', '/metrics', {}, ops(2))).text;
    expect(engine).toMatch(/decision_service_rpc_handled_total\{subject="v1\.engine-proxy\.answer",outcome="ok",service="engine-proxy"\} [1-9]/);
  });
});

describe('a gateway told to stop', () => {
  it('answers 503 shutting_down on readiness at once and keeps taking requests for SHUTDOWN_DELAY_MS, then stops cleanly', async () => {
    const replica = await startGateway(undefined, { SHUTDOWN_DELAY_MS: '4000' });
    expect((await call('GET', '/readyz', {}, replica.opsUrl)).status).toBe(200);
    const exited = new Promise<number | null>((done) => replica.process.once('exit', (code) => done(code)));
    replica.process.kill('SIGTERM');
    let readiness = await call('GET', '/readyz', {}, replica.opsUrl);
    await waitFor(async () => (readiness = await call('GET', '/readyz', {}, replica.opsUrl)).status !== 200, 3_000, 'readiness to turn');
    expect(readiness.status).toBe(503);
    expect(readiness.body).toMatchObject({ status: 'shutting_down' });
    // Out of the balancer's set, still answering what reaches it on a new connection.
    const health = await fetch(`${replica.baseUrl}/health`, { headers: { connection: 'close' } });
    expect(health.status).toBe(200);
    expect(await exited).toBe(0);
  });
});

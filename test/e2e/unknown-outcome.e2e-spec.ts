import { call, deployedDecision, engineRequests, expectError, newWorkspace, scriptEngine, triageSchema, uniqueMarker } from './support/api';
import { GatewayProcess, startGateway, waitFor } from './support/cluster';

/**
 * A run whose gateway stopped waiting has an unknown outcome: the runner may still finish it. Its
 * Idempotency-Key stays reserved until the lease ends, so a retry is refused rather than run again, and the
 * runner, told the gateway's deadline, neither bills nor answers past it.
 */
describe('a run whose gateway timed out', () => {
  let impatient: GatewayProcess;

  beforeAll(async () => {
    impatient = await startGateway(undefined, { RUN_REPLY_TIMEOUT_MS: '1500' });
  }, 60_000);

  afterAll(async () => {
    await impatient?.stop();
  });

  it('is not run twice: the retry with the same Idempotency-Key is refused, and nothing is billed', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'slow', triageSchema(marker));
    await scriptEngine(marker, [{ delayMs: 4_000 }], true);
    const run = (base: string) =>
      call(
        'POST',
        '/v1/decisions/slow',
        { token: ws.apiKey, body: { state: { message: 'slow engine' } }, headers: { 'idempotency-key': `retry-${marker}` } },
        base,
      );

    const timedOut = await run(impatient.baseUrl);
    expectError(timedOut, 503, 'SERVICE_UNAVAILABLE');
    expect(timedOut.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(timedOut.text).not.toMatch(/v1\.[a-z-]+\./);

    // The same key, through either gateway, while the first run may still be going and after it ended.
    for (const base of [impatient.baseUrl, process.env.E2E_BASE_URL!]) {
      const retry = await run(base);
      expectError(retry, 409, 'IDEMPOTENCY_CONFLICT');
      expect(retry.headers.get('retry-after')).toBe('1');
    }
    const executions = () => call('GET', '/v1/executions', { token: ws.apiKey });
    await waitFor(async () => (await executions()).body.data.length === 1, 15_000, 'the first run to be recorded');
    expectError(await run(process.env.E2E_BASE_URL!), 409, 'IDEMPOTENCY_CONFLICT');

    const recorded = (await executions()).body.data;
    expect(recorded).toHaveLength(1);
    // The runner gave up at the gateway's deadline: recorded as an error, its reservation released.
    expect(recorded[0]).toMatchObject({ decision: 'slow', status: 'error', error: { code: 'SERVICE_UNAVAILABLE' } });
    expect(await engineRequests(marker)).toHaveLength(1);
    // The release follows the record by a moment.
    const usage = async () => (await call('GET', '/v1/me', { token: ws.apiKey })).body.usage;
    await waitFor(async () => (await usage()).reserved === 0, 10_000, 'the reservation to be released');
    expect(await usage()).toMatchObject({ used: 0, reserved: 0 });
  }, 60_000);
});

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './support/cluster';

/**
 * The chaos run of `npm run chaos`, short and with a fixed seed: every service killed once, the billing-ledger
 * once more inside a budget-lease grant, NATS, Redis and PostgreSQL restarted once, under steady load, and every invariant checked afterwards (test/chaos). It starts
 * its own PostgreSQL, NATS and Redis, so it disturbs no other test.
 */
describe('faults survived', () => {
  it('keeps every invariant while each service is killed and each dependency restarted', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'dist', 'test', 'chaos', 'run-chaos.js')], {
      env: { ...process.env, CHAOS_SEED: '20261123', CHAOS_DURATION_S: '30', CHAOS_CONCURRENCY: '4' },
      encoding: 'utf8',
      timeout: 420_000,
    });
    const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    if (run.status !== 0) process.stdout.write(output);
    expect(output).toContain('chaos: every invariant held (seed 20261123)');
    expect(run.status).toBe(0);
    // Each of the ten faults was injected.
    expect(output.match(/chaos: [\d.]+ s: (SIGKILL|restart) /g)).toHaveLength(10);
    expect(output).toContain('SIGKILL billing-ledger inside a lease grant');
  }, 480_000);
});

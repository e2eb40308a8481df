import { expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { EnvReader } from '@ds/platform';
import { Keyring, sealingKeyFingerprint } from '@ds/sealing';
import { BillingConfig, readBillingConfig } from '../../apps/billing-ledger/src/config';
import { DecisionRunnerConfig, readDecisionRunnerConfig } from '../../apps/decision-runner/src/config';

/**
 * A service's configuration as its specs start it: read by the service's own reader from a few settings, so that
 * every other field has the default a deployment has, and a new setting needs no edit in each spec.
 */
const TEST_ENV = { APP_URL: 'http://app.test' };

/** The runner with the public development key, no purge rounds, no Redis and no budget leases. */
export function runnerTestConfig(env: Record<string, string> = {}): DecisionRunnerConfig {
  return readDecisionRunnerConfig(
    new EnvReader({ ...TEST_ENV, RUNNER_SECRETS_DEV_KEY: 'true', EXECUTION_PURGE_INTERVAL_MS: '0', BILLING_LEASES: 'false', ...env }),
  );
}

/** The ledger without Redis (every run reserves on its own). */
export function billingTestConfig(env: Record<string, string> = {}): BillingConfig {
  return readBillingConfig(new EnvReader({ ...TEST_ENV, ...env }));
}

/** What a service's reader makes of `env`, and the configuration problem it reports (null when there is none). */
export function readConfig<C>(read: (env: EnvReader) => C, env: Record<string, string>): { config: C; problem: string | null } {
  const reader = new EnvReader(env);
  const config = read(reader);
  let problem: string | null = null;
  try {
    reader.done();
  } catch (error) {
    problem = (error as Error).message;
  }
  return { config, problem };
}

/**
 * The two cases every service with a keyring at rest must pass, for its own variable names: the key is required
 * unless the development key is asked for, and a ring of named keys is read with the first sealing.
 */
export function itReadsSealingKeys<C>(
  read: (env: Record<string, string>) => { config: C; problem: string | null },
  names: { variable: string; devSwitch: string; developmentKey: Buffer },
  keysOf: (config: C) => { keyring: Keyring; development: boolean },
): void {
  it(`requires ${names.variable} unless the development key is asked for explicitly`, () => {
    expect(read({}).problem).toBe(
      `invalid configuration: ${names.variable} is required (openssl rand -base64 32); only the all-in-one launcher runs without it, with ${names.devSwitch}=true`,
    );
    const dev = read({ [names.devSwitch]: 'true' });
    expect(dev.problem).toBeNull();
    expect(keysOf(dev.config).development).toBe(true);
    expect(keysOf(dev.config).keyring.primaryId).toBe(sealingKeyFingerprint(names.developmentKey));
  });

  it('reads a ring of named keys, the first sealing', () => {
    const [first, second] = [randomBytes(32), randomBytes(32)];
    const { config, problem } = read({ [names.variable]: `2025-06:${first.toString('base64')},2024-01:${second.toString('base64')}` });
    expect(problem).toBeNull();
    expect(keysOf(config).development).toBe(false);
    expect(keysOf(config).keyring.primaryId).toBe('2025-06');
    expect(keysOf(config).keyring.keys.get('2025-06')?.equals(first)).toBe(true);
    expect(keysOf(config).keyring.keys.get('2024-01')?.equals(second)).toBe(true);
  });
}

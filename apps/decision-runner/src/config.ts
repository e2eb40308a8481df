import { EnvReader, readSealingKeys } from '@ds/platform';
import { developmentKey, Keyring } from '@ds/sealing';

/** Used only when RUNNER_SECRETS_DEV_KEY asks for it; derived from public text, so it protects nothing. */
export const DEV_RUNNER_SECRETS_KEY = developmentKey('runner secrets');

export interface DecisionRunnerConfig {
  /** The application's address, for links in errors (a plan upgrade). */
  appUrl: string;
  /** How often executions past their workspace's retention are deleted; 0 turns the purge off. */
  executionPurgeIntervalMs: number;
  /** Sync agents may be plain http and private addresses (tests and local development only). */
  allowPrivateTargets: boolean;
  /** AES-256-GCM keys for the secret-URL secrets at rest (RUNNER_SECRETS_KEY): the first seals, every one opens. */
  secretsKeys: Keyring;
  /** True when the public development key stands in (RUNNER_SECRETS_DEV_KEY, set by the all-in-one launcher). */
  secretsKeyIsDev: boolean;
  /** Where budget leases are counted (step 6 without a ledger hop); without it every run reserves on its own. */
  redisUrl: string | null;
  /** Step 6 takes units of budget leases (BILLING_LEASES, on by default, with REDIS_URL); off, every run reserves on its own. */
  billingLeases: boolean;
  /** Worker threads for heavy CPU work such as calibration fits (LAB_WORKERS, 1 by default: a small machine has few cores to spare). */
  labWorkers: number;
  /** Database connections heavy reads may hold at once (LAB_DB_CONNECTIONS, 1 by default); live runs keep the rest of the pool. */
  labDbConnections: number;
}

export function readDecisionRunnerConfig(env: EnvReader): DecisionRunnerConfig {
  const secrets = readSealingKeys(env, 'RUNNER_SECRETS_KEY', 'RUNNER_SECRETS_DEV_KEY', DEV_RUNNER_SECRETS_KEY);
  return {
    appUrl: env.url('APP_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/$/, ''),
    executionPurgeIntervalMs: env.int('EXECUTION_PURGE_INTERVAL_MS', 3_600_000, 0, 86_400_000),
    allowPrivateTargets: env.bool('DELIVERY_ALLOW_PRIVATE_TARGETS', false),
    secretsKeys: secrets.keyring,
    secretsKeyIsDev: secrets.development,
    redisUrl: env.url('REDIS_URL', undefined, ['redis', 'rediss']) ?? null,
    billingLeases: env.bool('BILLING_LEASES', true),
    labWorkers: env.int('LAB_WORKERS', 1, 1, 16),
    labDbConnections: env.int('LAB_DB_CONNECTIONS', 1, 1, 8),
  };
}

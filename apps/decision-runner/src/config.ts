import { EnvReader } from '@ds/platform';

export interface DecisionRunnerConfig {
  /** The application's address, for links in errors (a plan upgrade). */
  appUrl: string;
  /** How often executions past their workspace's retention are deleted; 0 turns the purge off. */
  executionPurgeIntervalMs: number;
  /** Sync agents may be plain http and private addresses (tests and local development only). */
  allowPrivateTargets: boolean;
}

export function readDecisionRunnerConfig(env: EnvReader): DecisionRunnerConfig {
  return {
    appUrl: env.url('APP_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/$/, ''),
    executionPurgeIntervalMs: env.int('EXECUTION_PURGE_INTERVAL_MS', 3_600_000, 0, 86_400_000),
    allowPrivateTargets: env.bool('DELIVERY_ALLOW_PRIVATE_TARGETS', false),
  };
}

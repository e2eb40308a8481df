import { EnvReader, readSealingKeys } from '@ds/platform';
import { developmentKey, Keyring } from '@ds/sealing';
import { WORKSPACE_WINDOW_MS } from '@ds/webhooks';

/** Used only when DELIVERY_SECRETS_DEV_KEY asks for it; derived from public text, so it protects nothing. */
export const DEV_DELIVERY_SECRETS_KEY = developmentKey('delivery secrets');

export interface DeliveryConfig {
  /** Plain-http and private, loopback or link-local targets allowed: tests and local development only. */
  allowPrivateTargets: boolean;
  /** Scale of the retry schedule (1: about 7 hours; tests use a small fraction). */
  retryScale: number;
  /** How often deliveries older than the retention and expired signing secrets are deleted (0: never). */
  purgeIntervalMs: number;
  /** AES-256-GCM keys for the signing secrets at rest (DELIVERY_SECRETS_KEY): the first seals, every one opens. */
  secretsKeys: Keyring;
  /** True when the public development key stands in (DELIVERY_SECRETS_DEV_KEY, set by the all-in-one launcher). */
  secretsKeyIsDev: boolean;
  /** Redis for the per-workspace windows counted across replicas; null counts them in this process only. */
  redisUrl: string | null;
  /**
   * Length of the per-workspace window of 600 attempt starts (DELIVERY_WINDOW_MS, 60000). For tests only, which
   * shorten it so that a full window empties within seconds: a shorter window lets more than 600 a minute through,
   * so the setting stays out of the Helm chart and the kustomize base.
   */
  windowMs: number;
}

export function readDeliveryConfig(env: EnvReader): DeliveryConfig {
  const secrets = readSealingKeys(env, 'DELIVERY_SECRETS_KEY', 'DELIVERY_SECRETS_DEV_KEY', DEV_DELIVERY_SECRETS_KEY);
  return {
    allowPrivateTargets: env.bool('DELIVERY_ALLOW_PRIVATE_TARGETS', false),
    retryScale: env.number('DELIVERY_RETRY_SCALE', 1, 0, 1000),
    purgeIntervalMs: env.int('DELIVERY_PURGE_INTERVAL_MS', 3_600_000, 0, 86_400_000),
    secretsKeys: secrets.keyring,
    secretsKeyIsDev: secrets.development,
    redisUrl: env.url('REDIS_URL', undefined, ['redis', 'rediss']) ?? null,
    windowMs: env.int('DELIVERY_WINDOW_MS', WORKSPACE_WINDOW_MS, 1_000, WORKSPACE_WINDOW_MS),
  };
}

import { EnvReader } from '@ds/platform';

export interface DeliveryConfig {
  /** Plain-http and private, loopback or link-local targets allowed: tests and local development only. */
  allowPrivateTargets: boolean;
  /** Scale of the retry schedule (1: about 7 hours; tests use a small fraction). */
  retryScale: number;
  /** How often deliveries older than the retention and expired signing secrets are deleted (0: never). */
  purgeIntervalMs: number;
  /** Redis for the per-workspace windows counted across replicas; null counts them in this process only. */
  redisUrl: string | null;
}

export function readDeliveryConfig(env: EnvReader): DeliveryConfig {
  return {
    allowPrivateTargets: env.bool('DELIVERY_ALLOW_PRIVATE_TARGETS', false),
    retryScale: env.number('DELIVERY_RETRY_SCALE', 1, 0, 1000),
    purgeIntervalMs: env.int('DELIVERY_PURGE_INTERVAL_MS', 3_600_000, 0, 86_400_000),
    redisUrl: env.url('REDIS_URL', undefined, ['redis', 'rediss']) ?? null,
  };
}

import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import Redis from 'ioredis';
import { ConfigError, Logger, redact } from '@ds/platform';

export interface RateLimitStore {
  storage: ThrottlerStorage;
  /** Readiness of the shared store; absent for the in-process one. */
  ping?: () => Promise<boolean>;
  /** Called by Nest when the gateway shuts down. */
  onApplicationShutdown(): Promise<void>;
}

/**
 * Redis, so that every gateway replica counts into the same windows; or an in-process store, which is
 * right only when a single gateway runs (all-in-one mode without Redis).
 */
export async function openRateLimitStore(kind: 'redis' | 'memory', redisUrl: string, logger: Logger): Promise<RateLimitStore> {
  if (kind === 'memory') {
    const storage = new ThrottlerStorageService();
    logger.warn('rate-limit windows are counted in this process only (RATE_LIMIT_STORE=memory): run one gateway replica');
    return { storage, onApplicationShutdown: async () => storage.onApplicationShutdown() };
  }
  // Commands fail at once while Redis is away instead of queueing behind the outage.
  const redis = new Redis(redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 3_000 });
  redis.on('error', (error) => logger.debug({ err: error }, 'Redis connection error'));
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new ConfigError(`cannot reach Redis at ${redact(redisUrl)} (${(error as Error).message}); set REDIS_URL, or RATE_LIMIT_STORE=memory for a single gateway`);
  }
  return {
    storage: new ThrottlerStorageRedisService(redis),
    ping: async () => (await redis.ping()) === 'PONG',
    onApplicationShutdown: async () => void (await redis.quit().catch(() => redis.disconnect())),
  };
}

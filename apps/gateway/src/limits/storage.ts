import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import Redis from 'ioredis';
import { ServiceError } from '@ds/contracts';
import { ConfigError, Logger, redact, redisClient } from '@ds/platform';

/** One request counted in a fixed window. */
export interface WindowHit {
  /** Requests counted in the window, this one included. */
  hits: number;
  /** Whole seconds until the window ends (at least 1 while it runs). */
  secondsLeft: number;
}

/** Fixed windows that start with their first request and end `windowMs` later. */
export interface WindowCounter {
  /** `name` tells windows of the same key apart (decisions, reads, webhooks). */
  hit(key: string, name: string, windowMs: number): Promise<WindowHit>;
}

export interface RateLimitStore {
  /** The per-workspace request windows, one store round trip per request. */
  windows: WindowCounter;
  /** Ceilings on credentials, with the store's blocking (see CredentialLimits). */
  storage: ThrottlerStorage;
  /**
   * Milliseconds left of a block `storage` placed on (`key`, `name`), read without counting; absent for the
   * in-process store, whose blocks the one gateway already knows.
   */
  blockedMs?: (key: string, name: string) => Promise<number>;
  /** Readiness of the shared store; absent for the in-process one. */
  ping?: () => Promise<boolean>;
  /** Called by Nest when the gateway shuts down. */
  onApplicationShutdown(): Promise<void>;
}

/**
 * Counts a hit and starts the window on its first one, in one round trip. Named as the throttler storage
 * names its keys, so that counts carry over while replicas of both versions run.
 */
const WINDOW_HIT_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
local msLeft = redis.call('PTTL', KEYS[1])
if msLeft <= 0 then
  msLeft = tonumber(ARGV[1])
  redis.call('PEXPIRE', KEYS[1], msLeft)
end
return {hits, msLeft}
`;

type WindowCommands = Redis & { windowHit(key: string, windowMs: number): Promise<[number, number]> };

export class RedisWindowCounter implements WindowCounter {
  private readonly redis: WindowCommands;

  constructor(redis: Redis) {
    redis.defineCommand('windowHit', { numberOfKeys: 1, lua: WINDOW_HIT_SCRIPT });
    this.redis = redis as WindowCommands;
  }

  async hit(key: string, name: string, windowMs: number): Promise<WindowHit> {
    const [hits, msLeft] = await this.redis.windowHit(`{${key}:${name}}:hits`, windowMs).catch(storeUnavailable);
    return { hits, secondsLeft: Math.ceil(msLeft / 1000) };
  }
}

/**
 * While Redis is away a window cannot be counted, and letting requests through uncounted would lift every
 * limit at once: the request is refused as a retryable 503, never as the caller's fault or a 500.
 */
function storeUnavailable(error: unknown): never {
  throw Object.assign(new ServiceError('SERVICE_UNAVAILABLE', 'The rate-limit store is unreachable right now. Retry shortly.'), { cause: error });
}

/** The throttler's Redis storage, its outages answered as storeUnavailable says. */
class GuardedThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly inner: ThrottlerStorage) {}

  increment(...args: Parameters<ThrottlerStorage['increment']>): ReturnType<ThrottlerStorage['increment']> {
    return this.inner.increment(...args).catch(storeUnavailable);
  }
}

/**
 * Windows of this process only, in the throttler's in-memory storage. The storage never blocks here (the
 * limit it is given cannot be reached), so that it counts every request exactly as the Redis script does;
 * whether a request is allowed is decided from the count.
 */
export class MemoryWindowCounter implements WindowCounter {
  constructor(private readonly storage: ThrottlerStorage) {}

  async hit(key: string, name: string, windowMs: number): Promise<WindowHit> {
    const record = await this.storage.increment(key, windowMs, Number.MAX_SAFE_INTEGER, windowMs, name);
    return { hits: record.totalHits, secondsLeft: record.timeToExpire };
  }
}

/**
 * Redis, so that every gateway replica counts into the same windows; or an in-process store, which is
 * right only when a single gateway runs (all-in-one mode without Redis).
 */
export async function openRateLimitStore(kind: 'redis' | 'memory', redisUrl: string, logger: Logger): Promise<RateLimitStore> {
  if (kind === 'memory') {
    const storage = new ThrottlerStorageService();
    logger.warn('rate-limit windows are counted in this process only (RATE_LIMIT_STORE=memory): run one gateway replica');
    return { windows: new MemoryWindowCounter(storage), storage, onApplicationShutdown: async () => storage.onApplicationShutdown() };
  }
  // The windows of requests arriving in one event-loop turn go to Redis in one write.
  const redis = redisClient(redisUrl, logger, { purpose: 'rate-limit windows', pipelined: true, connectTimeoutMs: 3_000 });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new ConfigError(
      `cannot reach Redis at ${redact(redisUrl)} (${(error as Error).message}); set REDIS_URL, or RATE_LIMIT_STORE=memory for a single gateway`,
    );
  }
  return {
    windows: new RedisWindowCounter(redis),
    storage: new GuardedThrottlerStorage(new ThrottlerStorageRedisService(redis)),
    // The block key as ThrottlerStorageRedisService names it.
    blockedMs: async (key, name) => Math.max(0, await redis.pttl(`{${key}:${name}}:blocked`).catch(storeUnavailable)),
    ping: async () => (await redis.ping()) === 'PONG',
    onApplicationShutdown: async () => void (await redis.quit().catch(() => redis.disconnect())),
  };
}

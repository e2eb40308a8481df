import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { slotFreedChannel, slotLeaseMs, slotPollDelayMs, slotSetKey } from '@ds/engine';
import { Logger, redact, redisClient } from '@ds/platform';
import { QUEUE_FULL, QueueFull, SlotLease } from './local-semaphore';

/**
 * Takes a slot when fewer than ARGV[1] unexpired leases exist. Expiry is read from Redis's own clock, so
 * replicas whose clocks disagree still agree on which leases are over. The set itself expires with its
 * longest lease, so an idle credential leaves nothing behind.
 */
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
if redis.call('PTTL', KEYS[1]) < lease then
  redis.call('PEXPIRE', KEYS[1], lease)
end
return 1
`;

/** Gives a lease back and, when it was still held, tells the waiters of every replica to try again. */
const RELEASE_SCRIPT = `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('PUBLISH', ARGV[2], '1')
end
return 1
`;

type SlotCommands = Redis & {
  acquireSlot(key: string, limit: number, leaseMs: number, leaseId: string): Promise<number>;
  releaseSlot(key: string, leaseId: string, channel: string): Promise<number>;
};

/**
 * Lease ids are unique across replicas by a random prefix drawn once per process, and within it by a
 * counter: drawing random bytes per call showed in the profile.
 */
const LEASE_ID_PREFIX = `${randomBytes(9).toString('base64url')}.`;
let leaseCount = 0;

/** Raised when Redis cannot answer; the caller then counts in its own process. */
export class SlotStoreUnavailable extends Error {
  override readonly name = 'SlotStoreUnavailable';
}

/**
 * Shared-key slots as a distributed semaphore: a sorted set of leases per credential. Waiters poll with a
 * short backoff and are woken early by a release notice on a pub/sub channel.
 */
export class RedisSlots {
  private readonly redis: SlotCommands;
  private readonly subscriber: Redis;
  private readonly subscribed = new Set<string>();
  /** Waiters of this process per channel, oldest first. */
  private readonly wakers = new Map<string, Array<() => void>>();
  /** Calls of this process waiting for a slot, per credential. */
  private readonly waiting = new Map<string, number>();

  constructor(
    readonly url: string,
    private readonly logger: Logger,
  ) {
    // Acquires and releases of calls handled in one event-loop turn go to Redis in one write.
    this.redis = redisClient<SlotCommands>(url, logger, {
      purpose: 'engine slots',
      pipelined: true,
      scripts: { acquireSlot: ACQUIRE_SCRIPT, releaseSlot: RELEASE_SCRIPT },
    });
    this.subscriber = redisClient(url, logger, { purpose: 'engine slot releases' });
    // One release frees one slot: waking one waiter per replica, not all, keeps a crowd of waiters from
    // stampeding Redis on every release. The others keep polling.
    this.subscriber.on('message', (channel: string) => this.wakers.get(channel)?.[0]?.());
  }

  /** Connects both connections; false when Redis does not answer now (they keep trying in the background). */
  async connect(): Promise<boolean> {
    const results = await Promise.allSettled([this.redis.connect(), this.subscriber.connect()]);
    const failed = results.find((result) => result.status === 'rejected');
    if (failed)
      this.logger.warn(
        { redis: redact(this.url), reason: String((failed as PromiseRejectedResult).reason?.message ?? failed) },
        'Redis for shared-key slots is not reachable yet; counting in this process until it is',
      );
    return !failed;
  }

  get available(): boolean {
    return this.redis.status === 'ready';
  }

  async ping(): Promise<boolean> {
    return (await this.redis.ping()) === 'PONG';
  }

  /**
   * A lease, or null when none frees before `deadline`, or QUEUE_FULL at once when none is free and `maxWaiters`
   * calls of this process already wait. Throws SlotStoreUnavailable when Redis fails, so that the caller can go on
   * waiting in its own process for the time left.
   */
  async acquire(fingerprint: string, limit: number, deadline: number, maxWaiters = Infinity): Promise<SlotLease | null | QueueFull> {
    const key = slotSetKey(fingerprint);
    const channel = slotFreedChannel(fingerprint);
    const leaseId = `${LEASE_ID_PREFIX}${++leaseCount}`;
    this.subscribe(channel);
    let queued = false;
    try {
      for (let attempt = 0; ; attempt++) {
        const msLeft = deadline - Date.now();
        let taken: number;
        try {
          taken = await this.redis.acquireSlot(key, limit, slotLeaseMs(Math.max(msLeft, 0)), leaseId);
        } catch (error) {
          throw new SlotStoreUnavailable((error as Error).message);
        }
        if (taken === 1) return this.lease(key, channel, leaseId);
        const left = deadline - Date.now();
        if (left <= 0) return null;
        if (!queued) {
          const waiting = this.waiting.get(fingerprint) ?? 0;
          if (waiting >= maxWaiters) return QUEUE_FULL;
          this.waiting.set(fingerprint, waiting + 1);
          queued = true;
        }
        await this.nap(channel, slotPollDelayMs(attempt, left));
      }
    } finally {
      if (queued) {
        const waiting = (this.waiting.get(fingerprint) ?? 1) - 1;
        if (waiting > 0) this.waiting.set(fingerprint, waiting);
        else this.waiting.delete(fingerprint);
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.redis, this.subscriber].map((connection) => connection.quit().catch(() => connection.disconnect())));
  }

  private lease(key: string, channel: string, leaseId: string): SlotLease {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.redis
          .releaseSlot(key, leaseId, channel)
          .catch((error: unknown) => this.logger.warn({ err: error }, 'could not give a shared-key slot back; its lease expires by itself'));
      },
    };
  }

  private subscribe(channel: string): void {
    if (this.subscribed.has(channel)) return;
    this.subscribed.add(channel);
    // Missing a notice only costs a poll interval, so a failed subscribe is retried on a later wait.
    this.subscriber.subscribe(channel).catch(() => this.subscribed.delete(channel));
  }

  /** Sleeps for `ms`, or less when a release on this credential is announced. */
  private nap(channel: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let queue = this.wakers.get(channel);
      if (!queue) {
        queue = [];
        this.wakers.set(channel, queue);
      }
      const waiters = queue;
      const wake = () => {
        clearTimeout(timer);
        const index = waiters.indexOf(wake);
        if (index >= 0) waiters.splice(index, 1);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      waiters.push(wake);
    });
  }
}

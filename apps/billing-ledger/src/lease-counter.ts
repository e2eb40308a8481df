import Redis from 'ioredis';
import { leaseCounterKey, PUT_LEASE_SCRIPT, RECLAIM_LEASE_SCRIPT } from '@ds/billing';
import { Logger, redisClient } from '@ds/platform';

/** The ledger's side of the lease counter in Redis: putting a lease in, and reclaiming what runs did not take. */
export interface LeaseCounter {
  /** Puts a new lease in for `ttlMs`; answers the lease it replaced and its untaken units, or null when there was none. */
  put(workspaceId: string, leaseId: string, units: number, ttlMs: number): Promise<{ leaseId: string; left: number } | null>;
  /** Ends the lease in the counter and answers its untaken units; null when the counter no longer holds it. */
  reclaim(workspaceId: string, leaseId: string): Promise<number | null>;
  close(): Promise<void>;
}

export const LEASE_COUNTER = Symbol('lease-counter');

/** How long a counter outlives the time it gives units in, so that its rest can still be reclaimed. */
const KEEP_AFTER_MS = 10 * 60_000;

type LeaseCommands = Redis & {
  putLease(key: string, leaseId: string, units: number, ttlMs: number, keepMs: number): Promise<[string | null, string | null]>;
  reclaimLease(key: string, leaseId: string): Promise<number>;
};

export class RedisLeaseCounter implements LeaseCounter {
  private readonly redis: LeaseCommands;

  constructor(url: string, logger: Logger) {
    // A grant that cannot reach Redis fails at once: runs then reserve one by one until it is back.
    this.redis = redisClient<LeaseCommands>(url, logger, {
      purpose: 'lease counter',
      scripts: { putLease: PUT_LEASE_SCRIPT, reclaimLease: RECLAIM_LEASE_SCRIPT },
    });
    this.redis.connect().catch((error: unknown) => logger.warn({ err: error }, 'lease counter: Redis is not reachable yet; runs reserve one by one'));
  }

  async put(workspaceId: string, leaseId: string, units: number, ttlMs: number): Promise<{ leaseId: string; left: number } | null> {
    const [previousId, left] = await this.redis.putLease(leaseCounterKey(workspaceId), leaseId, units, ttlMs, KEEP_AFTER_MS);
    return previousId ? { leaseId: previousId, left: Math.max(Number(left ?? 0), 0) } : null;
  }

  async reclaim(workspaceId: string, leaseId: string): Promise<number | null> {
    const left = Number(await this.redis.reclaimLease(leaseCounterKey(workspaceId), leaseId));
    return left < 0 ? null : left;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { Logger, Metrics, OutageLog, PLATFORM, redact } from '@ds/platform';
import { EngineProxyConfig } from '../config';
import { LocalSemaphores, QUEUE_FULL, QueueFull, SlotLease } from './local-semaphore';
import { RedisSlots, SlotStoreUnavailable } from './redis-slots';

/**
 * Concurrent calls on the service's shared provider key, at most ENGINE_SHARED_SLOTS at once. With Redis
 * the count holds across every engine-proxy replica. Without it (no REDIS_URL) it holds per process,
 * which is right only for a single replica. While a configured Redis is away, calls are counted in this
 * process rather than refused: a short outage of the slot store should not stop every decision, and the
 * provider's own 429s, which are retried and mapped, still protect the key. Readiness says it meanwhile.
 */
@Injectable()
export class SharedSlots implements OnModuleInit, OnModuleDestroy {
  private readonly local = new LocalSemaphores();
  private readonly redis: RedisSlots | null;
  private readonly waits: Histogram<'store' | 'outcome'>;
  private readonly outage: OutageLog;

  constructor(
    @Inject(PLATFORM.config) private readonly config: EngineProxyConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Inject(PLATFORM.metrics) metrics: Metrics,
  ) {
    this.redis = config.redisUrl ? new RedisSlots(config.redisUrl, logger) : null;
    this.waits = new Histogram({
      name: 'decision_service_engine_slot_wait_seconds',
      help: 'Time engine calls on the shared key waited for a slot, by store and outcome (acquired or rejected)',
      labelNames: ['store', 'outcome'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [metrics.registry],
    });
    this.outage = new OutageLog(logger, {
      lost: 'Redis for shared-key slots is unavailable; counting slots in this process until it is back',
      restored: 'Redis for shared-key slots is back; counting across replicas again',
    });
  }

  async onModuleInit(): Promise<void> {
    if (this.redis) {
      await this.redis.connect();
      this.logger.info(
        { redis: redact(this.redis.url), slots: this.config.sharedSlots },
        'shared-key slots: counted in Redis across every engine-proxy replica',
      );
    } else {
      this.logger.warn(
        { slots: this.config.sharedSlots },
        'shared-key slots: counted in this process only (no REDIS_URL); right only with a single engine-proxy replica',
      );
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.redis?.close();
  }

  /** Readiness checks: Redis, when slots are counted there. */
  readinessChecks(): Record<string, () => Promise<boolean>> {
    const redis = this.redis;
    return redis ? { redis: () => redis.ping() } : {};
  }

  /**
   * A slot on the shared credential `fingerprint`; null when none freed before `deadline` (epoch ms); QUEUE_FULL at
   * once when none is free and ENGINE_SLOT_QUEUE calls of this process already wait for one.
   */
  async acquire(fingerprint: string, deadline: number): Promise<SlotLease | null | QueueFull> {
    const started = performance.now();
    const { sharedSlots, slotQueue } = this.config;
    let store = 'memory';
    let lease: SlotLease | null | QueueFull = null;
    if (this.redis?.available) {
      store = 'redis';
      try {
        lease = await this.redis.acquire(fingerprint, sharedSlots, deadline, slotQueue);
        this.outage.restored();
      } catch (error) {
        if (!(error instanceof SlotStoreUnavailable)) throw error;
        this.outage.lost(error.message);
        store = 'memory';
        lease = await this.local.acquire(fingerprint, sharedSlots, deadline, slotQueue);
      }
    } else {
      if (this.redis) this.outage.lost('not connected');
      lease = await this.local.acquire(fingerprint, sharedSlots, deadline, slotQueue);
    }
    const outcome = lease === QUEUE_FULL ? 'queue_full' : lease ? 'acquired' : 'rejected';
    this.waits.observe({ store, outcome }, (performance.now() - started) / 1000);
    return lease === null || lease === QUEUE_FULL ? lease : this.timed(lease);
  }

  /**
   * When a caller refused at once may try again: about how long a slot is held now (a moving average), by when
   * the calls ahead of it have mostly given theirs back. Whole seconds, 1 to 60.
   */
  retryAfterSeconds(): number {
    return Math.min(60, Math.max(1, Math.ceil(this.heldMs / 1000)));
  }

  /** Moving average of how long a slot was held, over about the last 100 calls. */
  private heldMs = 1_000;

  private timed(lease: SlotLease): SlotLease {
    const taken = performance.now();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.heldMs += (performance.now() - taken - this.heldMs) / 100;
        lease.release();
      },
    };
  }
}

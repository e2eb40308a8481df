import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { Logger, redact, redisClient } from '@ds/platform';
import { WindowDecision, windowDecision, workspaceWindowKey } from '@ds/webhooks';

/**
 * Counts one attempt start when fewer than ARGV[1] starts lie within the last ARGV[2] milliseconds. Times are
 * Redis's own, so replicas whose clocks disagree still agree on what the window holds. The set expires a window
 * after its newest start, so an idle workspace leaves nothing behind.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, now}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, now, tonumber(oldest[2]) + window - now}
`;

type WindowCommands = Redis & {
  takeWindow(key: string, limit: number, windowMs: number, member: string): Promise<unknown>;
};

/**
 * Starts in the same millisecond must stay distinct members: a random prefix drawn once per process keeps
 * replicas apart, a counter keeps this process's starts apart.
 */
const MEMBER_PREFIX = `${randomBytes(9).toString('base64url')}.`;
let memberCount = 0;

/** Raised when Redis cannot answer; the caller then counts in its own process. */
export class WindowStoreUnavailable extends Error {
  override readonly name = 'WindowStoreUnavailable';
}

/** The per-workspace windows of every delivery replica, in Redis: one script call per attempt. */
export class RedisWindow {
  private readonly redis: WindowCommands;

  constructor(
    readonly url: string,
    private readonly logger: Logger,
  ) {
    // Commands fail at once while Redis is away instead of queueing behind the outage, and a Redis that
    // stops answering costs a take at most a second: the caller then counts in its own process.
    this.redis = redisClient<WindowCommands>(url, logger, {
      purpose: 'delivery windows',
      commandTimeoutMs: 1_000,
      // A take given up on was counted here instead; resending it after a reconnect would count it twice.
      resendAfterReconnect: false,
      // Takes of attempts started in one event-loop turn go to Redis in one write.
      pipelined: true,
      scripts: { takeWindow: TAKE_SCRIPT },
    });
  }

  /** Connects; false when Redis does not answer now (the connection keeps trying in the background). */
  async connect(): Promise<boolean> {
    try {
      await this.redis.connect();
      return true;
    } catch (error) {
      this.logger.warn(
        { redis: redact(this.url), reason: (error as Error).message },
        'Redis for the delivery windows is not reachable yet; counting in this process until it is',
      );
      return false;
    }
  }

  get available(): boolean {
    return this.redis.status === 'ready';
  }

  /** Counts an attempt of `workspaceId` now, or answers how long until one fits. Throws WindowStoreUnavailable. */
  async take(workspaceId: string, limit: number, windowMs: number): Promise<WindowDecision> {
    let reply: unknown;
    try {
      reply = await this.redis.takeWindow(workspaceWindowKey(workspaceId), limit, windowMs, `${MEMBER_PREFIX}${++memberCount}`);
    } catch (error) {
      throw new WindowStoreUnavailable((error as Error).message);
    }
    const decision = windowDecision(reply);
    if (!decision) throw new WindowStoreUnavailable(`unexpected answer of the window script: ${JSON.stringify(reply)}`);
    return decision;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

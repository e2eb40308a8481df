import { ThrottlerStorageService } from '@nestjs/throttler';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { MemoryWindowCounter, RedisWindowCounter, WindowCounter } from './storage';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The same expectations for both stores: every request counted, the window fixed from its first one. */
function windowBehaviour(name: string, open: () => { counter: WindowCounter; close(): Promise<void> }) {
  describe(name, () => {
    let store: ReturnType<typeof open>;
    let key: string;

    beforeEach(() => {
      store = open();
      key = `unit:rl:ws_${randomBytes(6).toString('hex')}:decisions`;
    });

    afterEach(() => store.close());

    it('counts every hit, past any limit, and reports the seconds left of a fresh window', async () => {
      const counts = [];
      for (let i = 0; i < 5; i++) counts.push(await store.counter.hit(key, 'decisions', 60_000));
      expect(counts.map((count) => count.hits)).toEqual([1, 2, 3, 4, 5]);
      for (const count of counts) {
        expect(count.secondsLeft).toBeGreaterThanOrEqual(59);
        expect(count.secondsLeft).toBeLessThanOrEqual(60);
      }
    });

    it('keeps windows of the same key with different names apart, and counts concurrent hits exactly', async () => {
      const hits = await Promise.all(Array.from({ length: 40 }, () => store.counter.hit(key, 'decisions', 60_000)));
      expect(hits.map((hit) => hit.hits).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect((await store.counter.hit(key, 'reads', 60_000)).hits).toBe(1);
    });

    it('starts a new window once the old one has ended', async () => {
      await store.counter.hit(key, 'decisions', 300);
      expect((await store.counter.hit(key, 'decisions', 300)).hits).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect((await store.counter.hit(key, 'decisions', 300)).hits).toBe(1);
    });
  });
}

windowBehaviour('windows counted in Redis', () => {
  const redis = new Redis(REDIS_URL);
  return { counter: new RedisWindowCounter(redis), close: async () => void (await redis.quit()) };
});

windowBehaviour('windows counted in this process', () => {
  const storage = new ThrottlerStorageService();
  return { counter: new MemoryWindowCounter(storage), close: async () => storage.onApplicationShutdown() };
});

describe('the Redis window key', () => {
  it('is the key the throttler storage counted in, so counts carry over between versions', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const key = `unit:rl:ws_${randomBytes(6).toString('hex')}:reads`;
      await new RedisWindowCounter(redis).hit(key, 'reads', 60_000);
      expect(await redis.get(`{${key}:reads}:hits`)).toBe('1');
      const ttl = await redis.pttl(`{${key}:reads}:hits`);
      expect(ttl).toBeGreaterThan(58_000);
    } finally {
      await redis.quit();
    }
  });
});

describe('a Redis that went away', () => {
  it('refuses the request as a retryable 503 instead of counting nothing or failing with a 500', async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    await redis.connect();
    const counter = new RedisWindowCounter(redis);
    redis.disconnect();
    await expect(counter.hit('unit:rl:gone', 'decisions', 60_000)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
  });
});

import Redis from 'ioredis';
import { Logger } from './logger';
import { redisClient } from './redis-client';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const debugged: string[] = [];
const logger = { debug: (_fields: unknown, message: string) => debugged.push(message), warn: () => undefined } as unknown as Logger;

describe('a Redis client', () => {
  it('connects when asked and runs the scripts it was given as commands on one key', async () => {
    const client = redisClient<Redis & { bump(key: string, by: number): Promise<number> }>(REDIS_URL, logger, {
      purpose: 'test',
      pipelined: true,
      scripts: { bump: `return redis.call('INCRBY', KEYS[1], ARGV[1])` },
    });
    expect(client.status).toBe('wait');
    await client.connect();
    try {
      const key = `redis-client-spec:${process.pid}:${Date.now()}`;
      expect(await Promise.all([client.bump(key, 2), client.bump(key, 3)])).toEqual([2, 5]);
      await client.del(key);
    } finally {
      client.disconnect();
    }
  });

  it('fails its commands at once while Redis cannot be reached, instead of queueing them, and logs why at debug', async () => {
    // Port 1 on loopback refuses connections.
    const client = redisClient(`redis://127.0.0.1:1`, logger, { purpose: 'unreachable', connectTimeoutMs: 500 });
    try {
      await expect(client.connect()).rejects.toThrow();
      await expect(client.get('anything')).rejects.toThrow(/writeable|offline|closed/i);
      expect(debugged).toContain('unreachable: Redis connection error');
    } finally {
      client.disconnect();
    }
  });
});

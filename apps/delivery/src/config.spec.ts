import { EnvReader } from '@ds/platform';
import { readDeliveryConfig } from './config';

function read(env: Record<string, string>) {
  const reader = new EnvReader(env);
  const config = readDeliveryConfig(reader);
  let problem: string | null = null;
  try {
    reader.done();
  } catch (error) {
    problem = (error as Error).message;
  }
  return { config, problem };
}

describe('delivery configuration', () => {
  it('counts the windows in this process when REDIS_URL is not set', () => {
    expect(read({})).toMatchObject({ problem: null, config: { redisUrl: null } });
  });

  it('reads REDIS_URL for windows shared by every replica', () => {
    expect(read({ REDIS_URL: 'rediss://:secret@redis.internal:6380/0' })).toMatchObject({
      problem: null,
      config: { redisUrl: 'rediss://:secret@redis.internal:6380/0' },
    });
  });

  it('refuses a REDIS_URL that is not a Redis address', () => {
    expect(read({ REDIS_URL: 'http://redis.internal:6379' }).problem).toContain('REDIS_URL must use redis or rediss://');
  });
});

import { randomBytes } from 'node:crypto';
import { EnvReader } from '@ds/platform';
import { sealingKeyFingerprint } from '@ds/sealing';
import { DEV_DELIVERY_SECRETS_KEY, readDeliveryConfig } from './config';

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

describe('delivery signing-secrets key configuration', () => {
  it('requires DELIVERY_SECRETS_KEY unless the development key is asked for explicitly', () => {
    expect(read({}).problem).toBe(
      'invalid configuration: DELIVERY_SECRETS_KEY is required (openssl rand -base64 32); only the all-in-one launcher runs without it, with DELIVERY_SECRETS_DEV_KEY=true',
    );
    const dev = read({ DELIVERY_SECRETS_DEV_KEY: 'true' });
    expect(dev.problem).toBeNull();
    expect(dev.config.secretsKeyIsDev).toBe(true);
    expect(dev.config.secretsKeys.primaryId).toBe(sealingKeyFingerprint(DEV_DELIVERY_SECRETS_KEY));
  });

  it('reads a ring of named keys, the first sealing', () => {
    const first = randomBytes(32);
    const { config, problem } = read({ DELIVERY_SECRETS_KEY: `2025-06:${first.toString('base64')},2024-01:${randomBytes(32).toString('base64')}` });
    expect(problem).toBeNull();
    expect(config.secretsKeyIsDev).toBe(false);
    expect(config.secretsKeys.primaryId).toBe('2025-06');
    expect(config.secretsKeys.keys.get('2025-06')?.equals(first)).toBe(true);
  });
});

describe('delivery configuration', () => {
  it('counts the windows in this process when REDIS_URL is not set', () => {
    expect(read({ DELIVERY_SECRETS_DEV_KEY: 'true' })).toMatchObject({ problem: null, config: { redisUrl: null } });
  });

  it('reads REDIS_URL for windows shared by every replica', () => {
    expect(read({ DELIVERY_SECRETS_DEV_KEY: 'true', REDIS_URL: 'rediss://:secret@redis.internal:6380/0' })).toMatchObject({
      problem: null,
      config: { redisUrl: 'rediss://:secret@redis.internal:6380/0' },
    });
  });

  it('refuses a REDIS_URL that is not a Redis address', () => {
    expect(read({ DELIVERY_SECRETS_DEV_KEY: 'true', REDIS_URL: 'http://redis.internal:6379' }).problem).toContain('REDIS_URL must use redis or rediss://');
  });

  it('counts 600 attempts a minute unless DELIVERY_WINDOW_MS shortens the window, and refuses one longer than a minute', () => {
    expect(read({ DELIVERY_SECRETS_DEV_KEY: 'true' }).config.windowMs).toBe(60_000);
    expect(read({ DELIVERY_SECRETS_DEV_KEY: 'true', DELIVERY_WINDOW_MS: '20000' })).toMatchObject({ problem: null, config: { windowMs: 20_000 } });
    expect(read({ DELIVERY_SECRETS_DEV_KEY: 'true', DELIVERY_WINDOW_MS: '120000' }).problem).toBe(
      'invalid configuration: DELIVERY_WINDOW_MS must be an integer from 1000 to 60000 (got 120000)',
    );
    expect(read({ DELIVERY_SECRETS_DEV_KEY: 'true', DELIVERY_WINDOW_MS: '0' }).problem).toContain('DELIVERY_WINDOW_MS must be an integer from 1000 to 60000');
  });
});

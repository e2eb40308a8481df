import { DEV_DELIVERY_SECRETS_KEY, readDeliveryConfig } from './config';
import { itReadsSealingKeys, readConfig } from '../../../test/support/service-configs';

const read = (env: Record<string, string>) => readConfig(readDeliveryConfig, env);

describe('delivery signing-secrets key configuration', () => {
  itReadsSealingKeys(read, { variable: 'DELIVERY_SECRETS_KEY', devSwitch: 'DELIVERY_SECRETS_DEV_KEY', developmentKey: DEV_DELIVERY_SECRETS_KEY }, (config) => ({
    keyring: config.secretsKeys,
    development: config.secretsKeyIsDev,
  }));
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

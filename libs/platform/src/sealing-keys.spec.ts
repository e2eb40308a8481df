import { randomBytes } from 'node:crypto';
import { developmentKey, sealingKeyFingerprint } from '@ds/sealing';
import { ConfigError, EnvReader } from './config';
import { readSealingKeys } from './sealing-keys';

const DEV_KEY = developmentKey('test secrets');

function read(vars: Record<string, string>) {
  const env = new EnvReader(vars);
  const keys = readSealingKeys(env, 'TEST_SECRETS_KEY', 'TEST_SECRETS_DEV_KEY', DEV_KEY);
  try {
    env.done();
    return { keys, problem: null };
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return { keys, problem: (error as ConfigError).message };
  }
}

describe('readSealingKeys', () => {
  it('requires the key unless the development key is asked for explicitly', () => {
    expect(read({}).problem).toBe(
      'invalid configuration: TEST_SECRETS_KEY is required (openssl rand -base64 32); only the all-in-one launcher runs without it, with TEST_SECRETS_DEV_KEY=true',
    );
    expect(read({ TEST_SECRETS_DEV_KEY: 'false' }).problem).toContain('TEST_SECRETS_KEY is required');
    const dev = read({ TEST_SECRETS_DEV_KEY: 'true' });
    expect(dev.problem).toBeNull();
    expect(dev.keys.development).toBe(true);
    expect(dev.keys.keyring.primaryId).toBe(sealingKeyFingerprint(DEV_KEY));
  });

  it('reads a ring whose first key seals, and prefers it to the development key', () => {
    const first = randomBytes(32);
    const second = randomBytes(32);
    const { keys, problem } = read({
      TEST_SECRETS_KEY: `2025-06:${first.toString('base64')},2024-01:${second.toString('base64')}`,
      TEST_SECRETS_DEV_KEY: 'true',
    });
    expect(problem).toBeNull();
    expect(keys.development).toBe(false);
    expect(keys.keyring.primaryId).toBe('2025-06');
    expect(keys.keyring.keys.get('2024-01')?.equals(second)).toBe(true);
  });

  it('names a malformed ring or switch without echoing the key', () => {
    const { problem } = read({ TEST_SECRETS_KEY: 'k:c2hvcnQ=', TEST_SECRETS_DEV_KEY: 'maybe' });
    expect(problem).toContain('TEST_SECRETS_KEY must hold keys of 32 bytes');
    expect(problem).toContain('TEST_SECRETS_DEV_KEY must be true or false');
    expect(problem).not.toContain('c2hvcnQ=');
  });
});

import { randomBytes } from 'node:crypto';
import { DEV_CREDENTIALS_KEY } from '@ds/engine';
import { EnvReader } from '@ds/platform';
import { sealingKeyFingerprint } from '@ds/sealing';
import { readEngineProxyConfig } from './config';

function read(env: Record<string, string>) {
  const reader = new EnvReader(env);
  const config = readEngineProxyConfig(reader);
  let problem: string | null = null;
  try {
    reader.done();
  } catch (error) {
    problem = (error as Error).message;
  }
  return { config, problem };
}

describe('engine-proxy credentials key configuration', () => {
  it('requires ENGINE_CREDENTIALS_KEY unless the development key is asked for explicitly', () => {
    expect(read({}).problem).toContain('ENGINE_CREDENTIALS_KEY is required');
    const dev = read({ ENGINE_CREDENTIALS_DEV_KEY: 'true' });
    expect(dev.problem).toBeNull();
    expect(dev.config.credentialsKeyIsDev).toBe(true);
    expect(dev.config.credentialsKeys.primaryId).toBe(sealingKeyFingerprint(DEV_CREDENTIALS_KEY));
  });

  it('reads a ring of named keys, the first sealing', () => {
    const first = randomBytes(32);
    const second = randomBytes(32);
    const { config, problem } = read({ ENGINE_CREDENTIALS_KEY: `2025-06:${first.toString('base64')},2024-01:${second.toString('base64')}` });
    expect(problem).toBeNull();
    expect(config.credentialsKeyIsDev).toBe(false);
    expect(config.credentialsKeys.primaryId).toBe('2025-06');
    expect(config.credentialsKeys.keys.get('2024-01')?.equals(second)).toBe(true);
  });

  it('refuses a malformed key even when the development key is allowed', () => {
    const { problem } = read({ ENGINE_CREDENTIALS_KEY: 'k:short', ENGINE_CREDENTIALS_DEV_KEY: 'true' });
    expect(problem).toContain('ENGINE_CREDENTIALS_KEY must hold keys of 32 bytes');
  });
});

import { randomBytes } from 'node:crypto';
import { EnvReader } from '@ds/platform';
import { sealingKeyFingerprint } from '@ds/sealing';
import { DEV_RUNNER_SECRETS_KEY, readDecisionRunnerConfig } from './config';

function read(env: Record<string, string>) {
  const reader = new EnvReader(env);
  const config = readDecisionRunnerConfig(reader);
  let problem: string | null = null;
  try {
    reader.done();
  } catch (error) {
    problem = (error as Error).message;
  }
  return { config, problem };
}

describe('decision-runner secret-URL secrets key configuration', () => {
  it('requires RUNNER_SECRETS_KEY unless the development key is asked for explicitly', () => {
    expect(read({}).problem).toBe(
      'invalid configuration: RUNNER_SECRETS_KEY is required (openssl rand -base64 32); only the all-in-one launcher runs without it, with RUNNER_SECRETS_DEV_KEY=true',
    );
    const dev = read({ RUNNER_SECRETS_DEV_KEY: 'true' });
    expect(dev.problem).toBeNull();
    expect(dev.config.secretsKeyIsDev).toBe(true);
    expect(dev.config.secretsKeys.primaryId).toBe(sealingKeyFingerprint(DEV_RUNNER_SECRETS_KEY));
  });

  it('reads a ring of named keys, the first sealing', () => {
    const first = randomBytes(32);
    const { config, problem } = read({ RUNNER_SECRETS_KEY: `2025-06:${first.toString('base64')},2024-01:${randomBytes(32).toString('base64')}` });
    expect(problem).toBeNull();
    expect(config.secretsKeyIsDev).toBe(false);
    expect(config.secretsKeys.primaryId).toBe('2025-06');
    expect(config.secretsKeys.keys.get('2025-06')?.equals(first)).toBe(true);
  });
});

import { DEV_CREDENTIALS_KEY } from '@ds/engine';
import { readEngineProxyConfig } from './config';
import { itReadsSealingKeys, readConfig } from '../../../test/support/service-configs';

const read = (env: Record<string, string>) => readConfig(readEngineProxyConfig, env);

describe('engine-proxy credentials key configuration', () => {
  itReadsSealingKeys(read, { variable: 'ENGINE_CREDENTIALS_KEY', devSwitch: 'ENGINE_CREDENTIALS_DEV_KEY', developmentKey: DEV_CREDENTIALS_KEY }, (config) => ({
    keyring: config.credentialsKeys,
    development: config.credentialsKeyIsDev,
  }));

  it('refuses a malformed key even when the development key is allowed', () => {
    const { problem } = read({ ENGINE_CREDENTIALS_KEY: 'k:short', ENGINE_CREDENTIALS_DEV_KEY: 'true' });
    expect(problem).toContain('ENGINE_CREDENTIALS_KEY must hold keys of 32 bytes');
  });
});

import { DEV_RUNNER_SECRETS_KEY, readDecisionRunnerConfig } from './config';
import { itReadsSealingKeys, readConfig } from '../../../test/support/service-configs';

const read = (env: Record<string, string>) => readConfig(readDecisionRunnerConfig, env);

describe('decision-runner secret-URL secrets key configuration', () => {
  itReadsSealingKeys(read, { variable: 'RUNNER_SECRETS_KEY', devSwitch: 'RUNNER_SECRETS_DEV_KEY', developmentKey: DEV_RUNNER_SECRETS_KEY }, (config) => ({
    keyring: config.secretsKeys,
    development: config.secretsKeyIsDev,
  }));
});

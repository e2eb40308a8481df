import { EnvReader } from '@ds/platform';

export interface DecisionRunnerConfig {
  /** The application's address, for links in errors (a plan upgrade). */
  appUrl: string;
}

export function readDecisionRunnerConfig(env: EnvReader): DecisionRunnerConfig {
  return { appUrl: env.url('APP_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/$/, '') };
}

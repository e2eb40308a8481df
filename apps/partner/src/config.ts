import { EnvReader } from '@ds/platform';

export interface PartnerConfig {
  /** The application's address: launch URLs are `{APP_URL}/embed/launch?ticket=…`. */
  appUrl: string;
}

export function readPartnerConfig(env: EnvReader): PartnerConfig {
  return {
    appUrl: env.url('APP_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/$/, ''),
  };
}

import 'reflect-metadata';
import { runServiceMain, ServiceDefinition } from '@ds/platform';
import { EngineProxyConfig, readEngineProxyConfig } from './config';
import { CredentialsService } from './credentials/credentials.service';
import { EngineHandlers } from './engine.handlers';
import { EngineService } from './engine.service';
import { ProviderCredentials1764300000000 } from './migrations/1764300000000-provider-credentials';
import { SharedSlots } from './slots/shared-slots';

class EngineProxyModule {}

export const engineProxy: ServiceDefinition<EngineProxyConfig> = {
  name: 'engine-proxy',
  database: { schema: 'engine_proxy', entities: [], migrations: [ProviderCredentials1764300000000] },
  readConfig: readEngineProxyConfig,
  module: () => ({ module: EngineProxyModule, controllers: [EngineHandlers], providers: [EngineService, CredentialsService, SharedSlots] }),
  readiness: (app) => app.get(SharedSlots).readinessChecks(),
};

if (require.main === module) void runServiceMain(engineProxy);

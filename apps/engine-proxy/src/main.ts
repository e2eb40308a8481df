import 'reflect-metadata';
import { runServiceMain, ServiceDefinition, WorkspaceDeletions } from '@ds/platform';
import { EngineProxyConfig, readEngineProxyConfig } from './config';
import { CredentialsService } from './credentials/credentials.service';
import { EngineHandlers } from './engine.handlers';
import { EngineService } from './engine.service';
import { ProviderCredentials1764300000000 } from './migrations/1764300000000-provider-credentials';
import { WorkspaceDefaultEngine1795700000000 } from './migrations/1795700000000-workspace-default-engine';
import { SharedSlots } from './slots/shared-slots';

class EngineProxyModule {}

export const engineProxy: ServiceDefinition<EngineProxyConfig> = {
  name: 'engine-proxy',
  database: { schema: 'engine_proxy', entities: [], migrations: [ProviderCredentials1764300000000, WorkspaceDefaultEngine1795700000000] },
  readConfig: readEngineProxyConfig,
  module: () => ({ module: EngineProxyModule, controllers: [EngineHandlers], providers: [EngineService, CredentialsService, SharedSlots] }),
  readiness: (app) => app.get(SharedSlots).readinessChecks(),
  background: async (app, runtime) => {
    const credentials = app.get(CredentialsService);
    const deletions = new WorkspaceDeletions(runtime.nats.connection, 'engine-proxy', (event) => credentials.purgeWorkspace(event.workspaceId), runtime.logger);
    await deletions.start();
    return { stop: () => deletions.stop() };
  },
};

if (require.main === module) void runServiceMain(engineProxy);

import 'reflect-metadata';
import { runServiceMain, ServiceDefinition } from '@ds/platform';
import { EngineProxyConfig, readEngineProxyConfig } from './config';
import { EngineHandlers } from './engine.handlers';
import { EngineService } from './engine.service';

class EngineProxyModule {}

export const engineProxy: ServiceDefinition<EngineProxyConfig> = {
  name: 'engine-proxy',
  database: { schema: 'engine_proxy', entities: [], migrations: [] },
  readConfig: readEngineProxyConfig,
  module: () => ({ module: EngineProxyModule, controllers: [EngineHandlers], providers: [EngineService] }),
};

if (require.main === module) void runServiceMain(engineProxy);

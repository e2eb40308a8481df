import 'reflect-metadata';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PLATFORM, runServiceMain, ServiceDefinition } from '@ds/platform';
import { ApiKeysService } from './auth/api-keys.service';
import { SessionsService } from './auth/sessions.service';
import { GatewayConfig, readGatewayConfig } from './config';
import { AdminController } from './controllers/admin.controller';
import { AppController } from './controllers/app.controller';
import { PublicController } from './controllers/public.controller';
import { ApiKeyEntity, MembershipEntity, SessionEntity, UserEntity, WorkspaceEntity } from './entities';
import { BODY_LIMIT, configureEdge, requestIdFrom } from './http/edge';
import { HttpErrorFilter } from './http/errors';
import { Initial1763780000000 } from './migrations/1763780000000-initial';
import { WorkspacesService } from './workspaces/workspaces.service';

const ENTITIES = [UserEntity, SessionEntity, WorkspaceEntity, MembershipEntity, ApiKeyEntity];

class GatewayModule {}

export const gateway: ServiceDefinition<GatewayConfig> = {
  name: 'gateway',
  database: { schema: 'gateway', entities: ENTITIES, migrations: [Initial1763780000000] },
  readConfig: readGatewayConfig,
  module: () => ({
    module: GatewayModule,
    imports: [TypeOrmModule.forFeature(ENTITIES)],
    controllers: [PublicController, AppController, AdminController],
    providers: [SessionsService, WorkspacesService, ApiKeysService],
  }),
  http: {
    port: (config) => config.port,
    bodyLimit: BODY_LIMIT,
    genReqId: (request) => requestIdFrom(request.headers['x-request-id']),
    configure: (app, runtime) => {
      configureEdge(app, {
        config: runtime.config,
        apiKeys: app.get(ApiKeysService),
        sessions: app.get(SessionsService),
        metrics: runtime.metrics,
      });
      app.useGlobalFilters(new HttpErrorFilter(app.get(PLATFORM.logger)));
    },
  },
};

if (require.main === module) void runServiceMain(gateway);

import 'reflect-metadata';
import { declareWorkspaceEvents, runServiceMain, ServiceDefinition, WorkspaceDeletions } from '@ds/platform';
import { PartnerConfig, readPartnerConfig } from './config';
import { EmbedSessionsService } from './embed-sessions.service';
import { Partner1795448852716 } from './migrations/1795448852716-partner';
import { PartnerHandlers } from './partner.handlers';
import { SubWorkspacesService } from './sub-workspaces.service';

class PartnerModule {}

export const partner: ServiceDefinition<PartnerConfig> = {
  name: 'partner',
  database: { schema: 'partner', entities: [], migrations: [Partner1795448852716] },
  readConfig: readPartnerConfig,
  module: () => ({ module: PartnerModule, controllers: [PartnerHandlers], providers: [SubWorkspacesService, EmbedSessionsService] }),
  background: async (app, runtime) => {
    // The stream exists before the first deletion is published, whichever service started first.
    await declareWorkspaceEvents(runtime.nats.connection);
    const workspaces = app.get(SubWorkspacesService);
    const deletions = new WorkspaceDeletions(runtime.nats.connection, 'partner', (event) => workspaces.purge(event.workspaceId), runtime.logger);
    await deletions.start();
    return { stop: () => deletions.stop() };
  },
};

if (require.main === module) void runServiceMain(partner);

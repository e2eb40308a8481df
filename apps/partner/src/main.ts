import 'reflect-metadata';
import { runServiceMain, ServiceDefinition } from '@ds/platform';

class PartnerModule {}

export const partner: ServiceDefinition<Record<string, never>> = {
  name: 'partner',
  database: { schema: 'partner', entities: [], migrations: [] },
  readConfig: () => ({}),
  module: () => ({ module: PartnerModule }),
};

if (require.main === module) void runServiceMain(partner);

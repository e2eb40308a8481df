import 'reflect-metadata';
import { EnvReader, runServiceMain, ServiceDefinition } from '@ds/platform';
import { declareDeliveryStream } from './jetstream';

export interface DeliveryConfig {
  allowPrivateTargets: boolean;
  retryScale: number;
}

class DeliveryModule {}

export const delivery: ServiceDefinition<DeliveryConfig> = {
  name: 'delivery',
  database: { schema: 'delivery', entities: [], migrations: [] },
  readConfig: (env: EnvReader) => ({
    allowPrivateTargets: env.bool('DELIVERY_ALLOW_PRIVATE_TARGETS', false),
    retryScale: env.number('DELIVERY_RETRY_SCALE', 1, 0, 1000),
  }),
  module: () => ({ module: DeliveryModule }),
  background: async (_app, runtime) => {
    await declareDeliveryStream(runtime.nats.connection);
    return { stop: async () => undefined };
  },
};

if (require.main === module) void runServiceMain(delivery);

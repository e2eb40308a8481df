import 'reflect-metadata';
import { DELIVERY_STREAM } from '@ds/contracts';
import { EnvReader, runServiceMain, ServiceDefinition, watchConsumerBacklog } from '@ds/platform';
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
    const manager = await declareDeliveryStream(runtime.nats.connection);
    watchConsumerBacklog(runtime.metrics, manager, DELIVERY_STREAM.name, DELIVERY_STREAM.consumer);
    return { stop: async () => undefined };
  },
};

if (require.main === module) void runServiceMain(delivery);

import 'reflect-metadata';
import { DELIVERY_STREAM } from '@ds/contracts';
import { Logger, Metrics, NatsLink, PLATFORM, runServiceMain, ServiceDefinition, watchConsumerBacklog, WorkspaceDeletions } from '@ds/platform';
import { WORKSPACE_ATTEMPTS_PER_MINUTE } from '@ds/webhooks';
import { DeliveryConfig, readDeliveryConfig } from './config';
import { DeliveriesStore } from './deliveries.store';
import { DeliveryHandlers } from './delivery.handlers';
import { DeliveryWorker } from './delivery-worker';
import { DeliveryWindows } from './delivery-windows';
import { DELIVERY_ENTITIES } from './entities';
import { DeliveryMetrics } from './metrics';
import { Deliveries1795448851605 } from './migrations/1795448851605-deliveries';
import { SealedSigningSecrets1795600000000 } from './migrations/1795600000000-sealed-signing-secrets';
import { WorkspaceSecrets1795800000000 } from './migrations/1795800000000-workspace-secrets';
import { DeletedWorkspaces1795800000001 } from './migrations/1795800000001-deleted-workspaces';
import { AttemptErrorsWithoutAddresses1796031488217 } from './migrations/1796031488217-attempt-errors-without-addresses';
import { AttemptResponses1796215000000 } from './migrations/1796215000000-attempt-responses';
import { DeliveryPurge } from './purge';
import { RedisWindow } from './redis-window';
import { Sender } from './sender';
import { SigningSecretsService } from './signing-secrets.service';
import { WorkspaceSecretsService } from './workspace-secrets.service';

export type { DeliveryConfig } from './config';

class DeliveryModule {}

const WORKER = Symbol('delivery-worker');
const PURGE = Symbol('delivery-purge');

export const delivery: ServiceDefinition<DeliveryConfig> = {
  name: 'delivery',
  database: {
    schema: 'delivery',
    entities: DELIVERY_ENTITIES,
    migrations: [
      Deliveries1795448851605,
      SealedSigningSecrets1795600000000,
      WorkspaceSecrets1795800000000,
      DeletedWorkspaces1795800000001,
      AttemptErrorsWithoutAddresses1796031488217,
      AttemptResponses1796215000000,
    ],
  },
  readConfig: readDeliveryConfig,
  module: (runtime) => ({
    module: DeliveryModule,
    controllers: [DeliveryHandlers],
    providers: [
      DeliveriesStore,
      SigningSecretsService,
      WorkspaceSecretsService,
      {
        provide: WORKER,
        useFactory: (
          store: DeliveriesStore,
          secrets: SigningSecretsService,
          workspaceSecrets: WorkspaceSecretsService,
          nats: NatsLink,
          metrics: Metrics,
          logger: Logger,
        ) => {
          let worker: DeliveryWorker | null = null;
          const deliveryMetrics = new DeliveryMetrics(metrics, {
            consumer: async () => worker?.consumerState() ?? null,
            oldestPendingAgeSeconds: () => store.oldestPendingAgeSeconds(),
          });
          const windows = new DeliveryWindows(
            runtime.config.redisUrl ? new RedisWindow(runtime.config.redisUrl, logger) : null,
            deliveryMetrics.windowFallbacks,
            logger,
            WORKSPACE_ATTEMPTS_PER_MINUTE,
            runtime.config.windowMs,
          );
          worker = new DeliveryWorker(
            nats.connection,
            store,
            secrets,
            workspaceSecrets,
            new Sender({ allowPrivateTargets: runtime.config.allowPrivateTargets }),
            deliveryMetrics,
            logger,
            runtime.config.retryScale,
            windows,
          );
          return worker;
        },
        inject: [DeliveriesStore, SigningSecretsService, WorkspaceSecretsService, PLATFORM.nats, PLATFORM.metrics, PLATFORM.logger],
      },
      {
        provide: PURGE,
        useFactory: (store: DeliveriesStore, secrets: SigningSecretsService, logger: Logger) =>
          new DeliveryPurge(store, secrets, runtime.config.purgeIntervalMs, logger),
        inject: [DeliveriesStore, SigningSecretsService, PLATFORM.logger],
      },
    ],
  }),
  background: async (app, runtime) => {
    const worker = app.get<DeliveryWorker>(WORKER);
    const purge = app.get<DeliveryPurge>(PURGE);
    const store = app.get(DeliveriesStore);
    const deletions = new WorkspaceDeletions(runtime.nats.connection, 'delivery', (event) => store.purgeWorkspace(event.workspaceId), runtime.logger);
    await worker.start();
    await deletions.start();
    purge.start();
    // The backlog gauges every service with a JetStream consumer exports, read at scrape time.
    watchConsumerBacklog(runtime.metrics, await runtime.nats.connection.jetstreamManager(), DELIVERY_STREAM.name, DELIVERY_STREAM.consumer);
    if (runtime.config.allowPrivateTargets)
      runtime.logger.warn('DELIVERY_ALLOW_PRIVATE_TARGETS is on: deliveries may go to plain http and to private and loopback addresses');
    return {
      stop: async () => {
        await deletions.stop();
        await purge.stop();
        await worker.stop();
      },
    };
  },
};

if (require.main === module) void runServiceMain(delivery);

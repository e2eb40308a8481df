import 'reflect-metadata';
import { SETTLEMENT_STREAM } from '@ds/contracts';
import { Logger, PLATFORM, runServiceMain, ServiceDefinition, watchConsumerBacklog } from '@ds/platform';
import { AccountsService } from './accounts.service';
import { BillingHandlers } from './billing.handlers';
import { BillingConfig, readBillingConfig } from './config';
import { CreditsService } from './credits.service';
import { LEASE_COUNTER, LeaseCounter, RedisLeaseCounter } from './lease-counter';
import { LeasesService } from './leases.service';
import { BILLING_ENTITIES } from './entities';
import { Initial1763780000000 } from './migrations/1763780000000-initial';
import { ExecutionRetentionSetting1795600000000 } from './migrations/1795600000000-execution-retention-setting';
import { BudgetLeases1796047213590 } from './migrations/1796047213590-budget-leases';
import { BilledByDay1796027182818 } from './migrations/1796027182818-billed-by-day';
import { UsagePerDecision1796127000000 } from './migrations/1796127000000-usage-per-decision';
import { MoneyLeases1796200000000 } from './migrations/1796200000000-money-leases';
import { ReservationsService } from './reservations.service';
import { SETTLEMENT_BACKLOG, SettlementConsumer } from './settlement-stream';
import { EXECUTION_OUTCOMES, RunnerOutcomes, Sweeper } from './sweeper';

class BillingLedgerModule {}

export const billingLedger: ServiceDefinition<BillingConfig> = {
  name: 'billing-ledger',
  database: {
    schema: 'billing_ledger',
    entities: BILLING_ENTITIES,
    migrations: [
      Initial1763780000000,
      ExecutionRetentionSetting1795600000000,
      BilledByDay1796027182818,
      BudgetLeases1796047213590,
      UsagePerDecision1796127000000,
      MoneyLeases1796200000000,
    ],
  },
  readConfig: readBillingConfig,
  module: (runtime) => ({
    module: BillingLedgerModule,
    controllers: [BillingHandlers],
    providers: [
      AccountsService,
      CreditsService,
      ReservationsService,
      LeasesService,
      Sweeper,
      {
        provide: LEASE_COUNTER,
        useFactory: (config: BillingConfig, logger: Logger) => (config.redisUrl ? new RedisLeaseCounter(config.redisUrl, logger) : null),
        inject: [PLATFORM.config, PLATFORM.logger],
      },
      { provide: EXECUTION_OUTCOMES, useClass: RunnerOutcomes },
      {
        provide: SETTLEMENT_BACKLOG,
        useFactory: (reservations: ReservationsService, logger: Logger) => new SettlementConsumer(runtime.nats.connection, reservations, logger),
        inject: [ReservationsService, PLATFORM.logger],
      },
    ],
  }),
  background: async (app, runtime) => {
    const settlements = app.get<SettlementConsumer>(SETTLEMENT_BACKLOG);
    await settlements.start();
    watchConsumerBacklog(runtime.metrics, await runtime.nats.connection.jetstreamManager(), SETTLEMENT_STREAM.name, SETTLEMENT_STREAM.consumer);
    const sweeper = app.get(Sweeper);
    sweeper.start();
    return {
      stop: async () => {
        await settlements.stop();
        await sweeper.stop();
        await app.get<LeaseCounter | null>(LEASE_COUNTER)?.close();
      },
    };
  },
};

if (require.main === module) void runServiceMain(billingLedger);

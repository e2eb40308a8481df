import 'reflect-metadata';
import { TypeOrmModule } from '@nestjs/typeorm';
import { runServiceMain, ServiceDefinition } from '@ds/platform';
import { AccountsService } from './accounts.service';
import { BillingHandlers } from './billing.handlers';
import { AccountEntity } from './entities';
import { Initial1763780000000 } from './migrations/1763780000000-initial';

class BillingLedgerModule {}

export const billingLedger: ServiceDefinition<Record<string, never>> = {
  name: 'billing-ledger',
  database: { schema: 'billing_ledger', entities: [AccountEntity], migrations: [Initial1763780000000] },
  readConfig: () => ({}),
  module: () => ({
    module: BillingLedgerModule,
    imports: [TypeOrmModule.forFeature([AccountEntity])],
    controllers: [BillingHandlers],
    providers: [AccountsService],
  }),
};

if (require.main === module) void runServiceMain(billingLedger);

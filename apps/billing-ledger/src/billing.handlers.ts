import { SUBJECTS } from '@ds/contracts';
import { subjectHandlers } from '@ds/platform';
import { AccountsService } from './accounts.service';
import { CreditsService } from './credits.service';
import { LeasesService } from './leases.service';
import { ReservationsService } from './reservations.service';

export const BillingHandlers = subjectHandlers(
  'BillingHandlers',
  { accounts: AccountsService, credits: CreditsService, reservations: ReservationsService, leases: LeasesService },
  (on) => [
    on(SUBJECTS.billing.reserve, ({ reservations }, request) => reservations.reserve(request)),
    on(SUBJECTS.billing.settle, ({ reservations }, request) => reservations.settle(request)),
    on(SUBJECTS.billing.grantLease, ({ leases }, request) => leases.grant(request)),
    on(SUBJECTS.billing.account, ({ accounts }, request) => accounts.account(request.workspaceId)),
    on(SUBJECTS.billing.usageByDay, ({ accounts }, request) => accounts.usageByDay(request.workspaceId)),
    on(SUBJECTS.billing.setPlan, ({ accounts }, request) => accounts.setPlan(request)),
    on(SUBJECTS.billing.grantCredits, ({ credits }, request) => credits.grant(request)),
    on(SUBJECTS.billing.retention, ({ accounts }, request) => accounts.retention(request)),
    on(SUBJECTS.billing.getExecutionRetention, ({ accounts }, request) => accounts.executionRetention(request)),
    on(SUBJECTS.billing.setExecutionRetention, ({ accounts }, request) => accounts.setExecutionRetention(request)),
    on(SUBJECTS.billing.setSpendCap, ({ accounts }, request) => accounts.setSpendCap(request)),
  ],
);

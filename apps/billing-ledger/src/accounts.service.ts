import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  AccountReply,
  UsageByDayReply,
  BROADCAST_SUBJECTS,
  DecisionUsage,
  executionRetentionBody,
  ExecutionRetentionReply,
  parseValue,
  PlanName,
  RETENTION_BATCH_MAX,
  RetentionReply,
  RetentionRequest,
  ServiceError,
  SetExecutionRetentionRequest,
  SetPlanRequest,
  SetSpendCapRequest,
  WorkspaceScoped,
} from '@ds/contracts';
import { accountView, consumptionOrder, currentPeriod, effectiveRetentionDays, PeriodAccounts, periodAccounts, usageByDecision } from '@ds/billing';
import { NatsLink, PLATFORM, publishBroadcast } from '@ds/platform';
import { AccountEntity } from './entities';
import { LeaseStore } from './lease.store';
import { LedgerStore } from './ledger.store';
import { checkOverrides, DEFAULT_PLAN, effectivePlan, PLAN_NAMES, PlanOverrides, PLANS } from './plans';
import { checkIds } from './id-checks';
import { SETTLEMENT_BACKLOG, SettlementBacklog } from './settlement-stream';
import { LeasesService } from './leases.service';

@Injectable()
export class AccountsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    @Optional() @Inject(SETTLEMENT_BACKLOG) private readonly settlements?: SettlementBacklog,
    // Named: a `T | null` parameter's design type is Object, which Nest would resolve to nothing.
    @Optional() @Inject(LeasesService) private readonly leases: LeasesService | null = null,
  ) {}

  /**
   * Plan, usage and balances read in one snapshot, so that the figures agree with each other. Settlements
   * travel as events: the ones already published are posted first (waiting a second at most), so that a run
   * answered before this request shows as used rather than reserved.
   */
  async account(workspaceId: string): Promise<AccountReply> {
    return (await this.snapshot(workspaceId, false)).account;
  }

  /**
   * The account, the period's billed decisions per UTC day and per decision: the posted debits of the period's
   * included and overage volume accounts, the very entries `usage.used` sums, and per decision the posted charges
   * credited to the period's spend, read in the same snapshot.
   */
  async usageByDay(workspaceId: string): Promise<UsageByDayReply> {
    return this.snapshot(workspaceId, true);
  }

  private async snapshot(workspaceId: string, withDays: boolean): Promise<UsageByDayReply> {
    checkIds({ workspaceId });
    await this.settlements?.caughtUp();
    const now = new Date();
    // Created before the snapshot: inside it, a concurrent first insert of the same workspace would be a serialization failure.
    await new LedgerStore(this.db.manager).ensureAccount(workspaceId, now);
    return this.db.transaction('REPEATABLE READ', async (manager) => {
      const ledger = new LedgerStore(manager);
      const leases = new LeaseStore(manager);
      const account = await ledger.account(workspaceId);
      const period = currentPeriod(account.periodAnchor, now);
      const accounts = periodAccounts(workspaceId, account.currency, period.start);
      const view = await ledger.periodView(accounts, workspaceId, account.currency);
      const days = withDays ? await ledger.billedByDay(accounts) : [];
      const decisions = withDays ? await byDecision(ledger, accounts) : [];
      const leasedUnits = await leases.heldInPeriod(workspaceId, period.start);
      // The money the period's leases hold, per source: not spent, and still the workspace's to spend.
      const leasedMicros = await leases.moneyHeldInPeriod(workspaceId, period.start, account.currency);
      const sources = await ledger.sourcesWithLeased(view.sources, leasedMicros);
      return {
        account: accountView({
          leasedUnits,
          leasedMicros: [...leasedMicros.values()].reduce((sum, micros) => sum + micros, 0n),
          plan: effectivePlan(account.plan, account.overrides),
          period,
          currency: account.currency,
          spendCapCents: account.spendCapCents,
          includedVolume: view.includedVolume,
          overageVolume: view.overageVolume,
          spend: view.spend,
          sources: consumptionOrder(sources, now),
        }),
        days,
        decisions,
      };
    });
  }

  /**
   * Each workspace's execution-log retention: its own setting within its plan's, or the default plan's when it
   * has no account yet.
   */
  async retention(request: RetentionRequest): Promise<RetentionReply> {
    const ids: unknown = request?.workspaceIds;
    if (!Array.isArray(ids) || ids.length > RETENTION_BATCH_MAX) {
      throw new ServiceError('INVALID_REQUEST', `workspaceIds must be a list of at most ${RETENTION_BATCH_MAX} ids.`, [
        { path: 'workspaceIds', message: 'must be a list' },
      ]);
    }
    ids.forEach((workspaceId) => checkIds({ workspaceId }));
    const rows = await new LedgerStore(this.db.manager).retentionSettings(ids as string[]);
    const retentionDays = new Map<string, number>((ids as string[]).map((id) => [id, PLANS[DEFAULT_PLAN].retention_days]));
    for (const row of rows) {
      retentionDays.set(row.workspace_id, effectiveRetentionDays(effectivePlan(row.plan, row.overrides).retention_days, row.execution_retention_days));
    }
    return { retentionDays: Object.fromEntries(retentionDays) };
  }

  async executionRetention(request: WorkspaceScoped): Promise<ExecutionRetentionReply> {
    checkIds({ workspaceId: request.workspaceId });
    await new LedgerStore(this.db.manager).ensureAccount(request.workspaceId, new Date());
    return retentionView(await new LedgerStore(this.db.manager).account(request.workspaceId));
  }

  /** Checked against the plan under the account's lock, so that a plan change cannot slip between check and write. */
  async setExecutionRetention(request: SetExecutionRetentionRequest): Promise<ExecutionRetentionReply> {
    checkIds({ workspaceId: request.workspaceId });
    return this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      const account = await ledger.lockAccount(request.workspaceId, new Date());
      const planDays = effectivePlan(account.plan, account.overrides).retention_days;
      const { days } = parseValue(executionRetentionBody(planDays), { days: request.days }, 'The execution-log retention is not valid.');
      await ledger.updateAccount(request.workspaceId, { executionRetentionDays: days });
      return retentionView({ ...account, executionRetentionDays: days });
    });
  }

  /** A new plan or overrides apply at once to the current period; the period's anchor does not move. */
  async setPlan(request: SetPlanRequest): Promise<AccountReply> {
    checkIds({ workspaceId: request.workspaceId });
    if (typeof request.plan !== 'string' || !PLAN_NAMES.includes(request.plan as PlanName)) {
      throw new ServiceError('INVALID_REQUEST', `plan must be one of ${PLAN_NAMES.join(', ')}.`, [{ path: 'plan', message: 'unknown plan' }]);
    }
    const issues = checkOverrides(request.overrides);
    if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The plan overrides are not valid.', issues);
    await this.update(request.workspaceId, { plan: request.plan as PlanName, overrides: (request.overrides ?? {}) as PlanOverrides });
    this.announcePlanChange(request.workspaceId);
    return this.account(request.workspaceId);
  }

  /** The cap counts what credits and balance paid in the billing cycle; 0 allows only the included volume. */
  async setSpendCap(request: SetSpendCapRequest): Promise<AccountReply> {
    checkIds({ workspaceId: request.workspaceId });
    await this.update(request.workspaceId, { spendCapCents: request.spend_cap_cents });
    return this.account(request.workspaceId);
  }

  /**
   * Published before the reply, on the same connection: the gateway that asked hears the notice before the answer,
   * so its next request already counts against the new limit; the others within moments. A notice that cannot be
   * published leaves the old limit cached until it expires (30 s).
   */
  private announcePlanChange(workspaceId: string): void {
    try {
      publishBroadcast(this.nats, BROADCAST_SUBJECTS.billingPlanChanged, workspaceId);
    } catch (error) {
      this.nats.logger.warn({ err: error, workspaceId }, 'could not announce a plan change; gateways apply it when their cached limit expires');
    }
  }

  private async update(workspaceId: string, changes: Partial<Pick<AccountEntity, 'plan' | 'overrides' | 'spendCapCents'>>): Promise<void> {
    await this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      await ledger.lockAccount(workspaceId, new Date());
      await ledger.updateAccount(workspaceId, changes);
    });
    // Units leased under the old plan or cap are not taken under the new one: their untaken rest (and its money)
    // goes back before the answer, and the next lease is sized by the new limits. Runs that took a unit before
    // are in flight, as runs that reserved on their own before the change are.
    await this.leases?.reclaimOpen(workspaceId);
  }
}

/** Inside the snapshot: the period's posted decisions and posted charges, each summed by the decision that ran. */
async function byDecision(ledger: LedgerStore, accounts: PeriodAccounts): Promise<DecisionUsage[]> {
  return usageByDecision(await ledger.billedByDecision(accounts), await ledger.chargedByDecision(accounts));
}

function retentionView(account: Pick<AccountEntity, 'plan' | 'overrides' | 'executionRetentionDays'>): ExecutionRetentionReply {
  const planDays = effectivePlan(account.plan, account.overrides).retention_days;
  return { days: account.executionRetentionDays, plan_days: planDays, effective_days: effectiveRetentionDays(planDays, account.executionRetentionDays) };
}

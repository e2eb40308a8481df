import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GrantLeaseReply, GrantLeaseRequest } from '@ds/contracts';
import {
  answersLatest,
  chart,
  closeMove,
  consumptionOrder,
  currentPeriod,
  decideGrant,
  drainMove,
  GrantFacts,
  grantedLease,
  Lease,
  LeaseMove,
  OverageFacts,
  periodAccounts,
  reclaimMove,
  settleLease,
} from '@ds/billing';
import { newId } from '@ds/ids';
import { Logger, Metrics, PLATFORM } from '@ds/platform';
import { BillingConfig } from './config';
import { checkIds } from './id-checks';
import { LEASE_COUNTER, LeaseCounter } from './lease-counter';
import { LeaseMetrics } from './lease-metrics';
import { LeaseStore } from './lease.store';
import { LedgerStore } from './ledger.store';
import { effectivePlan } from './plans';

/** Settles the billable runs of a lease that no settlement named; false when that cannot be known now. */
export type LostSettlements = (lease: Lease) => Promise<boolean>;

export interface LeaseSweepReport {
  reclaimed: number;
  closed: number;
}

/** What one grant transaction did: answered a lease (made now, or another caller's), none, or asks to reclaim open included leases first. */
type GrantOutcome = { kind: 'granted'; lease: Lease } | { kind: 'existing'; lease: Lease } | { kind: 'none' } | { kind: 'reclaim-first' };

const NO_LEASE: GrantLeaseReply = { leaseId: null, units: 0 };

/**
 * Budget leases, the ledger's side: grants (one set of holds, then the counter in Redis), drains (the untaken rest
 * of a lease freed once its counter is gone) and closes (what a lease still holds after every run that could
 * have taken from it has ended is voided). A lease holds decisions of the included volume while it has room, and
 * past it (a priced plan without a hard cap, with BILLING_MONEY_LEASES) overage decisions with their money from
 * the credit sources. Grants of a workspace are serialised on its account row, like every other write of its
 * ledger, and are never held across a run. The rules are `@ds/billing`'s (lease-rules.ts); this service locks,
 * loads, calls them and saves.
 */
@Injectable()
export class LeasesService {
  private readonly metrics: LeaseMetrics;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: BillingConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Optional() @Inject(LEASE_COUNTER) private readonly counter: LeaseCounter | null = null,
    @Optional() @Inject(PLATFORM.metrics) metrics?: Metrics,
  ) {
    this.metrics = new LeaseMetrics(metrics);
  }

  get enabled(): boolean {
    return this.counter !== null;
  }

  /**
   * Grants the workspace a new lease unless another caller already replaced the one this caller saw (then that
   * one is answered), sized by the previous lease's rate and the room left: in the included volume, or past it
   * in what the credits pay for and the spend cap allows. The holds are committed before the counter is put in
   * Redis, so a unit can never be taken that the ledger does not hold; the put is made under the lease's row
   * lock and only while the lease is still open, so a lease reclaimed in between (a spend cap or plan change)
   * never reaches the counter. A ledger that dies in between leaves a lease no run can take from, which the
   * sweeper closes. A money lease is held again from the front of the consumption order before it is put, once
   * the lease it replaces has ended and given its rest back; the lease a put still replaces (one granted by another
   * caller meanwhile) is drained after it.
   */
  async grant(request: GrantLeaseRequest): Promise<GrantLeaseReply> {
    checkIds({ workspaceId: request?.workspaceId });
    const counter = this.counter;
    if (!counter) return NO_LEASE;
    const workspaceId = request.workspaceId;
    let outcome = await this.decideGrant(request, new Date(), true);
    if (outcome.kind === 'reclaim-first') {
      // The included volume is all held, part of it by an open lease that no run may have taken yet: that rest
      // goes back first, so that no decision is leased past the included volume while some of it sits unused.
      await this.reclaimOpen(workspaceId);
      outcome = await this.decideGrant(request, new Date(), false);
    }
    if (outcome.kind === 'existing') return { leaseId: outcome.lease.id, units: outcome.lease.units };
    if (outcome.kind !== 'granted') return NO_LEASE;
    const { lease } = outcome;
    if (lease.funding === 'credits' && (await this.reclaimOpen(workspaceId, lease.id))) {
      // The lease it replaces ends first and its untaken rest goes back, so that this lease's money is held again
      // from the front before any run can take a unit of it: a unit taken before would be paid from a later source.
      // Runs in between find no lease and reserve on their own.
      await this.holdFromFront(workspaceId, lease.id);
    }
    let replaced: { leaseId: string; left: number } | null;
    try {
      const put = await this.db.transaction(async (manager) => {
        const leases = new LeaseStore(manager);
        const locked = (await leases.lock([lease.id])).get(lease.id);
        const ttlMs = locked ? locked.takesUntil.getTime() - Date.now() : 0;
        if (!locked || locked.state !== 'open' || ttlMs <= 0) return null;
        const replaced = await counter.put(workspaceId, lease.id, lease.units, ttlMs);
        await leases.markCounted(lease.id);
        return { replaced };
      });
      if (!put) return NO_LEASE;
      replaced = put.replaced;
    } catch (error) {
      this.logger.warn({ err: error, workspaceId, leaseId: lease.id }, 'could not put a lease in its counter; the sweeper closes it');
      return NO_LEASE;
    }
    this.metrics.granted(lease);
    if (replaced) {
      const freed = await this.drain(workspaceId, replaced.leaseId, replaced.left);
      if (freed && lease.funding === 'credits') await this.holdFromFront(workspaceId, lease.id);
    }
    return { leaseId: lease.id, units: lease.units };
  }

  /** See LeaseStore.holdMoneyFromFront: done once the replaced lease's untaken rest is back, before any run takes a unit of this one. */
  private async holdFromFront(workspaceId: string, leaseId: string): Promise<void> {
    try {
      await this.db.transaction(async (manager) => {
        const ledger = new LedgerStore(manager);
        const leases = new LeaseStore(manager);
        await ledger.lockExistingAccount(workspaceId);
        const lease = (await leases.lock([leaseId])).get(leaseId);
        if (lease) await ledger.post((await leases.holdMoneyFromFront(ledger, [lease])).transfers);
      });
    } catch (error) {
      this.logger.warn({ err: error, workspaceId, leaseId }, 'could not hold a lease’s money again from the front of the consumption order');
    }
  }

  private decideGrant(request: GrantLeaseRequest, now: Date, mayReclaim: boolean): Promise<GrantOutcome> {
    const workspaceId = request.workspaceId;
    const seenLeaseId = typeof request.seenLeaseId === 'string' ? request.seenLeaseId : null;
    return this.db.transaction(async (manager): Promise<GrantOutcome> => {
      const ledger = new LedgerStore(manager);
      const leases = new LeaseStore(manager);
      const account = await ledger.lockAccount(workspaceId, now);
      const latest = await leases.latest(workspaceId);
      if (answersLatest(latest, seenLeaseId, now)) return { kind: 'existing', lease: latest };
      const period = currentPeriod(account.periodAnchor, now);
      const budget = chart.includedVolume(workspaceId, period.start);
      await ledger.lockBudget(budget.id);
      const volume = (await ledger.balances([budget.id])).get(budget.id)!;
      const facts: GrantFacts = {
        now,
        period,
        plan: effectivePlan(account.plan, account.overrides),
        latest,
        seenLeaseId,
        seenTaken: request.seenTaken,
        includedUsed: Number(volume.debitsPosted + volume.debitsPending),
        moneyLeases: this.config.moneyLeases,
        mayReclaim,
      };
      let decision = decideGrant(facts);
      let missing = [budget, chart.decisionsBilled(workspaceId)];
      if (decision.kind === 'past-included') {
        let overage: OverageFacts = { openIncludedLease: true };
        if (!(await leases.hasOpenIncluded(workspaceId))) {
          const view = await ledger.periodView(periodAccounts(workspaceId, account.currency, period.start), workspaceId, account.currency);
          overage = {
            openIncludedLease: false,
            sources: consumptionOrder(view.sources, now),
            spentMicros: view.spend.creditsPosted + view.spend.creditsPending,
            spendCapCents: account.spendCapCents,
            currency: account.currency,
          };
          missing = view.missing;
        }
        decision = decideGrant({ ...facts, overage });
      }
      if (decision.kind === 'reclaim-first') return { kind: 'reclaim-first' };
      if (decision.kind !== 'included' && decision.kind !== 'credits') return { kind: 'none' };
      const granted = grantedLease(decision, { id: newId('lease'), workspaceId, periodStart: period.start, now });
      await leases.insert(granted.lease);
      await ledger.ensureLedgerAccounts(missing);
      await ledger.post(granted.transfers);
      return { kind: 'granted', lease: granted.lease };
    });
  }

  /**
   * Reclaims the workspace's open leases: their untaken units (and their money) go back. Done before a refusal,
   * so that a 402 is only ever given when the budget is held by decisions billed or running; when a spend cap or
   * plan changes, so that no unit leased under the old one is taken after it; before a lease past the included
   * volume while an included one is open; and before a money lease goes into the counter (`except` is that lease,
   * not yet put). True when any unit was freed.
   */
  async reclaimOpen(workspaceId: string, except: string | null = null): Promise<boolean> {
    if (!this.counter) return false;
    const open = await new LeaseStore(this.db.manager).open(workspaceId);
    let freed = false;
    for (const lease of open) if (lease.id !== except) freed = (await this.reclaim(lease)) || freed;
    return freed;
  }

  /**
   * Reclaims open leases past their time and closes draining ones that no run can still settle against
   * (`BILLING_SETTLE_AFTER_MS` after their time, the longest a run may last), voiding what they still hold once
   * `settleLost` has settled the lease's runs whose settlements were lost (false: not now, try on the next sweep).
   */
  async sweep(now = new Date(), settleLost: LostSettlements = async () => true): Promise<LeaseSweepReport> {
    const report: LeaseSweepReport = { reclaimed: 0, closed: 0 };
    const store = new LeaseStore(this.db.manager);
    const expired = await store.expired(now);
    for (const lease of expired) if (await this.reclaim(lease)) report.reclaimed++;
    const done = await store.unclosedBefore(new Date(now.getTime() - this.config.settleAfterMs));
    for (const lease of done) {
      // Runs that took a unit and were recorded, but whose settlement never came, are billed before the rest is voided.
      if (lease.held > 0 && !(await settleLost(lease))) continue;
      const voided = await this.inLease(lease.workspaceId, lease.id, closeMove);
      if (voided === null) continue;
      report.closed++;
      if (voided > 0) {
        this.metrics.voidedAtClose(lease, voided);
        this.logger.warn({ workspaceId: lease.workspaceId, leaseId: lease.id, units: voided }, 'closed a lease with units taken but never settled');
      }
    }
    return report;
  }

  /**
   * Ends one open lease in its counter and frees its untaken units, under the workspace's lock and the lease's row
   * lock, so that a grant cannot put the lease in the counter after this found it missing. A counter that lost it
   * leaves the rest to close.
   */
  private async reclaim(lease: Lease): Promise<boolean> {
    try {
      const freed = await this.inLease(lease.workspaceId, lease.id, async (locked) =>
        locked.state === 'open' ? reclaimMove(locked, await this.counter!.reclaim(lease.workspaceId, lease.id)) : null,
      );
      return (freed ?? 0) > 0;
    } catch (error) {
      this.logger.warn({ err: error, leaseId: lease.id }, 'could not reclaim a lease from its counter; retrying on the next sweep');
      return false;
    }
  }

  /** The counter no longer gives units of this lease: free its `left` untaken units, hold the rest for the runs in flight. Answers the units freed. */
  private async drain(workspaceId: string, leaseId: string, left: number): Promise<number> {
    return (await this.inLease(workspaceId, leaseId, (lease) => drainMove(lease, left))) ?? 0;
  }

  /** Moves one lease under its workspace's lock; answers the units freed, or null when `decide` left it alone. */
  private async inLease(workspaceId: string, leaseId: string, decide: (lease: Lease) => LeaseMove | null | Promise<LeaseMove | null>): Promise<number | null> {
    return this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      const leases = new LeaseStore(manager);
      await ledger.lockExistingAccount(workspaceId);
      const lease = (await leases.lock([leaseId])).get(leaseId);
      const move = lease ? await decide(lease) : null;
      if (!lease || !move) return null;
      const moved = settleLease(lease, move, new Date());
      await leases.save([moved.lease]);
      await ledger.post(moved.transfers);
      return move.freed;
    });
  }
}

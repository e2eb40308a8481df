import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';
import { BillingReserveReply, BillingReserveRequest, BillingSettleReply, BillingSettleRequest, ServiceError } from '@ds/contracts';
import {
  chart,
  consumptionOrder,
  currentPeriod,
  decideReservation,
  holdTransfers,
  Lease,
  leaseChargeAt,
  leaseChargesPaidBy,
  MoneyLease,
  moneyLeaseOf,
  paidBy,
  periodAccounts,
  ReservationVerdict,
  settleLease,
  settlementTransfers,
  Transfer,
} from '@ds/billing';
import { PLATFORM } from '@ds/platform';
import { isNewId, looksLikeId } from '@ds/ids';
import { BillingConfig } from './config';
import { ReservationEntity, ReservationState } from './entities';
import { FastReserve } from './fast-reserve';
import { LeaseStore } from './lease.store';
import { LedgerStore } from './ledger.store';
import { effectivePlan } from './plans';
import { checkIds } from './id-checks';
import { LeasesService } from './leases.service';
import { transactionUnless } from './transaction';

/** Workspaces whose period anchor this process remembers; an anchor never changes once the account exists. */
const ANCHOR_CACHE_SIZE = 10_000;

@Injectable()
export class ReservationsService {
  private readonly fast: FastReserve;
  private readonly anchors = new LRUCache<string, Date>({ max: ANCHOR_CACHE_SIZE });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: BillingConfig,
    // Named: a `T | null` parameter's design type is Object, which Nest would resolve to nothing.
    @Optional() @Inject(LeasesService) private readonly leases: LeasesService | null = null,
  ) {
    this.fast = new FastReserve(db);
  }

  /**
   * Step 6. While the period's included volume has room, one statement takes a decision of it (FastReserve);
   * otherwise, under the workspace's lock and its budget row's, the checks run in the spec's order and hold one
   * decision's worth. Asked again for the same execution it holds nothing more: a pending or committed
   * reservation answers reserved, a released one is a CONFLICT (the run was already given up, and going ahead
   * could only give it away).
   */
  async reserve(request: BillingReserveRequest): Promise<BillingReserveReply> {
    checkIds({ workspaceId: request.workspaceId, executionId: request.executionId });
    const now = new Date();
    const anchor = this.anchors.get(request.workspaceId);
    if (anchor) {
      const periodStart = currentPeriod(anchor, now).start;
      const held = await this.fast.tryIncluded({
        workspaceId: request.workspaceId,
        executionId: request.executionId,
        includedVolumeId: chart.includedVolume(request.workspaceId, periodStart).id,
        decisionsBilledId: chart.decisionsBilled(request.workspaceId).id,
        periodStart,
      });
      if (held) return { reserved: true };
    }
    let attempt = await this.reserveLocked(request, now, true);
    // Units leased but not taken are budget nobody uses: they are freed before a refusal stands, and before a
    // decision is paid past the included volume while some of it sits in a lease.
    if (attempt.kind !== 'reserved' && ((await this.leases?.reclaimOpen(request.workspaceId)) || attempt.kind === 'reclaim-first')) {
      attempt = await this.reserveLocked(request, now, false);
    }
    if (attempt.kind === 'refused') throw new ServiceError(attempt.verdict.code, attempt.verdict.message, attempt.verdict.details);
    return { reserved: true };
  }

  /** The locked path; a refusal, or a reserve to decide again once open leases are reclaimed, is rolled back. */
  private reserveLocked(request: BillingReserveRequest, now: Date, mayReclaim: boolean): Promise<LockedReserve> {
    return transactionUnless(this.db, async (manager) => {
      const ledger = new LedgerStore(manager);
      const account = await ledger.lockAccount(request.workspaceId, now);
      this.anchors.set(request.workspaceId, account.periodAnchor);
      const period = currentPeriod(account.periodAnchor, now);
      // The one-statement path writes this row without the account lock: holding it too makes the balances
      // read below final until this transaction ends. Taken before the reservation is written, in the same
      // order as that path, so that two reserves of one execution cannot deadlock.
      await ledger.lockBudget(chart.includedVolume(request.workspaceId, period.start).id);
      // Written first, so that it doubles as the duplicate check; a refusal rolls it back.
      const existing = await ledger.claimReservation({
        executionId: request.executionId,
        workspaceId: request.workspaceId,
        state: 'pending',
        periodStart: period.start,
      });
      if (existing) {
        reserveAgain(existing, request.workspaceId);
        return { commit: true, value: RESERVED };
      }

      const plan = effectivePlan(account.plan, account.overrides);
      const accounts = periodAccounts(request.workspaceId, account.currency, period.start);
      const view = await ledger.periodView(accounts, request.workspaceId, account.currency);
      const verdict = decideReservation({
        plan,
        includedUsed: Number(view.includedVolume.debitsPosted + view.includedVolume.debitsPending),
        overageUsed: Number(view.overageVolume.debitsPosted + view.overageVolume.debitsPending),
        sources: consumptionOrder(view.sources, now),
        spentMicros: view.spend.creditsPosted + view.spend.creditsPending,
        spendCapCents: account.spendCapCents,
        currency: account.currency,
        periodEnd: period.end,
        billingUrl: this.config.billingUrl,
        upgradeUrl: this.config.upgradeUrl,
      });
      if (verdict.kind === 'refused') return { commit: false, value: { kind: 'refused', verdict } };
      if (verdict.kind === 'credits' && mayReclaim && this.leases?.enabled && (await new LeaseStore(manager).hasOpenIncluded(request.workspaceId))) {
        return { commit: false, value: { kind: 'reclaim-first' } };
      }

      await ledger.ensureLedgerAccounts(view.missing);
      await ledger.post(holdTransfers(request.executionId, request.workspaceId, account.currency, verdict, accounts));
      return { commit: true, value: RESERVED };
    });
  }

  /**
   * Commits (billable) or releases the execution's holds, once. The same outcome again answers the same state;
   * the other outcome is a CONFLICT. Releasing an execution that holds nothing answers released.
   */
  async settle(request: BillingSettleRequest, settledBy: SettledBy = 'runner'): Promise<BillingSettleReply> {
    const [outcome] = await this.settleBatch([request], settledBy);
    if (outcome instanceof ServiceError) throw outcome;
    // settleBatch answers every request in order, so one request always has its outcome.
    return outcome!;
  }

  /**
   * Settles many executions in one transaction, each as settle would, and answers each in order: a refused one
   * (a CONFLICT, an unknown execution) is answered with its error without stopping the others. The same
   * execution twice in one batch is settled once; the second is answered as a repeat. Locks are taken in one
   * order (workspace rows by id, the reservations, then the ledger accounts, budget rows first: see LedgerStore.post)
   * so that batches of two replicas and reserves cannot deadlock.
   * A database failure rejects the whole batch, which then changed nothing.
   */
  async settleBatch(requests: BillingSettleRequest[], settledBy: SettledBy = 'runner'): Promise<Array<BillingSettleReply | ServiceError>> {
    const outcomes: Array<BillingSettleReply | ServiceError | null> = requests.map((request) => settleRequestError(request));
    const valid = requests.filter((_, index) => outcomes[index] === null);
    if (valid.length === 0) return outcomes as Array<BillingSettleReply | ServiceError>;
    return this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      await ledger.lockAccounts([...new Set(valid.map((request) => request.workspaceId))]);
      const reservations = await ledger.lockReservations([...new Set(valid.map((request) => request.executionId))]);
      const holds = await ledger.holdsOfMany([...reservations.keys()]);
      const leaseStore = new LeaseStore(manager);
      const locked = await leaseStore.lock(valid.flatMap((request) => (request.leaseId === undefined ? [] : [request.leaseId])));
      // Runs billed against a money lease pay from the front of the consumption order as it is now.
      const held = await leaseStore.holdMoneyFromFront(ledger, [...locked.values()]);
      const entries: Transfer[] = held.transfers;
      const fromLeases = new LeaseSettlements(new Map(held.leases.map((lease) => [lease.id, lease])));
      // A repeated commit of a leased run is answered with what its entries say paid for it.
      const leasedCommitted = [...reservations.values()].filter((row) => row.leaseId !== null && row.state === 'committed').map((row) => row.executionId);
      const leasedEntries = await ledger.holdsOfMany(leasedCommitted, 'single');

      const transitions = new Map<string, ReservationState>();
      requests.forEach((request, index) => {
        if (outcomes[index] !== null) return;
        const target = request.billable ? 'committed' : 'released';
        const reservation = reservations.get(request.executionId) ?? fromLeases.settledNow(request.executionId);
        if (!reservation && request.leaseId !== undefined) {
          outcomes[index] = fromLeases.settle(request);
          return;
        }
        if (!reservation) {
          outcomes[index] = request.billable
            ? new ServiceError('NOT_FOUND', `No reservation exists for execution ${request.executionId}.`)
            : { state: 'released' };
          return;
        }
        if (reservation.workspaceId !== request.workspaceId) {
          outcomes[index] = new ServiceError('CONFLICT', `Execution ${request.executionId} belongs to another workspace.`);
          return;
        }
        const execution = holds.get(request.executionId) ?? { holds: [], charged: new Map() };
        if (reservation.leaseId) {
          const entries = leasedEntries.get(request.executionId);
          outcomes[index] =
            reservation.state !== target
              ? new ServiceError('CONFLICT', `Execution ${request.executionId} was already ${reservation.state}.`)
              : (fromLeases.replyOf(request.executionId) ??
                (target === 'committed' && entries ? { state: target, paid_by: paidBy(entries.holds, entries.charged) } : settledReply(target)));
          return;
        }
        if (reservation.state === 'pending') {
          entries.push(...settlementTransfers(execution.holds, request.billable, request.decisionId ?? null));
          reservation.state = target;
          transitions.set(request.executionId, target);
        } else if (reservation.state !== target) {
          outcomes[index] = new ServiceError('CONFLICT', `Execution ${request.executionId} was already ${reservation.state}.`);
          return;
        }
        outcomes[index] = target === 'released' ? { state: target } : { state: target, paid_by: paidBy(execution.holds, execution.charged) };
      });
      // The balances last: their rows include the budget rows that reservations update, kept locked until commit.
      await ledger.markSettled(transitions, settledBy);
      entries.push(...(await fromLeases.write(ledger, leaseStore, settledBy)));
      await ledger.post(entries);
      return outcomes as Array<BillingSettleReply | ServiceError>;
    });
  }
}

export type SettledBy = 'runner' | 'sweeper';

/** What the locked path of a reserve decided. */
type LockedReserve = { kind: 'reserved' } | { kind: 'refused'; verdict: Extract<ReservationVerdict, { kind: 'refused' }> } | { kind: 'reclaim-first' };

const RESERVED: LockedReserve = { kind: 'reserved' };

type SettledReservation = Pick<ReservationEntity, 'executionId' | 'workspaceId' | 'state' | 'periodStart' | 'leaseId'>;

function settledReply(state: 'committed' | 'released'): BillingSettleReply {
  return state === 'committed' ? { state, paid_by: { funding: 'included', charges: [] } } : { state };
}

/**
 * Settlements of decisions taken from budget leases within one batch: each gets its reservation row, written
 * settled (so a repeat is answered from it, and the execution is settled once), and each lease's hold moves on
 * by what its executions billed and freed. A commit against a lease that no longer holds a unit for it (closed
 * after every run that could settle against it should have) is a CONFLICT, as a commit after a release is.
 */
class LeaseSettlements {
  private readonly rows = new Map<string, SettledReservation>();
  private readonly replies = new Map<string, BillingSettleReply>();
  private readonly money = new Map<string, MoneyLease>();
  private readonly billed = new Map<string, string[]>();
  private readonly freed = new Map<string, number>();
  /** The decision each execution billed against a lease ran, as its settlement named it. */
  private readonly decisions = new Map<string, string | null>();

  constructor(private readonly leases: Map<string, Lease>) {}

  /** A reservation written earlier in this batch. */
  settledNow(executionId: string): SettledReservation | undefined {
    return this.rows.get(executionId);
  }

  /** The answer given to an execution settled earlier in this batch. */
  replyOf(executionId: string): BillingSettleReply | undefined {
    return this.replies.get(executionId);
  }

  settle(request: BillingSettleRequest): BillingSettleReply | ServiceError {
    const lease = this.leases.get(request.leaseId!);
    if (!lease || lease.workspaceId !== request.workspaceId) {
      return request.billable
        ? new ServiceError('CONFLICT', `Lease ${request.leaseId} is not a lease of workspace ${request.workspaceId}.`)
        : { state: 'released' };
    }
    const billed = this.billed.get(lease.id) ?? [];
    const freed = this.freed.get(lease.id) ?? 0;
    if (billed.length + freed >= lease.held) {
      return request.billable
        ? new ServiceError('CONFLICT', `Lease ${lease.id} no longer holds a decision for execution ${request.executionId}.`)
        : { state: 'released' };
    }
    const state = request.billable ? 'committed' : 'released';
    let reply = settledReply(state);
    if (request.billable && lease.funding === 'credits') {
      // The lease as it was when the batch began; this execution pays the price after those billed before it.
      const money = this.money.get(lease.id) ?? this.money.set(lease.id, moneyLeaseOf(lease)).get(lease.id)!;
      reply = { state, paid_by: { funding: 'credits', charges: leaseChargesPaidBy(leaseChargeAt(money, billed.length)) } };
    }
    this.replies.set(request.executionId, reply);
    if (request.billable) {
      this.billed.set(lease.id, [...billed, request.executionId]);
      this.decisions.set(request.executionId, request.decisionId ?? null);
    } else this.freed.set(lease.id, freed + 1);
    this.rows.set(request.executionId, {
      executionId: request.executionId,
      workspaceId: request.workspaceId,
      state,
      periodStart: lease.periodStart,
      leaseId: lease.id,
    });
    return reply;
  }

  /** Writes the reservation rows and the leases, and answers the entries that move the leases' holds. */
  async write(ledger: LedgerStore, leaseStore: LeaseStore, settledBy: SettledBy): Promise<Transfer[]> {
    if (this.rows.size === 0) return [];
    await ledger.insertSettled([...this.rows.values()], settledBy);
    const now = new Date();
    const moved = [...new Set([...this.billed.keys(), ...this.freed.keys()])].map((id) =>
      settleLease(this.leases.get(id)!, { billed: this.billed.get(id) ?? [], freed: this.freed.get(id) ?? 0, decisions: this.decisions }, now),
    );
    await leaseStore.save(moved.map((move) => move.lease));
    return moved.flatMap((move) => move.transfers);
  }
}

function settleRequestError(request: BillingSettleRequest): ServiceError | null {
  try {
    checkIds({ workspaceId: request?.workspaceId, executionId: request?.executionId });
  } catch (error) {
    return error as ServiceError;
  }
  if (typeof request.billable !== 'boolean')
    return new ServiceError('INVALID_REQUEST', 'The billing request is not valid.', [{ path: 'billable', message: 'must be a boolean' }]);
  if (request.leaseId !== undefined && !isNewId('lease', request.leaseId))
    return new ServiceError('INVALID_REQUEST', 'The billing request is not valid.', [{ path: 'leaseId', message: 'must be a lease id' }]);
  if (request.decisionId !== undefined && !looksLikeId('dec', request.decisionId))
    return new ServiceError('INVALID_REQUEST', 'The billing request is not valid.', [{ path: 'decisionId', message: 'must be a decision id' }]);
  return null;
}

/** A reserve asked again for the same execution holds nothing more; one that cannot go ahead is a CONFLICT. */
function reserveAgain(existing: ReservationEntity, workspaceId: string): void {
  if (existing.workspaceId !== workspaceId) throw new ServiceError('CONFLICT', `Execution ${existing.executionId} belongs to another workspace.`);
  if (existing.state === 'released') throw new ServiceError('CONFLICT', `The reservation of execution ${existing.executionId} was already released.`);
}

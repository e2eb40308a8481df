import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, LessThan } from 'typeorm';
import { GrantLeaseReply, GrantLeaseRequest } from '@ds/contracts';
import {
  chart,
  consumptionOrder,
  currentPeriod,
  decisionPriceMicros,
  LeaseSource,
  leaseHold,
  leaseRate,
  leaseSettlement,
  leaseSize,
  leaseTakesUntil,
  MoneyLease,
  moneyLeaseHolds,
  moneyLeaseRehold,
  moneyLeaseRoom,
  moneyLeaseSettlement,
  moneyLeaseSources,
  Period,
  periodAccounts,
  Transfer,
} from '@ds/billing';
import { randomAlphanumeric } from '@ds/ids';
import { Logger, Metrics, PLATFORM } from '@ds/platform';
import { BillingConfig } from './config';
import { AccountEntity, LeaseEntity, LeaseMoneyRow, LeaseState } from './entities';
import { checkIds } from './id-checks';
import { LEASE_COUNTER, LeaseCounter } from './lease-counter';
import { LedgerStore } from './ledger.store';
import { effectivePlan } from './plans';

/** A money lease as its row records it, with the accounts its holds move between. */
export function moneyLeaseOf(lease: LeaseEntity): MoneyLease {
  if (lease.funding !== 'credits' || lease.currency === null || lease.unitPriceMicros === null) throw new Error(`lease ${lease.id} is not a money lease`);
  return {
    id: lease.id,
    workspaceId: lease.workspaceId,
    currency: lease.currency,
    seq: lease.holdSeq,
    held: lease.held,
    unitPriceMicros: lease.unitPriceMicros,
    sources: lease.moneyHeld.map((row) => ({ accountId: row.account_id, kind: row.kind, grantId: row.grant_id, heldMicros: BigInt(row.micros) })),
    accounts: {
      overageVolumeId: chart.overageVolume(lease.workspaceId, lease.periodStart).id,
      decisionsBilledId: chart.decisionsBilled(lease.workspaceId).id,
      spendId: chart.spend(lease.workspaceId, lease.currency, lease.periodStart).id,
    },
  };
}

function moneyRows(sources: LeaseSource[]): LeaseMoneyRow[] {
  return sources.map((source) => ({ account_id: source.accountId, kind: source.kind, grant_id: source.grantId, micros: source.heldMicros.toString() }));
}

/**
 * Moves a lease's holds on by what settled against it (billed executions posted, each under its decision in
 * `decisions`; `freed` units back to the budget, with their money for a money lease) and sets the lease's new
 * holds, state and close time on the entity. Answers the entries to post.
 */
export function moveLease(
  lease: LeaseEntity,
  billedExecutionIds: string[],
  freed: number,
  state: LeaseState = lease.state,
  decisions: ReadonlyMap<string, string | null> = new Map(),
): Transfer[] {
  let transfers: Transfer[] = [];
  if (lease.held > 0 && lease.funding === 'credits') {
    const moved = moneyLeaseSettlement(moneyLeaseOf(lease), billedExecutionIds, freed, decisions);
    transfers = moved.transfers;
    lease.held = moved.next.held;
    lease.holdSeq = moved.next.seq;
    lease.moneyHeld = moneyRows(moved.next.sources);
  } else if (lease.held > 0) {
    const current = leaseHold(lease.id, lease.holdSeq, lease.workspaceId, lease.held, {
      includedVolumeId: chart.includedVolume(lease.workspaceId, lease.periodStart).id,
      decisionsBilledId: chart.decisionsBilled(lease.workspaceId).id,
    });
    const moved = leaseSettlement(current, billedExecutionIds, freed, decisions);
    transfers = moved.transfers;
    if (moved.next !== current) {
      lease.held = moved.next ? Number(moved.next.amount) : 0;
      if (moved.next) lease.holdSeq += 1;
    }
  }
  lease.state = state !== 'open' && lease.held === 0 ? 'closed' : state;
  lease.closedAt = lease.state === 'closed' ? (lease.closedAt ?? new Date()) : null;
  return transfers;
}

/**
 * Holds the money of open money leases again from the front of the consumption order, inside the caller's
 * transaction (under the workspace's lock and the leases' row locks), and posts the entries. Money that came back
 * to an earlier source after a lease was granted (the untaken rest of the lease it replaced, a release) is then
 * what its next runs pay from, as runs reserving one at a time would pay. A lease past its time is left alone:
 * no source it holds can have expired while it gives units. Answers the entries, for the caller to post with its
 * own in one post (whose lock order keeps it clear of the one-statement reserve).
 */
export async function holdLeaseMoneyFromFront(manager: EntityManager, ledger: LedgerStore, leases: LeaseEntity[], now = new Date()): Promise<Transfer[]> {
  const transfers: Transfer[] = [];
  const moved: LeaseEntity[] = [];
  for (const lease of leases) {
    if (lease.state !== 'open' || lease.funding !== 'credits' || lease.held === 0 || lease.takesUntil <= now) continue;
    const money = moneyLeaseOf(lease);
    const view = await ledger.periodView(periodAccounts(lease.workspaceId, lease.currency!, lease.periodStart), lease.workspaceId, lease.currency!);
    const own = new Map(money.sources.map((source) => [source.accountId, source.heldMicros]));
    const ordered = consumptionOrder(await ledger.sourcesWithLeased(view.sources, own), now);
    let rehold: { transfers: Transfer[]; next: MoneyLease };
    try {
      rehold = moneyLeaseRehold(money, ordered);
    } catch {
      // Its sources no longer cover it (one expired just now): it keeps what it holds.
      continue;
    }
    if (rehold.transfers.length === 0) continue;
    lease.holdSeq = rehold.next.seq;
    lease.moneyHeld = moneyRows(rehold.next.sources);
    transfers.push(...rehold.transfers);
    moved.push(lease);
  }
  await saveLeases(manager, moved);
  return transfers;
}

/** Saves the leases' held units, hold numbers and states, in one statement. */
async function saveLeases(manager: EntityManager, leases: LeaseEntity[]): Promise<void> {
  if (leases.length === 0) return;
  await manager.query(
    `UPDATE leases SET held = moved.held, hold_seq = moved.hold_seq, state = moved.state, closed_at = moved.closed_at, money_held = moved.money_held::jsonb
     FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::timestamptz[], $6::text[]) AS moved (id, held, hold_seq, state, closed_at, money_held)
     WHERE leases.id = moved.id`,
    [
      leases.map((lease) => lease.id),
      leases.map((lease) => lease.held),
      leases.map((lease) => lease.holdSeq),
      leases.map((lease) => lease.state),
      leases.map((lease) => lease.closedAt?.toISOString() ?? null),
      leases.map((lease) => JSON.stringify(lease.moneyHeld)),
    ],
  );
}

/** Locks leases by id, in id order, inside the caller's transaction (after its workspace locks). */
export async function lockLeases(manager: EntityManager, leaseIds: string[]): Promise<Map<string, LeaseEntity>> {
  if (leaseIds.length === 0) return new Map();
  const rows = await manager
    .getRepository(LeaseEntity)
    .createQueryBuilder('lease')
    .where('lease.id IN (:...ids)', { ids: [...new Set(leaseIds)].sort() })
    .orderBy('lease.id')
    .setLock('pessimistic_write')
    .getMany();
  return new Map(rows.map((row) => [row.id, row]));
}

export { saveLeases };

const LEASE_ID = /^lease_[A-Za-z0-9]{20}$/;

export function isLeaseId(value: unknown): value is string {
  return typeof value === 'string' && LEASE_ID.test(value);
}

/** Settles the billable runs of a lease that no settlement named; false when that cannot be known now. */
export type LostSettlements = (lease: LeaseEntity) => Promise<boolean>;

export interface LeaseSweepReport {
  reclaimed: number;
  closed: number;
}

/** How a lease moves under its locks: the units it frees and the state it is left in. */
interface LeaseMove {
  freed: number;
  state: LeaseState;
}

/** What one grant transaction decided: a lease (new, or another caller's), none, or to reclaim open included leases first. */
type GrantDecision = { lease: LeaseEntity; fresh: boolean } | { lease: null; reclaimFirst: boolean };

/**
 * Budget leases, the ledger's side: grants (one set of holds, then the counter in Redis), drains (the untaken rest
 * of a lease freed once its counter is gone) and closes (what a lease still holds after every run that could
 * have taken from it has ended is voided). A lease holds decisions of the included volume while it has room, and
 * past it (a priced plan without a hard cap, with BILLING_MONEY_LEASES) overage decisions with their money from
 * the credit sources. Grants of a workspace are serialised on its account row, like every other write of its
 * ledger, and are never held across a run.
 */
@Injectable()
export class LeasesService {
  private readonly grants: Counter<'funding'> | null = null;
  private readonly unitsGranted: Counter<'funding'> | null = null;
  private readonly unitsVoidedAtClose: Counter<'funding'> | null = null;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: BillingConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Optional() @Inject(LEASE_COUNTER) private readonly counter: LeaseCounter | null = null,
    @Optional() @Inject(PLATFORM.metrics) metrics?: Metrics,
  ) {
    if (!metrics) return;
    // Grants against runs served tell whether step 6 stays on the fast path (a few grants a second per busy
    // workspace); units voided at close are runs that took a unit and were never settled, or a counter lost.
    this.grants = new Counter({
      name: 'decision_service_billing_lease_grants_total',
      help: 'Budget leases granted, by funding (included: the included volume; credits: overage decisions and their money)',
      labelNames: ['funding'],
      registers: [metrics.registry],
    });
    this.unitsGranted = new Counter({
      name: 'decision_service_billing_lease_units_granted_total',
      help: 'Decisions held by the budget leases granted, by funding',
      labelNames: ['funding'],
      registers: [metrics.registry],
    });
    this.unitsVoidedAtClose = new Counter({
      name: 'decision_service_billing_lease_units_voided_at_close_total',
      help: 'Decisions a lease still held when it closed, after every run that could settle against it had ended, by funding',
      labelNames: ['funding'],
      registers: [metrics.registry],
    });
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
   * sweeper closes.
   */
  async grant(request: GrantLeaseRequest): Promise<GrantLeaseReply> {
    checkIds({ workspaceId: request?.workspaceId });
    const counter = this.counter;
    if (!counter) return { leaseId: null, units: 0 };
    const workspaceId = request.workspaceId;
    let decided = await this.decideGrant(request, new Date(), true);
    if (decided.lease === null && decided.reclaimFirst) {
      // The included volume is all held, part of it by an open lease that no run may have taken yet: that rest
      // goes back first, so that no decision is leased past the included volume while some of it sits unused.
      await this.reclaimOpen(workspaceId);
      decided = await this.decideGrant(request, new Date(), false);
    }
    const { lease } = decided;
    if (!lease) return { leaseId: null, units: 0 };
    if (!decided.fresh) return { leaseId: lease.id, units: lease.units };
    let replaced: { leaseId: string; left: number } | null;
    try {
      const put = await this.db.transaction(async (manager) => {
        const locked = (await lockLeases(manager, [lease.id])).get(lease.id);
        const ttlMs = locked ? locked.takesUntil.getTime() - Date.now() : 0;
        if (!locked || locked.state !== 'open' || ttlMs <= 0) return null;
        const replaced = await counter.put(workspaceId, lease.id, lease.units, ttlMs);
        await manager.query('UPDATE leases SET counted = true WHERE id = $1', [lease.id]);
        return { replaced };
      });
      if (!put) return { leaseId: null, units: 0 };
      replaced = put.replaced;
    } catch (error) {
      this.logger.warn({ err: error, workspaceId, leaseId: lease.id }, 'could not put a lease in its counter; the sweeper closes it');
      return { leaseId: null, units: 0 };
    }
    this.grants?.inc({ funding: lease.funding });
    this.unitsGranted?.inc({ funding: lease.funding }, lease.units);
    if (replaced) {
      const freed = await this.drain(workspaceId, replaced.leaseId, replaced.left);
      if (freed && lease.funding === 'credits') await this.holdFromFront(workspaceId, lease.id);
    }
    return { leaseId: lease.id, units: lease.units };
  }

  /** See holdLeaseMoneyFromFront: done once the replaced lease's untaken rest is back, before any run settles against it. */
  private async holdFromFront(workspaceId: string, leaseId: string): Promise<void> {
    try {
      await this.db.transaction(async (manager) => {
        const ledger = new LedgerStore(manager);
        await ledger.lockExistingAccount(workspaceId);
        const lease = (await lockLeases(manager, [leaseId])).get(leaseId);
        if (lease) await ledger.post(await holdLeaseMoneyFromFront(manager, ledger, [lease]));
      });
    } catch (error) {
      this.logger.warn({ err: error, workspaceId, leaseId }, 'could not hold a lease’s money again from the front of the consumption order');
    }
  }

  private decideGrant(request: GrantLeaseRequest, now: Date, mayReclaim: boolean): Promise<GrantDecision> {
    const workspaceId = request.workspaceId;
    const seen = typeof request.seenLeaseId === 'string' ? request.seenLeaseId : null;
    return this.db.transaction(async (manager): Promise<GrantDecision> => {
      const ledger = new LedgerStore(manager);
      const account = await ledger.lockAccount(workspaceId, now);
      const leases = manager.getRepository(LeaseEntity);
      const latest = await leases.findOne({ where: { workspaceId }, order: { grantedAt: 'DESC' } });
      if (latest && latest.state === 'open' && latest.takesUntil > now && latest.id !== seen) return { lease: latest, fresh: false };
      const period = currentPeriod(account.periodAnchor, now);
      const budget = chart.includedVolume(workspaceId, period.start);
      await ledger.lockBudget(budget.id);
      const volume = (await ledger.balances([budget.id])).get(budget.id)!;
      const plan = effectivePlan(account.plan, account.overrides);
      const room = plan.included_decisions - Number(volume.debitsPosted + volume.debitsPending);
      // What the asking runner saw taken of the lease it saw, when that is the latest; else all of the latest's units.
      const taken =
        latest && latest.id === seen && Number.isInteger(request.seenTaken) ? Math.min(Math.max(request.seenTaken!, 0), latest.units) : latest?.units;
      const ratePerSecond = leaseRate(latest ? { units: taken!, grantedAt: latest.grantedAt } : null, now);
      const none = { lease: null, reclaimFirst: false };
      if (room > 0) {
        // Inside the included volume, or its last few decisions (no lease: they go one at a time).
        const units = leaseSize({ ratePerSecond, room });
        if (units === 0) return none;
        const lease = await this.insertLease(manager, account, period, now, { units, funding: 'included' });
        const decisionsBilled = chart.decisionsBilled(workspaceId);
        await ledger.ensureLedgerAccounts([budget, decisionsBilled]);
        await ledger.post([leaseHold(lease.id, 0, workspaceId, units, { includedVolumeId: budget.id, decisionsBilledId: decisionsBilled.id })]);
        return { lease, fresh: true };
      }
      if (!this.config.moneyLeases || plan.hard_cap || plan.price_per_million_cents === null) return none;
      if (await leases.exists({ where: { workspaceId, state: 'open', funding: 'included' } })) return mayReclaim ? { lease: null, reclaimFirst: true } : none;
      const accounts = periodAccounts(workspaceId, account.currency, period.start);
      const view = await ledger.periodView(accounts, workspaceId, account.currency);
      const sources = consumptionOrder(view.sources, now);
      const unitPriceMicros = decisionPriceMicros(plan.price_per_million_cents);
      const units = leaseSize({
        ratePerSecond,
        room: moneyLeaseRoom({
          unitPriceMicros,
          sources,
          spentMicros: view.spend.creditsPosted + view.spend.creditsPending,
          spendCapCents: account.spendCapCents,
        }),
      });
      if (units === 0) return none;
      // The room is at most what the sources pay for, so they cover the lease.
      const held = moneyLeaseSources(sources, unitPriceMicros, units)!;
      const paying = sources.filter((source) => held.some((part) => part.accountId === source.accountId));
      const lease = await this.insertLease(manager, account, period, now, {
        units,
        funding: 'credits',
        currency: account.currency,
        unitPriceMicros,
        moneyHeld: moneyRows(held),
        takesUntil: leaseTakesUntil(now, period.end, paying),
      });
      await ledger.ensureLedgerAccounts(view.missing);
      await ledger.post(moneyLeaseHolds(moneyLeaseOf(lease)));
      return { lease, fresh: true };
    });
  }

  private async insertLease(
    manager: EntityManager,
    account: AccountEntity,
    period: Period,
    now: Date,
    fields: Partial<LeaseEntity> & Pick<LeaseEntity, 'units' | 'funding'>,
  ): Promise<LeaseEntity> {
    const lease = manager.getRepository(LeaseEntity).create({
      id: `lease_${randomAlphanumeric(20)}`,
      workspaceId: account.workspaceId,
      periodStart: period.start,
      held: fields.units,
      holdSeq: 0,
      state: 'open',
      grantedAt: now,
      // Never past the period's end: a run after it is the next period's, and takes its own decision.
      takesUntil: leaseTakesUntil(now, period.end),
      closedAt: null,
      currency: null,
      unitPriceMicros: null,
      moneyHeld: [],
      counted: false,
      ...fields,
    });
    await manager.insert(LeaseEntity, lease);
    return lease;
  }

  /**
   * Reclaims the workspace's open leases: their untaken units (and their money) go back. Done before a refusal,
   * so that a 402 is only ever given when the budget is held by decisions billed or running; when a spend cap or
   * plan changes, so that no unit leased under the old one is taken after it; and before a lease past the included
   * volume while an included one is open. True when any unit was freed.
   */
  async reclaimOpen(workspaceId: string): Promise<boolean> {
    if (!this.counter) return false;
    const open = await this.db.getRepository(LeaseEntity).find({ where: { workspaceId, state: 'open' } });
    let freed = false;
    for (const lease of open) freed = (await this.reclaim(lease)) || freed;
    return freed;
  }

  /**
   * Reclaims open leases past their time and closes draining ones that no run can still settle against
   * (`BILLING_SETTLE_AFTER_MS` after their time, the longest a run may last), voiding what they still hold once
   * `settleLost` has settled the lease's runs whose settlements were lost (false: not now, try on the next sweep).
   */
  async sweep(now = new Date(), settleLost: LostSettlements = async () => true): Promise<LeaseSweepReport> {
    const report: LeaseSweepReport = { reclaimed: 0, closed: 0 };
    const repository = this.db.getRepository(LeaseEntity);
    const expired = await repository.find({ where: { state: 'open', takesUntil: LessThan(now) }, take: 500 });
    for (const lease of expired) if (await this.reclaim(lease)) report.reclaimed++;
    const done = await repository.find({
      where: { state: In(['open', 'draining']), takesUntil: LessThan(new Date(now.getTime() - this.config.settleAfterMs)) },
      take: 500,
    });
    for (const lease of done) {
      // Runs that took a unit and were recorded, but whose settlement never came, are billed before the rest is voided.
      if (lease.held > 0 && !(await settleLost(lease))) continue;
      const voided = await this.inLease(lease.workspaceId, lease.id, (locked) => (locked.state === 'closed' ? null : { freed: locked.held, state: 'closed' }));
      if (voided === null) continue;
      report.closed++;
      if (voided > 0) {
        this.unitsVoidedAtClose?.inc({ funding: lease.funding }, voided);
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
  private async reclaim(lease: LeaseEntity): Promise<boolean> {
    try {
      const freed = await this.inLease(lease.workspaceId, lease.id, async (locked) => {
        if (locked.state !== 'open') return null;
        // Not in the counter: never put (no unit was taken: all of it goes back), or replaced (being drained) or lost
        // with Redis (what it holds is voided when it closes).
        const inCounter = await this.counter!.reclaim(lease.workspaceId, lease.id);
        return { freed: Math.min(inCounter ?? (locked.counted ? 0 : locked.held), locked.held), state: 'draining' };
      });
      return (freed ?? 0) > 0;
    } catch (error) {
      this.logger.warn({ err: error, leaseId: lease.id }, 'could not reclaim a lease from its counter; retrying on the next sweep');
      return false;
    }
  }

  /** The counter no longer gives units of this lease: free its `left` untaken units, hold the rest for the runs in flight. Answers the units freed. */
  private async drain(workspaceId: string, leaseId: string, left: number): Promise<number> {
    return (
      (await this.inLease(workspaceId, leaseId, (lease) => (lease.state === 'open' ? { freed: Math.min(left, lease.held), state: 'draining' } : null))) ?? 0
    );
  }

  /** Moves one lease under its workspace's lock; answers the units freed, or null when `decide` left it alone. */
  private async inLease(
    workspaceId: string,
    leaseId: string,
    decide: (lease: LeaseEntity) => LeaseMove | null | Promise<LeaseMove | null>,
  ): Promise<number | null> {
    return this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      await ledger.lockExistingAccount(workspaceId);
      const lease = (await lockLeases(manager, [leaseId])).get(leaseId);
      const move = lease ? await decide(lease) : null;
      if (!lease || !move) return null;
      const transfers = moveLease(lease, [], move.freed, move.state);
      await saveLeases(manager, [lease]);
      await ledger.post(transfers);
      return move.freed;
    });
  }
}

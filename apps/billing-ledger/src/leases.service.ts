import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, LessThan } from 'typeorm';
import { GrantLeaseReply, GrantLeaseRequest } from '@ds/contracts';
import { chart, currentPeriod, LEASE_LIMITS, leaseHold, leaseRate, leaseSettlement, leaseSize, Transfer } from '@ds/billing';
import { randomAlphanumeric } from '@ds/ids';
import { Logger, PLATFORM } from '@ds/platform';
import { BillingConfig } from './config';
import { LeaseEntity, LeaseState } from './entities';
import { checkIds } from './id-checks';
import { LEASE_COUNTER, LeaseCounter } from './lease-counter';
import { LedgerStore } from './ledger.store';
import { effectivePlan } from './plans';

/**
 * Moves a lease's hold on by what settled against it (billed executions posted, each under its decision in
 * `decisions`; `freed` units back to the budget) and sets the lease's new hold, state and close time on the
 * entity. Answers the entries to post.
 */
export function moveLease(
  lease: LeaseEntity,
  billedExecutionIds: string[],
  freed: number,
  state: LeaseState = lease.state,
  decisions: ReadonlyMap<string, string | null> = new Map(),
): Transfer[] {
  let transfers: Transfer[] = [];
  if (lease.held > 0) {
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

/** Saves the leases' held units, hold numbers and states, in one statement. */
async function saveLeases(manager: EntityManager, leases: LeaseEntity[]): Promise<void> {
  if (leases.length === 0) return;
  await manager.query(
    `UPDATE leases SET held = moved.held, hold_seq = moved.hold_seq, state = moved.state, closed_at = moved.closed_at
     FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::timestamptz[]) AS moved (id, held, hold_seq, state, closed_at)
     WHERE leases.id = moved.id`,
    [
      leases.map((lease) => lease.id),
      leases.map((lease) => lease.held),
      leases.map((lease) => lease.holdSeq),
      leases.map((lease) => lease.state),
      leases.map((lease) => lease.closedAt?.toISOString() ?? null),
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

/**
 * Budget leases, the ledger's side: grants (one hold of N decisions, then the counter in Redis), drains (the
 * untaken rest of a lease freed once its counter is gone) and closes (what a lease still holds after every run
 * that could have taken from it has ended is voided). Grants of a workspace are serialised on its account row,
 * like every other write of its ledger, and are never held across a run.
 */
@Injectable()
export class LeasesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: BillingConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Optional() @Inject(LEASE_COUNTER) private readonly counter: LeaseCounter | null = null,
  ) {}

  get enabled(): boolean {
    return this.counter !== null;
  }

  /**
   * Grants the workspace a new lease unless another caller already replaced the one this caller saw (then that
   * one is answered), sized by the previous lease's rate and the room left in the included volume. The hold is
   * committed before the counter is put in Redis, so a unit can never be taken that the ledger does not hold; a
   * ledger that dies in between leaves a lease no run can take from, which the sweeper closes.
   */
  async grant(request: GrantLeaseRequest): Promise<GrantLeaseReply> {
    checkIds({ workspaceId: request?.workspaceId });
    const counter = this.counter;
    if (!counter) return { leaseId: null, units: 0 };
    const workspaceId = request.workspaceId;
    const seen = typeof request.seenLeaseId === 'string' ? request.seenLeaseId : null;
    const now = new Date();
    const granted = await this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      const account = await ledger.lockAccount(workspaceId, now);
      const latest = await manager.getRepository(LeaseEntity).findOne({ where: { workspaceId }, order: { grantedAt: 'DESC' } });
      if (latest && latest.state === 'open' && latest.takesUntil > now && latest.id !== seen) return { lease: latest, fresh: false };
      const period = currentPeriod(account.periodAnchor, now);
      const budget = chart.includedVolume(workspaceId, period.start);
      await ledger.lockBudget(budget.id);
      const volume = (await ledger.balances([budget.id])).get(budget.id)!;
      const room = effectivePlan(account.plan, account.overrides).included_decisions - Number(volume.debitsPosted + volume.debitsPending);
      // What the asking runner saw taken of the lease it saw, when that is the latest; else all of the latest's units.
      const taken =
        latest && latest.id === seen && Number.isInteger(request.seenTaken) ? Math.min(Math.max(request.seenTaken!, 0), latest.units) : latest?.units;
      const previous = latest ? { units: taken!, grantedAt: latest.grantedAt } : null;
      const units = leaseSize({ ratePerSecond: leaseRate(previous, now), room });
      if (units === 0) return { lease: null, fresh: false };
      const lease = manager.getRepository(LeaseEntity).create({
        id: `lease_${randomAlphanumeric(20)}`,
        workspaceId,
        periodStart: period.start,
        units,
        held: units,
        holdSeq: 0,
        state: 'open',
        grantedAt: now,
        takesUntil: new Date(now.getTime() + LEASE_LIMITS.ttlMs),
        closedAt: null,
      });
      await manager.insert(LeaseEntity, lease);
      const decisionsBilled = chart.decisionsBilled(workspaceId);
      await ledger.ensureLedgerAccounts([budget, decisionsBilled]);
      await ledger.post([leaseHold(lease.id, 0, workspaceId, units, { includedVolumeId: budget.id, decisionsBilledId: decisionsBilled.id })]);
      return { lease, fresh: true };
    });
    const { lease } = granted;
    if (!lease) return { leaseId: null, units: 0 };
    if (!granted.fresh) return { leaseId: lease.id, units: lease.units };
    let replaced: { leaseId: string; left: number } | null;
    try {
      replaced = await counter.put(workspaceId, lease.id, lease.units, LEASE_LIMITS.ttlMs);
    } catch (error) {
      this.logger.warn({ err: error, workspaceId, leaseId: lease.id }, 'could not put a lease in its counter; the sweeper closes it');
      return { leaseId: null, units: 0 };
    }
    if (replaced) await this.drain(workspaceId, replaced.leaseId, replaced.left);
    return { leaseId: lease.id, units: lease.units };
  }

  /**
   * Reclaims the workspace's open leases before a refusal: their untaken units go back to the budget, so that a
   * 402 is only ever given when the budget is held by decisions billed or running. True when any was freed.
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
      if (voided > 0)
        this.logger.warn({ workspaceId: lease.workspaceId, leaseId: lease.id, units: voided }, 'closed a lease with units taken but never settled');
    }
    return report;
  }

  /** Ends one open lease in its counter and frees its untaken units; a counter that lost it leaves the rest to close. */
  private async reclaim(lease: LeaseEntity): Promise<boolean> {
    let left: number | null;
    try {
      left = await this.counter!.reclaim(lease.workspaceId, lease.id);
    } catch (error) {
      this.logger.warn({ err: error, leaseId: lease.id }, 'could not reclaim a lease from its counter; retrying on the next sweep');
      return false;
    }
    // Not in the counter: replaced (already drained) or lost with Redis; what it holds is voided when it closes.
    await this.drain(lease.workspaceId, lease.id, left ?? 0);
    return (left ?? 0) > 0;
  }

  /** The counter no longer gives units of this lease: free its `left` untaken units, hold the rest for the runs in flight. */
  private async drain(workspaceId: string, leaseId: string, left: number): Promise<void> {
    await this.inLease(workspaceId, leaseId, (lease) => (lease.state === 'open' ? { freed: Math.min(left, lease.held), state: 'draining' } : null));
  }

  /** Moves one lease under its workspace's lock; answers the units freed, or null when `decide` left it alone. */
  private async inLease(
    workspaceId: string,
    leaseId: string,
    decide: (lease: LeaseEntity) => { freed: number; state: LeaseState } | null,
  ): Promise<number | null> {
    return this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      await ledger.lockExistingAccount(workspaceId);
      const lease = (await lockLeases(manager, [leaseId])).get(leaseId);
      const move = lease ? decide(lease) : null;
      if (!lease || !move) return null;
      const transfers = moveLease(lease, [], move.freed, move.state);
      await saveLeases(manager, [lease]);
      await ledger.post(transfers);
      return move.freed;
    });
  }
}

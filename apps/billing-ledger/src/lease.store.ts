import { EntityManager, In, LessThan } from 'typeorm';
import { Currency } from '@ds/contracts';
import { consumptionOrder, Lease, mayHoldFromFront, moneyLeaseOf, periodAccounts, reholdLease, Transfer } from '@ds/billing';
import { LeaseEntity } from './entities';
import { LedgerStore } from './ledger.store';

/** The most leases one sweep reads of each kind. */
const SWEEP_BATCH = 500;

/**
 * Budget leases' persistence, beside LedgerStore and in the same transaction: leases are locked after the
 * workspace's account row (LedgerStore.lockAccount) and in id order, so that grants, settlements and sweeps
 * cannot deadlock.
 */
export class LeaseStore {
  constructor(private readonly manager: EntityManager) {}

  /** Locks leases by id, in id order, inside the caller's transaction (after its workspace locks). */
  async lock(leaseIds: string[]): Promise<Map<string, Lease>> {
    if (leaseIds.length === 0) return new Map();
    const rows = await this.manager
      .getRepository(LeaseEntity)
      .createQueryBuilder('lease')
      .where('lease.id IN (:...ids)', { ids: [...new Set(leaseIds)].sort() })
      .orderBy('lease.id')
      .setLock('pessimistic_write')
      .getMany();
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** Saves the leases' held units, hold numbers and states, in one statement. */
  async save(leases: Lease[]): Promise<void> {
    if (leases.length === 0) return;
    await this.manager.query(
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

  async insert(lease: Lease): Promise<void> {
    await this.manager.insert(LeaseEntity, this.manager.getRepository(LeaseEntity).create(lease));
  }

  /** Its grant put the lease in the counter. */
  async markCounted(leaseId: string): Promise<void> {
    await this.manager.query('UPDATE leases SET counted = true WHERE id = $1', [leaseId]);
  }

  /** The workspace's most recently granted lease. */
  latest(workspaceId: string): Promise<Lease | null> {
    return this.manager.getRepository(LeaseEntity).findOne({ where: { workspaceId }, order: { grantedAt: 'DESC' } });
  }

  /** The decisions the period's leases not closed still hold. */
  async heldInPeriod(workspaceId: string, periodStart: Date): Promise<number> {
    const [leased] = (await this.manager.query(
      `SELECT COALESCE(sum(held), 0)::int AS units FROM leases WHERE workspace_id = $1 AND period_start = $2 AND state <> 'closed'`,
      [workspaceId, periodStart],
    )) as Array<{ units: number }>;
    return leased?.units ?? 0;
  }

  /** The money the period's money leases not closed still hold, by credit source account. */
  async moneyHeldInPeriod(workspaceId: string, periodStart: Date, currency: Currency): Promise<Map<string, bigint>> {
    const rows = (await this.manager.query(
      `SELECT held.account_id, sum(held.micros::bigint)::text AS micros
         FROM leases CROSS JOIN LATERAL jsonb_to_recordset(leases.money_held) AS held (account_id text, micros text)
         WHERE leases.workspace_id = $1 AND leases.period_start = $2 AND leases.state <> 'closed' AND leases.funding = 'credits' AND leases.currency = $3
         GROUP BY 1`,
      [workspaceId, periodStart, currency],
    )) as Array<{ account_id: string; micros: string }>;
    return new Map(rows.map((row) => [row.account_id, BigInt(row.micros)]));
  }

  /** Whether the workspace has an included lease whose counter may still give units. */
  async hasOpenIncluded(workspaceId: string): Promise<boolean> {
    const rows: unknown[] = await this.manager.query(`SELECT 1 FROM leases WHERE workspace_id = $1 AND state = 'open' AND funding = 'included' LIMIT 1`, [
      workspaceId,
    ]);
    return rows.length > 0;
  }

  open(workspaceId: string): Promise<Lease[]> {
    return this.manager.getRepository(LeaseEntity).find({ where: { workspaceId, state: 'open' } });
  }

  /** Open leases whose time ended before `now`. */
  expired(now: Date): Promise<Lease[]> {
    return this.manager.getRepository(LeaseEntity).find({ where: { state: 'open', takesUntil: LessThan(now) }, take: SWEEP_BATCH });
  }

  /** Leases not closed whose time ended before `before`. */
  unclosedBefore(before: Date): Promise<Lease[]> {
    return this.manager.getRepository(LeaseEntity).find({ where: { state: In(['open', 'draining']), takesUntil: LessThan(before) }, take: SWEEP_BATCH });
  }

  /**
   * Holds the money of open money leases again from the front of the consumption order, inside the caller's
   * transaction (under the workspace's lock and the leases' row locks), and saves them. Money that came back to an
   * earlier source after a lease was granted (the untaken rest of the lease it replaced, a release) is then what
   * its next runs pay from, as runs reserving one at a time would pay. A lease past its time is left alone: no
   * source it holds can have expired while it gives units. Answers every lease as it now is and the entries, for
   * the caller to post with its own in one post (whose lock order keeps it clear of the one-statement reserve).
   */
  async holdMoneyFromFront(ledger: LedgerStore, leases: Lease[], now = new Date()): Promise<{ leases: Lease[]; transfers: Transfer[] }> {
    const transfers: Transfer[] = [];
    const moved: Lease[] = [];
    const after: Lease[] = [];
    for (const lease of leases) {
      if (!mayHoldFromFront(lease, now)) {
        after.push(lease);
        continue;
      }
      const view = await ledger.periodView(periodAccounts(lease.workspaceId, lease.currency!, lease.periodStart), lease.workspaceId, lease.currency!);
      const own = new Map(moneyLeaseOf(lease).sources.map((source) => [source.accountId, source.heldMicros]));
      const rehold = reholdLease(lease, consumptionOrder(await ledger.sourcesWithLeased(view.sources, own), now));
      if (rehold.kind !== 'moved') {
        after.push(lease);
        continue;
      }
      after.push(rehold.lease);
      moved.push(rehold.lease);
      transfers.push(...rehold.transfers);
    }
    await this.save(moved);
    return { leases: after, transfers };
  }
}

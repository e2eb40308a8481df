import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { PLANS, PLAN_NAMES } from './plans';

/**
 * The workspace's included volume for its plan and overrides, computed by PostgreSQL from the account row the
 * statement reads, so that a plan change on any replica applies to the next reservation without a cache to
 * invalidate. Built once from the catalogue's constants: the text stays fixed and can be prepared.
 */
const INCLUDED_LIMIT = `COALESCE((account.overrides->>'included_decisions')::bigint, CASE account.plan ${PLAN_NAMES.map(
  (name) => `WHEN '${name}' THEN ${Number(PLANS[name].included_decisions)}`,
).join(' ')} END)`;

/**
 * Step 6 for the common case in one autocommit statement: while the period's included volume has room, take
 * one decision of it. The budget is the period's included-volume ledger account itself (its debits, pending and
 * posted, are the decisions taken), so there is no second counter to keep in step with the ledger: the
 * statement raises that account's pending debits only where they are below the plan's included volume, and in
 * the same statement records the reservation, writes its hold entry and raises the decisions-billed account's
 * pending credits. PostgreSQL re-checks the condition on the newest row version after waiting for a concurrent
 * writer, so the room is exact across replicas. The row lock lasts only for this statement.
 *
 * No 402 is possible while the included volume has room, so the spec's order of refusals is untouched: every
 * other case (an execution id seen before, a new account or period, included volume used up) finds no row to
 * update and goes to the locked path.
 */
const RESERVE_INCLUDED = `
WITH room AS (
  UPDATE ledger_accounts AS volume SET debits_pending = volume.debits_pending + 1
  FROM accounts AS account
  WHERE volume.id = $3 AND account.workspace_id = $1
    AND volume.debits_pending + volume.debits_posted < ${INCLUDED_LIMIT}
    AND NOT EXISTS (SELECT 1 FROM reservations WHERE execution_id = $2)
  RETURNING volume.id
), reservation AS (
  INSERT INTO reservations (execution_id, workspace_id, state, period_start)
  SELECT $2, $1, 'pending', $5::timestamptz FROM room
  RETURNING execution_id
), hold AS (
  INSERT INTO transfers (id, cause_id, workspace_id, ledger, debit_account_id, credit_account_id, amount, phase, pending_id, code)
  SELECT execution_id || ':hold:0', execution_id, $1, 'decisions', $3, $4, 1, 'pending', NULL, 'included_decision' FROM reservation
  RETURNING id
), billed AS (
  UPDATE ledger_accounts SET credits_pending = credits_pending + 1
  WHERE id = $4 AND EXISTS (SELECT 1 FROM hold)
  RETURNING id
)
SELECT count(*)::int AS held FROM billed`;

/** PostgreSQL errors that only mean "not the common case": a racing duplicate execution id, a missing account. */
const LEAVE_TO_LOCKED_PATH = new Set(['23505', '23503']);

export interface IncludedHold {
  workspaceId: string;
  executionId: string;
  includedVolumeId: string;
  decisionsBilledId: string;
  periodStart: Date;
}

/** Runs the one-statement reservation through the pool's own connections as a named (prepared) statement. */
export class FastReserve {
  private readonly pool: Pool;

  constructor(db: DataSource) {
    this.pool = (db.driver as PostgresDriver).master as Pool;
  }

  /** True when the decision was taken from the included volume; false when the locked path must decide. */
  async tryIncluded(hold: IncludedHold): Promise<boolean> {
    try {
      const result = await this.pool.query<{ held: number }>({
        name: 'billing-reserve-included',
        text: RESERVE_INCLUDED,
        values: [hold.workspaceId, hold.executionId, hold.includedVolumeId, hold.decisionsBilledId, hold.periodStart.toISOString()],
      });
      return result.rows[0]?.held === 1;
    } catch (error) {
      if (LEAVE_TO_LOCKED_PATH.has((error as { code?: string }).code ?? '')) return false;
      throw error;
    }
  }
}

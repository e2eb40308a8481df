import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { PlanName } from '@ds/contracts';
import { PlanOverrides } from './plans';

/** What the included volume's room is computed from: the account's plan and overrides, and the decisions taken (pending and posted). */
export interface IncludedBudget {
  plan: PlanName;
  overrides: PlanOverrides;
  used: number;
}

export interface IncludedTake {
  workspaceId: string;
  /** In the order asked; those with a reservation already are skipped. */
  executionIds: string[];
  includedVolumeId: string;
  decisionsBilledId: string;
  periodStart: Date;
  /** The budget the room was computed from; null when none is known yet. */
  seen: IncludedBudget | null;
  /** The included decisions of `seen`'s plan and overrides. */
  included: number;
  /** How many to take, at most: the room the caller computed from `seen`. */
  take: number;
}

/**
 * `fits`: the account still had `seen`'s plan and overrides and `take` more decisions still fit in `included`, and
 * `held` are the executions taken (fewer than `take` when some had a reservation already). Otherwise nothing was
 * taken. `budget` is the budget as it was under the row lock, before this statement took from it; null (and nothing
 * taken) when the account or the period's volume does not exist yet.
 */
export interface IncludedTakeResult {
  fits: boolean;
  held: string[];
  budget: IncludedBudget | null;
}

/**
 * One autocommit statement, for one execution or several of one workspace: locks the period's included-volume
 * ledger account (first, as every other writer of the workspace's ledger takes it: see LedgerStore.post;
 * PostgreSQL hands it the newest row version after waiting for a concurrent writer) and, only while the account
 * still has the plan and overrides the room was computed under and the `$6` decisions asked for still fit in their
 * `$7` (with what is taken now, pending and posted), takes them in the order asked: raises its pending debits,
 * records the reservations, writes their hold entries and raises the decisions-billed account's pending credits.
 * It answers the budget as it was under the lock and the executions held. The budget is the ledger account
 * itself, so there is no second counter to keep in step with the ledger, and the lock lasts only for this
 * statement. How many to ask for is the caller's (includedRoom); the statement only refuses what no longer fits.
 */
const TAKE_INCLUDED = `
WITH wanted AS (
  SELECT asked.execution_id, row_number() OVER (ORDER BY asked.n) AS rank
  FROM unnest($2::text[]) WITH ORDINALITY AS asked (execution_id, n)
  WHERE NOT EXISTS (SELECT 1 FROM reservations WHERE reservations.execution_id = asked.execution_id)
), budget AS (
  SELECT volume.id, account.plan, account.overrides, volume.debits_pending + volume.debits_posted AS used,
         account.plan = $8 AND account.overrides = $9::jsonb AND volume.debits_pending + volume.debits_posted + $6::bigint <= $7::bigint AS fits
  FROM ledger_accounts AS volume JOIN accounts AS account ON account.workspace_id = $1
  WHERE volume.id = $3
  FOR NO KEY UPDATE OF volume
), taken AS (
  UPDATE ledger_accounts AS volume SET debits_pending = volume.debits_pending + LEAST((SELECT count(*) FROM wanted), $6::bigint)
  FROM budget WHERE volume.id = budget.id AND budget.fits AND $6::bigint > 0
  RETURNING LEAST((SELECT count(*) FROM wanted), $6::bigint) AS room
), reservation AS (
  INSERT INTO reservations (execution_id, workspace_id, state, period_start)
  SELECT wanted.execution_id, $1, 'pending', $5::timestamptz FROM wanted, taken WHERE wanted.rank <= taken.room
  RETURNING execution_id
), hold AS (
  INSERT INTO transfers (id, cause_id, workspace_id, ledger, debit_account_id, credit_account_id, amount, phase, pending_id, code)
  SELECT execution_id || ':hold:0', execution_id, $1, 'decisions', $3, $4, 1, 'pending', NULL, 'included_decision' FROM reservation
  RETURNING cause_id
), billed AS (
  UPDATE ledger_accounts SET credits_pending = credits_pending + (SELECT count(*) FROM hold)
  WHERE id = $4 AND EXISTS (SELECT 1 FROM hold)
)
SELECT budget.plan, budget.overrides, budget.used, budget.fits, ARRAY(SELECT cause_id FROM hold) AS held FROM budget`;

/**
 * The one-statement reserve of step 6, run through the pool's own connections as a named (prepared) statement:
 * it skips TypeORM's query runner on a path every run may take.
 */
export class IncludedReserveStore {
  private readonly pool: Pool;

  constructor(db: DataSource) {
    this.pool = (db.driver as PostgresDriver).master as Pool;
  }

  async take(take: IncludedTake): Promise<IncludedTakeResult> {
    const { rows } = await this.pool.query<{ plan: PlanName; overrides: PlanOverrides; used: string; fits: boolean | null; held: string[] }>({
      name: 'billing-take-included',
      text: TAKE_INCLUDED,
      values: [
        take.workspaceId,
        take.executionIds,
        take.includedVolumeId,
        take.decisionsBilledId,
        take.periodStart.toISOString(),
        take.take,
        take.included,
        take.seen?.plan ?? null,
        take.seen ? JSON.stringify(take.seen.overrides) : null,
      ],
    });
    const row = rows[0];
    if (!row) return { fits: false, held: [], budget: null };
    return { fits: row.fits === true, held: row.held, budget: { plan: row.plan, overrides: row.overrides, used: Number(row.used) } };
  }
}

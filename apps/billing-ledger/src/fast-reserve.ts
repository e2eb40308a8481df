import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { isForeignKeyViolation, isUniqueViolation } from '@ds/platform';
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
 * Step 6 for the common case in one autocommit statement, for one execution or for several of one workspace at
 * once: while the period's included volume has room, take one decision of it per execution, in the order asked,
 * as many as there is room for. The budget is the period's included-volume ledger account itself (its debits,
 * pending and posted, are the decisions taken), so there is no second counter to keep in step with the ledger:
 * the statement locks that row, raises its pending debits by what it takes, and in the same statement records
 * the reservations, writes their hold entries and raises the decisions-billed account's pending credits. The row
 * lock is taken first (as every other writer of the workspace's ledger takes it: see LedgerStore.post), PostgreSQL
 * hands it the newest row version after waiting for a concurrent writer, so the room is exact across replicas,
 * and the lock lasts only for this statement.
 *
 * Its room is includedRoom of `@ds/billing` (the included decisions less the debits, pending and posted), written
 * here in SQL because it must be read under the row lock it is taken with.
 *
 * No 402 is possible while the included volume has room, so the spec's order of refusals is untouched: every
 * other case (an execution id seen before, a new account or period, included volume used up) takes nothing here
 * and goes to the locked path.
 */
const RESERVE_INCLUDED = `
WITH wanted AS (
  SELECT asked.execution_id, row_number() OVER (ORDER BY asked.n) AS rank
  FROM unnest($2::text[]) WITH ORDINALITY AS asked (execution_id, n)
  WHERE NOT EXISTS (SELECT 1 FROM reservations WHERE reservations.execution_id = asked.execution_id)
), budget AS (
  SELECT volume.id, LEAST((SELECT count(*) FROM wanted), ${INCLUDED_LIMIT} - volume.debits_pending - volume.debits_posted) AS room
  FROM ledger_accounts AS volume JOIN accounts AS account ON account.workspace_id = $1
  WHERE volume.id = $3
  FOR NO KEY UPDATE OF volume
), taken AS (
  UPDATE ledger_accounts AS volume SET debits_pending = volume.debits_pending + budget.room
  FROM budget WHERE volume.id = budget.id AND budget.room > 0
  RETURNING budget.room
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
SELECT cause_id AS execution_id FROM hold`;

/** PostgreSQL errors that only mean "not the common case": a racing duplicate execution id, a missing account. */
function leaveToLockedPath(error: unknown): boolean {
  return isUniqueViolation(error) || isForeignKeyViolation(error);
}

/** The most executions one statement reserves. */
const GROUP_MAX = 256;

export interface IncludedHold {
  workspaceId: string;
  executionId: string;
  includedVolumeId: string;
  decisionsBilledId: string;
  periodStart: Date;
}

interface Waiting {
  hold: IncludedHold;
  done: (held: boolean) => void;
  failed: (error: unknown) => void;
}

/**
 * Runs the one-statement reservation through the pool's own connections as a named (prepared) statement. The
 * reserves of one budget row share statements: the first goes at once, and the ones that arrive while it runs
 * go together in the next (group commit), so a busy workspace pays one round trip and one commit for many runs
 * instead of queueing on its row one commit at a time.
 */
export class FastReserve {
  private readonly pool: Pool;
  private readonly queues = new Map<string, Waiting[]>();

  constructor(db: DataSource) {
    this.pool = (db.driver as PostgresDriver).master as Pool;
  }

  /** True when the decision was taken from the included volume; false when the locked path must decide. */
  tryIncluded(hold: IncludedHold): Promise<boolean> {
    return new Promise((done, failed) => {
      const queue = this.queues.get(hold.includedVolumeId);
      if (queue) {
        queue.push({ hold, done, failed });
        return;
      }
      this.queues.set(hold.includedVolumeId, []);
      void this.drain(hold.includedVolumeId, [{ hold, done, failed }]);
    });
  }

  private async drain(budgetId: string, first: Waiting[]): Promise<void> {
    let group = first;
    while (group.length > 0) {
      await this.reserveGroup(group);
      const queue = this.queues.get(budgetId)!;
      group = queue.splice(0, GROUP_MAX);
    }
    this.queues.delete(budgetId);
  }

  private async reserveGroup(group: Waiting[]): Promise<void> {
    const first = group[0];
    // drain only passes non-empty groups; an empty one would have nothing to reserve.
    if (first === undefined) return;
    const { hold } = first;
    try {
      const result = await this.pool.query<{ execution_id: string }>({
        name: 'billing-reserve-included',
        text: RESERVE_INCLUDED,
        values: [
          hold.workspaceId,
          group.map((waiting) => waiting.hold.executionId),
          hold.includedVolumeId,
          hold.decisionsBilledId,
          hold.periodStart.toISOString(),
        ],
      });
      const held = new Set(result.rows.map((row) => row.execution_id));
      for (const waiting of group) waiting.done(held.has(waiting.hold.executionId));
    } catch (error) {
      const leave = leaveToLockedPath(error);
      for (const waiting of group) {
        if (leave) waiting.done(false);
        else waiting.failed(error);
      }
    }
  }
}

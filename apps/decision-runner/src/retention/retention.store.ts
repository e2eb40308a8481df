import { DataSource } from 'typeorm';
import { RETENTION_BATCH_MAX } from '@ds/contracts';
import { MINUTE_GRAIN } from '@ds/decision-schema';
import { deleteInBatches } from '@ds/platform';
import { ROLLUP_TABLES } from '../executions/rollups';

/** Rows deleted per statement: short statements, short locks, nothing that nears the statement timeout. */
const DELETE_BATCH = 1_000;

/** What retention deletes: old executions with their replays and rollups, lapsed lab limits, and rollups left by deleted workspaces. */
export class RetentionStore {
  constructor(private readonly db: DataSource) {}

  /**
   * The next workspace ids (after `after`, at most RETENTION_BATCH_MAX) with rows in `table`, whose index leads with
   * workspace_id: it skips from one id to the next through the index instead of reading every row.
   */
  async workspaceIdsIn(table: string, after: string): Promise<string[]> {
    const page = (await this.db.query(
      `WITH RECURSIVE ids AS (
         (SELECT workspace_id FROM ${table} WHERE workspace_id > $1 ORDER BY workspace_id LIMIT 1)
         UNION ALL
         SELECT (SELECT t.workspace_id FROM ${table} t WHERE t.workspace_id > ids.workspace_id ORDER BY t.workspace_id LIMIT 1)
         FROM ids WHERE ids.workspace_id IS NOT NULL
       )
       SELECT workspace_id FROM ids WHERE workspace_id IS NOT NULL LIMIT $2`,
      [after, RETENTION_BATCH_MAX],
    )) as Array<{ workspace_id: string }>;
    return page.map((row) => row.workspace_id);
  }

  /** Deletes the workspace's executions older than `cutoff`, the replays started before it and the rollups wholly before it; answers how many executions. */
  async purgeWorkspace(workspaceId: string, cutoff: Date): Promise<number> {
    const deleted = await deleteInBatches(
      this.db,
      `DELETE FROM executions WHERE id IN (
         SELECT id FROM executions WHERE workspace_id = $1 AND created_at < $2 ORDER BY created_at LIMIT ${DELETE_BATCH})`,
      [workspaceId, cutoff],
      DELETE_BATCH,
    );
    // A replay keeps copies of the answers it compared: it goes once it started before the cutoff (its items with it).
    await this.db.query(`DELETE FROM replays WHERE workspace_id = $1 AND created_at < $2 AND status <> 'running'`, [workspaceId, cutoff]);
    // Rollups go with the executions they count: a bucket once all of it is past the cutoff (a straddling one waits a round).
    for (const table of ROLLUP_TABLES) {
      await deleteInBatches(
        this.db,
        `DELETE FROM ${table} WHERE ctid IN (
           SELECT ctid FROM ${table} WHERE workspace_id = $1 AND bucket + grain * interval '1 second' <= $2 LIMIT ${DELETE_BATCH})`,
        [workspaceId, cutoff],
        DELETE_BATCH,
      );
    }
    return deleted;
  }

  /** Deletes minute rollups older than `cutoff`. */
  async purgeMinuteRollups(cutoff: Date): Promise<void> {
    for (const table of ROLLUP_TABLES) {
      await deleteInBatches(
        this.db,
        `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE grain = $1 AND bucket < $2 LIMIT ${DELETE_BATCH})`,
        [MINUTE_GRAIN, cutoff],
        DELETE_BATCH,
      );
    }
  }

  /** Budgets of days before `now` (UTC) and turns that expired before it. */
  async purgeLabLimits(now: Date): Promise<void> {
    await this.db.query(`DELETE FROM lab_budgets WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date`, [now]);
    await this.db.query(`DELETE FROM lab_turns WHERE expires_at < $1`, [now]);
  }

  /** Of `workspaceIds`, those with no decision left, which means deleted ones (a decision goes only with its workspace). */
  async withoutDecisions(workspaceIds: string[]): Promise<string[]> {
    const orphans = (await this.db.query(
      `SELECT asked.workspace_id FROM unnest($1::text[]) AS asked (workspace_id)
       WHERE NOT EXISTS (SELECT 1 FROM decisions WHERE decisions.workspace_id = asked.workspace_id)`,
      [workspaceIds],
    )) as Array<{ workspace_id: string }>;
    return orphans.map((row) => row.workspace_id);
  }

  /** Deletes every row of the workspace in `table`, in batches. */
  async purgeWorkspaceRows(table: string, workspaceId: string): Promise<void> {
    await deleteInBatches(
      this.db,
      `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE workspace_id = $1 LIMIT ${DELETE_BATCH})`,
      [workspaceId],
      DELETE_BATCH,
    );
  }
}

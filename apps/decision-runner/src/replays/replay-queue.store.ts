import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { NormalizedSchema } from '@ds/decision-schema';
import { ExecutionRow, INSERT_EXECUTIONS, insertParameters, STORED_INPUT } from '../executions/execution.store';
import { pgPool } from '../pg-pool';

/** What runs statements: a pool, or one connection of it. */
export type Queryable = Pick<PoolClient, 'query'>;

/** One replay item claimed for its engine call. `claim` identifies this claim, and so the process that made it. */
export interface ClaimedItem {
  replay_id: string;
  position: number;
  execution_id: string;
  replay_execution_id: string;
  workspace_id: string;
  decision_id: string;
  version: number | null;
  claim: string;
}

/**
 * Beyond an item's engine deadline (its schema's `timeoutMs`), how long a claim may last before it counts as
 * left behind by a runner that stopped: the worker stops waiting for the engine 2 seconds past the deadline, and
 * the transaction that records the result fits in the rest. Short enough that a replay resumes soon after a crash.
 */
export const CLAIM_MARGIN_MS = 15_000;

/**
 * Claims the next item: workspaces with pending work take turns, the one served longest ago (or never, since its
 * running replays started) first, and then its oldest running replay's lowest pending position. So a workspace's
 * single item waits for at most one item of each other workspace, however many they queued earlier. The item turns
 * `running` and its replay notes the time, in one statement. Null when nothing waits.
 */
export async function claimNextItem(db: Queryable, claim: string): Promise<ClaimedItem | null> {
  const { rows } = await db.query<ClaimedItem>(
    `WITH running AS (
       SELECT id, workspace_id, decision_id, version, created_at, max(last_claimed_at) OVER (PARTITION BY workspace_id) AS served
         FROM replays WHERE status = 'running'
     ), heads AS (
       SELECT DISTINCT ON (r.workspace_id) r.id, r.workspace_id, r.decision_id, r.version, r.created_at, r.served, i.position
         FROM running r
         JOIN LATERAL (
           SELECT position FROM replay_items WHERE replay_id = r.id AND status = 'pending' ORDER BY position LIMIT 1
         ) i ON true
        ORDER BY r.workspace_id, r.created_at, r.id
     ), chosen AS (
       SELECT * FROM heads ORDER BY served NULLS FIRST, created_at, id LIMIT 1
     ), claimed AS (
       UPDATE replay_items i SET status = 'running', claimed_at = clock_timestamp(), claimed_by = $1
         FROM chosen c
        WHERE i.replay_id = c.id AND i.position = c.position AND i.status = 'pending'
       RETURNING i.replay_id, i.position, i.execution_id, i.replay_execution_id, i.claimed_at, c.workspace_id, c.decision_id, c.version
     ), served AS (
       UPDATE replays r SET last_claimed_at = c.claimed_at FROM claimed c WHERE r.id = c.replay_id
     )
     SELECT replay_id, position, execution_id, replay_execution_id, workspace_id, decision_id, version, $1 AS claim FROM claimed`,
    [claim],
  );
  return rows[0] ?? null;
}

/**
 * Puts back an item whose engine call never reached the provider (no slot was free): pending again, or cancelled
 * when its replay was cancelled meanwhile (the cancel skipped it while it was running). The replay's row is locked
 * first so that a cancel either sees the item pending again or has already been seen here.
 */
export async function releaseItem(db: Queryable, item: Pick<ClaimedItem, 'replay_id' | 'position' | 'claim'>): Promise<void> {
  await db.query(
    `WITH replay AS (SELECT status FROM replays WHERE id = $1 FOR SHARE)
     UPDATE replay_items SET status = CASE WHEN (SELECT status FROM replay) = 'running' THEN 'pending' ELSE 'cancelled' END,
            claimed_at = NULL, claimed_by = NULL
      WHERE replay_id = $1 AND position = $2 AND status = 'running' AND claimed_by = $3`,
    [item.replay_id, item.position, item.claim],
  );
}

/**
 * Claims left behind by a runner that stopped during an engine call. An item of a running replay is pending
 * again, to be run by the next claim (that engine call may have been paid twice; the item counts once). One of a
 * replay that is over is failed: its call may have been paid, so it keeps counting against the daily cap. Answers
 * how many items were taken back.
 */
export async function takeBackAbandonedClaims(db: Queryable, marginMs: number = CLAIM_MARGIN_MS): Promise<number> {
  const { rows } = await db.query<{ replay_id: string }>(
    `WITH abandoned AS (
       SELECT i.replay_id, i.position, r.status = 'running' AS resumable
         FROM replay_items i JOIN replays r ON r.id = i.replay_id
        WHERE i.status = 'running'
          AND i.claimed_at < statement_timestamp()
                - make_interval(secs => (coalesce((r.schema->'settings'->>'timeoutMs')::numeric, 0) + $1) / 1000.0)
        FOR UPDATE OF i SKIP LOCKED
     )
     UPDATE replay_items i
        SET status = CASE WHEN a.resumable THEN 'pending' ELSE 'failed' END,
            claimed_at = CASE WHEN a.resumable THEN NULL ELSE i.claimed_at END,
            claimed_by = CASE WHEN a.resumable THEN NULL ELSE i.claimed_by END,
            error = CASE WHEN a.resumable THEN NULL
                         ELSE '{"code":"INTERNAL_ERROR","message":"The runner stopped while this execution was being replayed."}'::jsonb END
       FROM abandoned a
      WHERE i.replay_id = a.replay_id AND i.position = a.position
     RETURNING i.replay_id`,
    [marginMs],
  );
  return rows.length;
}

/** Completes a running replay once none of its items waits or is in flight. */
export async function completeIfFinished(db: Queryable, replayId: string): Promise<void> {
  await db.query(
    `UPDATE replays SET status = 'completed', finished_at = now()
      WHERE id = $1 AND status = 'running'
        AND NOT EXISTS (SELECT 1 FROM replay_items WHERE replay_id = $1 AND status IN ('pending', 'running'))`,
    [replayId],
  );
}

/** What a replay runs: its own schema, and the active version's for the baseline (null when the replay is of the active version). */
export interface ReplaySchemas {
  slug: string;
  schema: NormalizedSchema;
  baseline: NormalizedSchema | null;
}

/** The schemas the replay was started with, and its decision's slug. */
export async function replaySchemas(db: DataSource, replayId: string): Promise<ReplaySchemas | undefined> {
  const [row] = (await db.query(
    `SELECT d.slug, r.schema, r.baseline_schema AS baseline FROM replays r JOIN decisions d ON d.id = r.decision_id WHERE r.id = $1`,
    [replayId],
  )) as Array<ReplaySchemas>;
  return row;
}

/** The input the replayed execution kept; null once it was purged. */
export async function replayedInput(db: DataSource, item: Pick<ClaimedItem, 'execution_id' | 'workspace_id'>): Promise<{ state?: unknown } | null> {
  const [original] = (await db.query(`SELECT ${STORED_INPUT} AS input FROM executions WHERE id = $1 AND workspace_id = $2`, [
    item.execution_id,
    item.workspace_id,
  ])) as Array<{ input: { state?: unknown } | null }>;
  return original?.input ?? null;
}

/** What a finished item records beside the answers it replayed: its own and, with a baseline, the active version's. */
export interface ItemResult {
  status: 'done' | 'failed';
  action: string | null;
  answers: object | null;
  error: { code: string; message: string } | null;
  baselineAction: string | null;
  baselineAnswers: object | null;
  baselineError: { code: string; message: string } | null;
}

/**
 * Marks the item and records its execution (when it has one) in one transaction. False, with nothing written, when
 * the claim is no longer `item.claim` (taken back after the runner stalled past the claim's margin).
 */
export async function finishItem(
  pool: Pool,
  item: Pick<ClaimedItem, 'replay_id' | 'position' | 'claim'>,
  result: ItemResult,
  row: ExecutionRow | null,
): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const marked = await client.query(
      `UPDATE replay_items SET status = $3, new_action = $4, new_answers = $5, error = $6,
                               baseline_action = $8, baseline_answers = $9, baseline_error = $10
        WHERE replay_id = $1 AND position = $2 AND status = 'running' AND claimed_by = $7`,
      [
        item.replay_id,
        item.position,
        result.status,
        result.action,
        result.answers ? JSON.stringify(result.answers) : null,
        result.error ? JSON.stringify(result.error) : null,
        item.claim,
        result.baselineAction,
        result.baselineAnswers ? JSON.stringify(result.baselineAnswers) : null,
        result.baselineError ? JSON.stringify(result.baselineError) : null,
      ],
    );
    if (marked.rowCount === 0) {
      await client.query('ROLLBACK');
      return false;
    }
    if (row) await client.query({ ...INSERT_EXECUTIONS, values: insertParameters([row]) });
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The queue as the worker uses it, on the runner's pool. */
export class ReplayQueue {
  constructor(private readonly db: DataSource) {}

  claimNext(claim: string): Promise<ClaimedItem | null> {
    return claimNextItem(pgPool(this.db), claim);
  }

  takeBackAbandoned(): Promise<number> {
    return takeBackAbandonedClaims(pgPool(this.db));
  }

  release(item: Pick<ClaimedItem, 'replay_id' | 'position' | 'claim'>): Promise<void> {
    return releaseItem(pgPool(this.db), item);
  }

  finish(item: Pick<ClaimedItem, 'replay_id' | 'position' | 'claim'>, result: ItemResult, row: ExecutionRow | null): Promise<boolean> {
    return finishItem(pgPool(this.db), item, result, row);
  }

  completeIfFinished(replayId: string): Promise<void> {
    return completeIfFinished(pgPool(this.db), replayId);
  }

  schemas(replayId: string): Promise<ReplaySchemas | undefined> {
    return replaySchemas(this.db, replayId);
  }

  input(item: Pick<ClaimedItem, 'execution_id' | 'workspace_id'>): Promise<{ state?: unknown } | null> {
    return replayedInput(this.db, item);
  }
}

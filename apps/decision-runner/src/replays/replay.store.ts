import { DataSource, EntityManager } from 'typeorm';
import { DecisionRef, Deployer, ServiceError } from '@ds/contracts';
import { ReplaySelection } from '@ds/decision-schema';
import { rowsReturned } from '@ds/platform';
import { ItemRow, ReplayRow } from './replay-rows';

/** Items (`i`) joined with the execution they replay (`e`), for its outcome. */
const ITEM_COLUMNS = `i.position, i.execution_id, i.replay_execution_id, i.status, i.old_action, i.old_answers, i.new_action, i.new_answers,
  i.error, i.baseline_action, i.baseline_answers, e.outcome->>'action' AS outcome_action`;

/**
 * A replay's items as one JSON text that PostgreSQL writes (for a lab thread to parse), each item an array of the
 * `ComparedItem` columns in `SUMMARY_COLUMNS` order (replay-rows.ts). `$1` is the replay's id.
 */
const ITEMS_SUMMARY_TEXT = `SELECT coalesce(json_agg(json_build_array(i.status, i.old_action, i.old_answers, i.new_action, i.new_answers,
    i.baseline_action, i.baseline_answers, e.outcome->>'action',
    CASE WHEN e.outcome->>'source' IN ('review', 'audit') THEN json_build_object('action', e.outcome->'action', 'answers', coalesce(e.outcome->'answers', '{}'::jsonb)) END)
    ORDER BY i.position), '[]')::text AS items
  FROM replay_items i LEFT JOIN executions e ON e.id = i.execution_id WHERE i.replay_id = $1`;

/** Runs a replay may take, whether or not they kept their input: successful, never a replay's or a shadow's own. */
const REPLAY_SOURCES = `workspace_id = $1 AND decision_id = $2 AND status = 'success' AND source NOT IN ('replay', 'shadow')`;
/** Executions a replay may take: those of them that kept their input (written to `input` and `input_json` alike). */
const REPLAYABLE = `${REPLAY_SOURCES} AND input IS NOT NULL`;

/** An execution a replay takes: its id and what it answered. */
export interface ReplayCandidate {
  id: string;
  action: string;
  result: object | null;
}

/** A replay as it is started: the version replayed and the active one beside it as baseline, when that is another. */
export interface NewReplay {
  id: string;
  workspaceId: string;
  decisionId: string;
  version: number | null;
  schema: object;
  selection: ReplaySelection;
  startedBy: Deployer | null | undefined;
  baselineVersion: number | null;
  baselineSchema: object | null;
}

/**
 * Replays and their items (`replays`, `replay_items`) as they are started, read and cancelled; the worker's claims
 * are in `replay-queue.store.ts`. Bound to the pool or, inside `transaction`, to one transaction.
 */
export class ReplayStore {
  constructor(private readonly db: EntityManager) {}

  static of(db: DataSource): ReplayStore {
    return new ReplayStore(db.manager);
  }

  transaction<T>(work: (tx: ReplayStore) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(new ReplayStore(tx)));
  }

  /** Starts of one workspace queue here (inside a transaction), so that each counts what the previous one took against the daily cap. */
  async lockStarts(workspaceId: string): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtext('decision_runner.replays'), hashtext($1))`, [workspaceId]);
  }

  /** The executions a replay of `selection` takes, newest first: the last N that kept their input, or those in the range (at most 1,000). */
  async candidates(ref: DecisionRef, selection: ReplaySelection): Promise<ReplayCandidate[]> {
    const byRange = 'from' in selection;
    return (await this.db.query(
      `SELECT id, action, result FROM executions
          WHERE ${REPLAYABLE} ${byRange ? 'AND created_at >= $4 AND created_at < $5' : ''}
          ORDER BY created_at DESC, seq DESC LIMIT $3`,
      byRange ? [ref.workspaceId, ref.decisionId, 1_000, selection.from, selection.to] : [ref.workspaceId, ref.decisionId, selection.last],
    )) as ReplayCandidate[];
  }

  /**
   * Engine calls the workspace's replays took in the last day, and in how many seconds the oldest of them stops
   * counting. Every item counts but those cancelled before their turn: a running item's calls are spent, and a
   * cancel never takes them back. An item with a baseline makes two.
   */
  async dailyUsage(workspaceId: string): Promise<{ used: number; reset: number | null } | undefined> {
    const [usage] = (await this.db.query(
      `SELECT coalesce(sum(CASE WHEN r.baseline_schema IS NULL THEN 1 ELSE 2 END), 0)::int AS used,
                EXTRACT(EPOCH FROM min(r.created_at) + interval '1 day' - statement_timestamp())::float8 AS reset
           FROM replays r JOIN replay_items i ON i.replay_id = r.id AND i.status <> 'cancelled'
          WHERE r.workspace_id = $1 AND r.created_at > statement_timestamp() - interval '1 day'`,
      [workspaceId],
    )) as Array<{ used: number; reset: number | null }>;
    return usage;
  }

  /** Writes a running replay and its items, pending, in `ordered` order; `replayExecutionIds` are the ids their runs take. */
  async insert(replay: NewReplay, ordered: ReplayCandidate[], replayExecutionIds: string[]): Promise<void> {
    await this.db.query(
      `INSERT INTO replays (id, workspace_id, decision_id, version, schema, selection, status, started_by, baseline_version, baseline_schema)
       VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9)`,
      [
        replay.id,
        replay.workspaceId,
        replay.decisionId,
        replay.version,
        JSON.stringify(replay.schema),
        JSON.stringify(replay.selection),
        replay.startedBy ? JSON.stringify(replay.startedBy) : null,
        replay.baselineVersion,
        replay.baselineSchema ? JSON.stringify(replay.baselineSchema) : null,
      ],
    );
    await this.db.query(
      `INSERT INTO replay_items (replay_id, position, execution_id, replay_execution_id, status, old_action, old_answers)
       SELECT $1, n, execution_id, replay_execution_id, 'pending', old_action, old_answers
         FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[]) WITH ORDINALITY AS c(execution_id, replay_execution_id, old_action, old_answers, n)`,
      [
        replay.id,
        ordered.map((row) => row.id),
        replayExecutionIds,
        ordered.map((row) => row.action),
        ordered.map((row) => (row.result === null ? null : JSON.stringify(row.result))),
      ],
    );
  }

  /**
   * How many executions a replay of `selection` would take (those that kept their input), and how many successful
   * runs in it did not. The count stops at `max`.
   */
  async eligible(ref: DecisionRef, selection: ReplaySelection, max: number): Promise<{ eligible: number; without_input: number } | undefined> {
    const byRange = 'from' in selection;
    // As a start selects: the last N that kept their input, or those in the range; beside them, the runs that did not.
    const range = byRange ? 'AND created_at >= $4 AND created_at < $5' : '';
    const [counts] = (await this.db.query(
      `SELECT (SELECT count(*) FROM (SELECT 1 FROM executions WHERE ${REPLAYABLE} ${range} LIMIT $3) AS kept)::int AS eligible,
              (SELECT count(*) FILTER (WHERE NOT kept) FROM (
                 SELECT input IS NOT NULL AS kept FROM executions WHERE ${REPLAY_SOURCES} ${range}
                  ORDER BY created_at DESC, seq DESC LIMIT $3) AS selected)::int AS without_input`,
      byRange ? [ref.workspaceId, ref.decisionId, max, selection.from, selection.to] : [ref.workspaceId, ref.decisionId, selection.last],
    )) as Array<{ eligible: number; without_input: number }>;
    return counts;
  }

  /** The decision's replays, newest first (the last 20). */
  async list(ref: DecisionRef): Promise<ReplayRow[]> {
    return (await this.db.query(`SELECT * FROM replays WHERE workspace_id = $1 AND decision_id = $2 ORDER BY created_at DESC, id DESC LIMIT 20`, [
      ref.workspaceId,
      ref.decisionId,
    ])) as ReplayRow[];
  }

  /** The replay, or the 404 for one that is not of this decision. */
  async require(ref: DecisionRef, replayId: string): Promise<ReplayRow> {
    const [row] = (await this.db.query(`SELECT * FROM replays WHERE id = $1 AND workspace_id = $2 AND decision_id = $3`, [
      replayId,
      ref.workspaceId,
      ref.decisionId,
    ])) as Array<ReplayRow>;
    if (!row) throw new ServiceError('NOT_FOUND', 'No such replay of this decision.');
    return row;
  }

  /** Cancels a running replay and its pending items in one transaction; cancelling again changes nothing. */
  async cancel(replayId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const stopped = rowsReturned(
        await tx.query(`UPDATE replays SET status = 'cancelled', finished_at = now() WHERE id = $1 AND status = 'running' RETURNING id`, [replayId]),
      );
      if (stopped.length > 0) await tx.query(`UPDATE replay_items SET status = 'cancelled' WHERE replay_id = $1 AND status = 'pending'`, [replayId]);
    });
  }

  /** Up to `limit` items after position `after`, in replay order, each with its execution's outcome. */
  async items(replayId: string, after: number, limit: number): Promise<ItemRow[]> {
    return (await this.db.query(
      `SELECT ${ITEM_COLUMNS} FROM replay_items i LEFT JOIN executions e ON e.id = i.execution_id
          WHERE i.replay_id = $1 AND i.position > $2 ORDER BY i.position LIMIT $3`,
      [replayId, after, limit],
    )) as ItemRow[];
  }

  /** The replay's items as one JSON text (`ITEMS_SUMMARY_TEXT`), for a lab thread to parse. */
  async summaryItems(replayId: string): Promise<string> {
    const [read] = (await this.db.query(ITEMS_SUMMARY_TEXT, [replayId])) as Array<{ items: string }>;
    return read?.items ?? '[]';
  }
}

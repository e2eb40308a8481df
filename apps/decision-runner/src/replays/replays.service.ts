import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import {
  DecisionRef,
  ReplayEligibleReply,
  ReplayEligibleRequest,
  ReplayExecutionsReply,
  ReplayExecutionsRequest,
  ReplayListReply,
  ReplayRef,
  ReplayView,
  ServiceError,
  StartReplayRequest,
} from '@ds/contracts';
import {
  checkReplayPlan,
  checkReplaySelectionQuery,
  NormalizedSchema,
  replayAllowance,
  REPLAY_DAILY_CAP,
  REPLAY_MAX_EXECUTIONS,
  ReplaySelection,
  validateSchema,
} from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { rowsReturned } from '@ds/platform';
import { DecisionEntity, DecisionVersionEntity } from '../entities';
import { ReplayWorker } from './replay-worker';
import { LabGate, LabPool } from '../lab/lab-pool';
import { ITEM_COLUMNS, ItemRow, ITEMS_SUMMARY_TEXT, itemView, ReplayRow, ReplaySummary } from './replay-rows';
import { DecisionStore } from '../decisions/decision.store';

/** Runs a replay may take, whether or not they kept their input: successful, never a replay's or a shadow's own. */
const REPLAY_SOURCES = `workspace_id = $1 AND decision_id = $2 AND status = 'success' AND source NOT IN ('replay', 'shadow')`;
/** Executions a replay may take: those of them that kept their input (written to `input` and `input_json` alike). */
const REPLAYABLE = `${REPLAY_SOURCES} AND input IS NOT NULL`;

const PAGE_MAX = 200;

/**
 * How long a replay's summary is served again: shorter than the web application's poll, so a running replay's
 * progress moves at every poll, and long enough that a loop of reads costs a few summaries a second.
 */
const SUMMARY_FRESH_MS = 1_000;
const SUMMARIES_MAX = 1_000;

/** Starting, reading and cancelling replays; `ReplayWorker` runs them. */
@Injectable()
export class ReplaysService {
  /** Summaries computed or being computed, by replay and status, for `SUMMARY_FRESH_MS`. */
  private readonly summaries = new LRUCache<string, Promise<ReplaySummary>>({ max: SUMMARIES_MAX, ttl: SUMMARY_FRESH_MS });

  private readonly decisions: DecisionStore;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly worker: ReplayWorker,
    private readonly pool: LabPool,
    private readonly gate: LabGate,
  ) {
    this.decisions = DecisionStore.of(db);
  }

  async start(request: StartReplayRequest): Promise<ReplayView> {
    const decision = await this.decisions.require(request);
    const check = checkReplayPlan(request.body);
    if (!check.ok) throw new ServiceError('INVALID_REQUEST', 'The replay request is not valid.', check.issues);
    const { version, selection } = check.plan;
    const schema = await this.schemaOf(decision, version);
    // The active version replayed beside it is the baseline; a replay of the active version is its own.
    const baselineVersion = decision.activeVersion;
    const baselineSchema = baselineVersion === null || baselineVersion === version ? null : await this.schemaOf(decision, baselineVersion);
    const callsPerExecution = baselineSchema ? 2 : 1;
    const id = newId('rpl');

    await this.db.transaction(async (tx) => {
      // Starts of one workspace queue here, so that each counts what the previous one took against the daily cap.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('decision_runner.replays'), hashtext($1))`, [request.workspaceId]);
      const candidates = await this.candidates(tx, request, selection);
      if (candidates.length === 0) {
        throw new ServiceError('INVALID_REQUEST', 'No execution of this decision in that selection kept its input (settings.storeInput).', [
          { path: 'last' in selection ? 'last' : 'from', message: 'selects no execution that kept its input' },
        ]);
      }
      // Engine calls of every item but those cancelled before their turn: a running item's calls are spent, and a
      // cancel never takes them back. An item with a baseline makes two.
      const [usage] = (await tx.query(
        `SELECT coalesce(sum(CASE WHEN r.baseline_schema IS NULL THEN 1 ELSE 2 END), 0)::int AS used,
                  EXTRACT(EPOCH FROM min(r.created_at) + interval '1 day' - statement_timestamp())::float8 AS reset
             FROM replays r JOIN replay_items i ON i.replay_id = r.id AND i.status <> 'cancelled'
            WHERE r.workspace_id = $1 AND r.created_at > statement_timestamp() - interval '1 day'`,
        [request.workspaceId],
      )) as Array<{ used: number; reset: number | null }>;
      const allowed = replayAllowance(request.plan, usage?.used ?? 0);
      const needed = candidates.length * callsPerExecution;
      if (needed > allowed) {
        const cap = REPLAY_DAILY_CAP[request.plan] ?? REPLAY_DAILY_CAP.genesis!;
        const twice = callsPerExecution === 2 ? `, each run twice (by this version and, for the baseline, by the active version v${baselineVersion})` : '';
        throw new ServiceError(
          'RATE_LIMITED',
          `Replays may take ${cap} engine calls a day on this plan; ${allowed} are left and this selection needs ${needed}: ${candidates.length} executions${twice}.`,
          { retryAfter: Math.min(86_400, Math.max(1, Math.ceil(usage?.reset ?? 86_400))) },
        );
      }
      await tx.query(
        `INSERT INTO replays (id, workspace_id, decision_id, version, schema, selection, status, started_by, baseline_version, baseline_schema)
         VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9)`,
        [
          id,
          request.workspaceId,
          decision.id,
          version,
          JSON.stringify(schema),
          JSON.stringify(selection),
          request.startedBy ? JSON.stringify(request.startedBy) : null,
          baselineVersion,
          baselineSchema ? JSON.stringify(baselineSchema) : null,
        ],
      );
      // Oldest first, as they happened.
      const ordered = [...candidates].reverse();
      await tx.query(
        `INSERT INTO replay_items (replay_id, position, execution_id, replay_execution_id, status, old_action, old_answers)
         SELECT $1, n, execution_id, replay_execution_id, 'pending', old_action, old_answers
           FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[]) WITH ORDINALITY AS c(execution_id, replay_execution_id, old_action, old_answers, n)`,
        [
          id,
          ordered.map((row) => row.id),
          ordered.map(() => newId('exec')),
          ordered.map((row) => row.action),
          ordered.map((row) => (row.result === null ? null : JSON.stringify(row.result))),
        ],
      );
    });
    this.worker.wake();
    return this.view(await this.replayRow(request, id));
  }

  /**
   * What a replay of a selection would take, asked while the selection is chosen: the executions that kept their
   * input, and how many successful runs in it did not. The count stops where a replay stops (REPLAY_MAX_EXECUTIONS).
   */
  async eligible(request: ReplayEligibleRequest): Promise<ReplayEligibleReply> {
    const decision = await this.decisions.require(request);
    const check = checkReplaySelectionQuery(request.query ?? {});
    if (!check.ok) throw new ServiceError('INVALID_REQUEST', 'The selection is not valid.', check.issues);
    const { selection } = check;
    const byRange = 'from' in selection;
    // As a start selects: the last N that kept their input, or those in the range; beside them, the runs that did not.
    const range = byRange ? 'AND created_at >= $4 AND created_at < $5' : '';
    const [counts] = (await this.db.query(
      `SELECT (SELECT count(*) FROM (SELECT 1 FROM executions WHERE ${REPLAYABLE} ${range} LIMIT $3) AS kept)::int AS eligible,
              (SELECT count(*) FILTER (WHERE NOT kept) FROM (
                 SELECT input IS NOT NULL AS kept FROM executions WHERE ${REPLAY_SOURCES} ${range}
                  ORDER BY created_at DESC, seq DESC LIMIT $3) AS selected)::int AS without_input`,
      byRange ? [request.workspaceId, decision.id, REPLAY_MAX_EXECUTIONS, selection.from, selection.to] : [request.workspaceId, decision.id, selection.last],
    )) as Array<{ eligible: number; without_input: number }>;
    const active = decision.activeVersion === null ? null : await this.schemaOf(decision, decision.activeVersion);
    return {
      selection,
      eligible: counts?.eligible ?? 0,
      without_input: counts?.without_input ?? 0,
      store_input: active?.settings.storeInput ?? false,
    };
  }

  /** The decision's replays, newest first (the last 20). */
  async list(ref: DecisionRef): Promise<ReplayListReply> {
    await this.decisions.require(ref);
    const rows = (await this.db.query(`SELECT * FROM replays WHERE workspace_id = $1 AND decision_id = $2 ORDER BY created_at DESC, id DESC LIMIT 20`, [
      ref.workspaceId,
      ref.decisionId,
    ])) as Array<ReplayRow>;
    return { data: await Promise.all(rows.map((row) => this.view(row))) };
  }

  async get(ref: ReplayRef): Promise<ReplayView> {
    return this.view(await this.replayRow(ref, ref.replayId));
  }

  /**
   * Stops a running replay: executions not started are never run. One in flight (`running`) is left to finish and
   * is recorded: its engine call was made, so it counts against the daily cap and shows in the rollups. Cancelling
   * again changes nothing.
   */
  async cancel(ref: ReplayRef): Promise<ReplayView> {
    const replay = await this.replayRow(ref, ref.replayId);
    await this.db.transaction(async (tx) => {
      const stopped = rowsReturned(
        await tx.query(`UPDATE replays SET status = 'cancelled', finished_at = now() WHERE id = $1 AND status = 'running' RETURNING id`, [replay.id]),
      );
      if (stopped.length > 0) await tx.query(`UPDATE replay_items SET status = 'cancelled' WHERE replay_id = $1 AND status = 'pending'`, [replay.id]);
    });
    return this.view(await this.replayRow(ref, ref.replayId));
  }

  /** Each replayed execution: the recorded action and answers beside the replay's, in replay order. */
  async executions(request: ReplayExecutionsRequest): Promise<ReplayExecutionsReply> {
    const replay = await this.replayRow(request, request.replayId);
    const after = pageNumber(request.after, 'after', 0, 0);
    const limit = pageNumber(request.limit, 'limit', 1, 50, PAGE_MAX);
    const rows = (await this.db.query(
      `SELECT ${ITEM_COLUMNS} FROM replay_items i LEFT JOIN executions e ON e.id = i.execution_id
          WHERE i.replay_id = $1 AND i.position > $2 ORDER BY i.position LIMIT $3`,
      [replay.id, after, limit + 1],
    )) as Array<ItemRow>;
    const page = rows.slice(0, limit);
    return { data: page.map(itemView), next_after: rows.length > limit ? page[page.length - 1]!.position : null };
  }

  private async view(row: ReplayRow): Promise<ReplayView> {
    const summary = await this.summary(row);
    return {
      id: row.id,
      decision_id: row.decision_id,
      version: row.version,
      selection: row.selection as ReplaySelection,
      status: row.status,
      started_by: row.started_by,
      created_at: row.created_at.toISOString(),
      finished_at: row.finished_at?.toISOString() ?? null,
      progress: summary.progress,
      result: summary.result,
      baseline:
        row.baseline_version === null
          ? null
          : summary.baseline === null
            ? { ...summary.result, version: row.baseline_version, same_as_result: true }
            : { ...summary.baseline, version: row.baseline_version, same_as_result: false },
    };
  }

  /**
   * A replay's progress and comparisons grow with its items (up to 1,000, two answers each): PostgreSQL writes them
   * as one text and a lab thread parses, counts and compares them, so a loop of reads never holds up live runs on
   * this thread. Reads of one replay within `SUMMARY_FRESH_MS` share one summary: a loop of reads costs one
   * summary per replay that often, and other workspaces' lab work never queues behind copies of it.
   */
  private summary(row: ReplayRow): Promise<ReplaySummary> {
    // A replay that changed status (finished, cancelled) is summed up afresh at once.
    const key = `${row.id}:${row.status}`;
    const known = this.summaries.get(key);
    if (known) return known;
    const summed = this.sum(row);
    this.summaries.set(key, summed);
    summed.catch(() => this.summaries.delete(key));
    return summed;
  }

  private async sum(row: ReplayRow): Promise<ReplaySummary> {
    const items = await this.gate.run(async () => {
      const [read] = (await this.db.query(ITEMS_SUMMARY_TEXT, [row.id])) as Array<{ items: string }>;
      return read?.items ?? '[]';
    });
    return this.pool.run({
      kind: 'replay',
      questions: (row.schema as NormalizedSchema).questions,
      baselineQuestions: row.baseline_version !== null && row.baseline_schema !== null ? (row.baseline_schema as NormalizedSchema).questions : null,
      items,
    });
  }

  private async candidates(tx: EntityManager, request: StartReplayRequest, selection: ReplaySelection) {
    const byRange = 'from' in selection;
    return (await tx.query(
      `SELECT id, action, result FROM executions
          WHERE ${REPLAYABLE} ${byRange ? 'AND created_at >= $4 AND created_at < $5' : ''}
          ORDER BY created_at DESC, seq DESC LIMIT $3`,
      byRange ? [request.workspaceId, request.decisionId, 1_000, selection.from, selection.to] : [request.workspaceId, request.decisionId, selection.last],
    )) as Array<{ id: string; action: string; result: object | null }>;
  }

  private async schemaOf(decision: DecisionEntity, version: number | null): Promise<NormalizedSchema> {
    if (version === null) {
      const checked = validateSchema(decision.draftSchema);
      if (!checked.valid) throw new ServiceError('INVALID_SCHEMA', 'The draft is not valid.', checked.issues);
      return checked.schema;
    }
    const row = await this.db.getRepository(DecisionVersionEntity).findOneBy({ decisionId: decision.id, version });
    if (!row) throw new ServiceError('NOT_FOUND', `The decision ${decision.slug} has no version ${version}.`);
    return row.schema as NormalizedSchema;
  }

  private async replayRow(ref: DecisionRef, replayId: string): Promise<ReplayRow> {
    const [row] = (await this.db.query(`SELECT * FROM replays WHERE id = $1 AND workspace_id = $2 AND decision_id = $3`, [
      replayId,
      ref.workspaceId,
      ref.decisionId,
    ])) as Array<ReplayRow>;
    if (!row) throw new ServiceError('NOT_FOUND', 'No such replay of this decision.');
    return row;
  }
}

function pageNumber(value: unknown, path: string, min: number, fallback: number, max = 2_147_483_647): number {
  if (value === undefined || value === null || value === '') return fallback;
  const number = typeof value === 'string' && /^[0-9]{1,10}$/.test(value) ? Number(value) : value;
  if (typeof number === 'number' && Number.isSafeInteger(number) && number >= min && number <= max) return number;
  throw new ServiceError('INVALID_REQUEST', `${path} must be an integer from ${min} to ${max}.`, [
    { path, message: `must be an integer from ${min} to ${max}` },
  ]);
}

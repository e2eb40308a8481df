import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
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
import { DecisionEntity } from '../entities';
import { ReplayWorker } from './replay-worker';
import { LabGate, LabPool } from '../lab/lab-pool';
import { DecisionStore } from '../decisions/decision.store';
import { itemView, ReplayRow, ReplaySummary } from './replay-rows';
import { ReplayStore } from './replay.store';

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

  constructor(
    private readonly decisions: DecisionStore,
    private readonly replays: ReplayStore,
    private readonly worker: ReplayWorker,
    private readonly pool: LabPool,
    private readonly gate: LabGate,
  ) {}

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

    await this.replays.transaction(async (tx) => {
      await tx.lockStarts(request.workspaceId);
      const candidates = await tx.candidates(request, selection);
      if (candidates.length === 0) {
        throw new ServiceError('INVALID_REQUEST', 'No execution of this decision in that selection kept its input (settings.storeInput).', [
          { path: 'last' in selection ? 'last' : 'from', message: 'selects no execution that kept its input' },
        ]);
      }
      const usage = await tx.dailyUsage(request.workspaceId);
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
      // Oldest first, as they happened.
      const ordered = [...candidates].reverse();
      await tx.insert(
        {
          id,
          workspaceId: request.workspaceId,
          decisionId: decision.id,
          version,
          schema,
          selection,
          startedBy: request.startedBy,
          baselineVersion,
          baselineSchema,
        },
        ordered,
        ordered.map(() => newId('exec')),
      );
    });
    this.worker.wake();
    return this.view(await this.replays.require(request, id));
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
    const counts = await this.replays.eligible({ workspaceId: request.workspaceId, decisionId: decision.id }, selection, REPLAY_MAX_EXECUTIONS);
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
    const rows = await this.replays.list(ref);
    return { data: await Promise.all(rows.map((row) => this.view(row))) };
  }

  async get(ref: ReplayRef): Promise<ReplayView> {
    return this.view(await this.replays.require(ref, ref.replayId));
  }

  /**
   * Stops a running replay: executions not started are never run. One in flight (`running`) is left to finish and
   * is recorded: its engine call was made, so it counts against the daily cap and shows in the rollups. Cancelling
   * again changes nothing.
   */
  async cancel(ref: ReplayRef): Promise<ReplayView> {
    const replay = await this.replays.require(ref, ref.replayId);
    await this.replays.cancel(replay.id);
    return this.view(await this.replays.require(ref, ref.replayId));
  }

  /** Each replayed execution: the recorded action and answers beside the replay's, in replay order. */
  async executions(request: ReplayExecutionsRequest): Promise<ReplayExecutionsReply> {
    const replay = await this.replays.require(request, request.replayId);
    const after = pageNumber(request.after, 'after', 0, 0);
    const limit = pageNumber(request.limit, 'limit', 1, 50, PAGE_MAX);
    const rows = await this.replays.items(replay.id, after, limit + 1);
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
    const items = await this.gate.run(() => this.replays.summaryItems(row.id));
    return this.pool.run({
      kind: 'replay',
      questions: (row.schema as NormalizedSchema).questions,
      baselineQuestions: row.baseline_version !== null && row.baseline_schema !== null ? (row.baseline_schema as NormalizedSchema).questions : null,
      items,
    });
  }

  private async schemaOf(decision: DecisionEntity, version: number | null): Promise<NormalizedSchema> {
    if (version === null) {
      const checked = validateSchema(decision.draftSchema);
      if (!checked.valid) throw new ServiceError('INVALID_SCHEMA', 'The draft is not valid.', checked.issues);
      return checked.schema;
    }
    const row = await this.decisions.version(decision.id, version);
    if (!row) throw new ServiceError('NOT_FOUND', `The decision ${decision.slug} has no version ${version}.`);
    return row.schema as NormalizedSchema;
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

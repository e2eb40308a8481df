import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { AnswerQuestionsReply, ServiceError, SUBJECTS } from '@ds/contracts';
import { evaluate, Evaluation, NormalizedSchema, REPLAY_ENGINE_CONCURRENCY, validateState } from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { Logger, PLATFORM, RpcClient } from '@ds/platform';
import { errorRow, ExecutionBase, ExecutionRow, INSERT_EXECUTIONS, insertParameters, successRow, traceOf } from '../executions/execution-recorder';
import { pgPool } from '../pg-pool';
import { engineRequestFor, runMetrics } from '../runs/engine-request';

/** Room the worker gives engine-proxy beyond the decision's own deadline before it stops waiting. */
const ENGINE_REPLY_MARGIN_MS = 2_000;
/** How often an idle worker looks for work another replica started, and a waiting one retries the lock. */
const POLL_MS = 1_000;
/** After the shared key had no slot free: live runs come first, so the replay steps back this long. */
const SLOTS_BUSY_BACKOFF_MS = 2_000;
/** Replays of a draft may run while it changes: the schema is taken once per replay, at its start, and kept here. */
const SCHEMAS_KEPT = 50;

interface Claimed {
  replay_id: string;
  position: number;
  execution_id: string;
  replay_execution_id: string;
  workspace_id: string;
  decision_id: string;
  version: number | null;
}

type Finished =
  | { status: 'done'; row: ExecutionRow; action: string; answers: object | null }
  | { status: 'failed'; row: ExecutionRow | null; error: { code: string; message: string } };

/**
 * Runs replays in the background. One runner process at a time holds the worker's session lock, so however
 * many replicas run, replays take at most REPLAY_ENGINE_CONCURRENCY engine calls at once: live runs keep the
 * rest of the shared key's slots. Executions are taken oldest replay first, in order. Each one's replay is
 * recorded, and its item marked, in one transaction: a crash before it leaves the item pending, to be run
 * again by whichever process takes the lock next; after it, the item is never run again.
 */
@Injectable()
export class ReplayWorker {
  private lock: PoolClient | null = null;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private readonly schemas = new Map<string, { slug: string; schema: NormalizedSchema }>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  start(): void {
    this.loop ??= this.work();
  }

  /** A replay started here: no need to wait for the next poll. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Lets the executions in flight finish (each within its engine deadline), then gives the lock back. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loop;
    this.releaseLock();
  }

  private async work(): Promise<void> {
    while (!this.stopping) {
      let pause = POLL_MS;
      try {
        if (await this.holdLock()) {
          const claimed = await this.next();
          if (claimed.length > 0) {
            const outcomes = await Promise.all(claimed.map((item) => this.replayOne(item)));
            pause = outcomes.includes('slots-busy') ? SLOTS_BUSY_BACKOFF_MS : 0;
          }
        }
      } catch (error) {
        this.logger.warn({ err: error }, 'replay worker step failed; trying again');
        this.releaseLock();
      }
      if (pause > 0 && !this.stopping) await this.sleep(pause);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((done) => {
      const timer = setTimeout(finish, ms);
      function finish() {
        clearTimeout(timer);
        done();
      }
      this.wakeUp = finish;
    });
  }

  /** A session lock held on a connection of its own: it ends with the process, however the process ends. */
  private async holdLock(): Promise<boolean> {
    if (this.lock) return true;
    const client = await pgPool(this.db).connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(hashtext('decision_runner.replay_worker')) AS locked`);
      if (rows[0]?.locked) {
        client.on('error', () => this.releaseLock());
        this.lock = client;
        return true;
      }
    } catch (error) {
      client.release(true);
      throw error;
    }
    client.release();
    return false;
  }

  private releaseLock(): void {
    const client = this.lock;
    this.lock = null;
    // Destroyed rather than returned to the pool: closing the session is what frees the lock.
    client?.release(true);
  }

  private async next(): Promise<Claimed[]> {
    const { rows } = await this.lock!.query<Claimed>(
      `SELECT i.replay_id, i.position, i.execution_id, i.replay_execution_id, r.workspace_id, r.decision_id, r.version
         FROM replays r JOIN LATERAL (
           SELECT * FROM replay_items i WHERE i.replay_id = r.id AND i.status = 'pending' ORDER BY i.position LIMIT $1
         ) i ON true
        WHERE r.status = 'running'
        ORDER BY r.created_at, r.id, i.position
        LIMIT $1`,
      [REPLAY_ENGINE_CONCURRENCY],
    );
    return rows;
  }

  private async replayOne(item: Claimed): Promise<'finished' | 'slots-busy'> {
    const { slug, schema } = await this.schemaOf(item);
    const [original] = (await this.db.query(`SELECT input FROM executions WHERE id = $1 AND workspace_id = $2`, [
      item.execution_id,
      item.workspace_id,
    ])) as Array<{ input: { state?: unknown } | null }>;
    if (!original?.input) {
      await this.finish(item, { status: 'failed', row: null, error: { code: 'NOT_FOUND', message: 'The execution was purged before it was replayed.' } });
      return 'finished';
    }
    const state = original.input.state ?? null;
    const base: ExecutionBase = {
      id: item.replay_execution_id,
      workspaceId: item.workspace_id,
      decisionId: item.decision_id,
      decisionSlug: slug,
      version: item.version ?? 0,
      source: 'replay',
      requestId: newId('req'),
      // As the playground's: never billed, and apart from live traffic in the overview, where their tokens show as test traffic.
      livemode: false,
      input: null,
    };
    const failed = (error: ServiceError): Finished => ({ status: 'failed', row: errorRow(base, error), error: { code: error.code, message: error.message } });

    const stateCheck = validateState(schema, state);
    if (!stateCheck.ok) {
      await this.finish(item, failed(new ServiceError('INVALID_STATE', stateCheck.message)));
      return 'finished';
    }
    const started = performance.now();
    let answer: AnswerQuestionsReply;
    let evaluation: Evaluation;
    try {
      answer = await this.rpc.call(SUBJECTS.engine.answer, engineRequestFor(item.workspace_id, schema, state), {
        timeoutMs: schema.settings.timeoutMs + ENGINE_REPLY_MARGIN_MS,
        requestId: base.requestId,
      });
      try {
        evaluation = evaluate(schema, answer.distributions);
      } catch {
        throw new ServiceError('ENGINE_ERROR', 'The engine answered outside the decision contract.');
      }
    } catch (error) {
      const failure = error instanceof ServiceError ? error : new ServiceError('INTERNAL_ERROR', 'The engine call failed.');
      // Never asked the provider: the execution stays pending and is tried again once slots free up.
      if (failure.code === 'ENGINE_RATE_LIMITED' || failure.code === 'SERVICE_UNAVAILABLE') return 'slots-busy';
      await this.finish(item, failed(failure));
      return 'finished';
    }
    const metrics = runMetrics(started, answer);
    const storeOutput = schema.settings.storeOutput;
    await this.finish(item, {
      status: 'done',
      row: successRow(base, evaluation, metrics, null, storeOutput, traceOf(schema, evaluation)),
      action: evaluation.action,
      answers: storeOutput ? evaluation.result : null,
    });
    return 'finished';
  }

  /**
   * Marks the item and records its execution together, unless the item is no longer pending (its replay was
   * cancelled meanwhile): then nothing is recorded. Then completes the replay when this was its last item.
   */
  private async finish(item: Claimed, finished: Finished): Promise<void> {
    const client = await pgPool(this.db).connect();
    try {
      await client.query('BEGIN');
      const marked = await client.query(
        `UPDATE replay_items SET status = $3, new_action = $4, new_answers = $5, error = $6
          WHERE replay_id = $1 AND position = $2 AND status = 'pending'`,
        [
          item.replay_id,
          item.position,
          finished.status,
          finished.status === 'done' ? finished.action : null,
          finished.status === 'done' && finished.answers ? JSON.stringify(finished.answers) : null,
          finished.status === 'failed' ? JSON.stringify(finished.error) : null,
        ],
      );
      if (marked.rowCount === 0) {
        await client.query('ROLLBACK');
        return;
      }
      if (finished.row) await client.query({ ...INSERT_EXECUTIONS, values: insertParameters([finished.row]) });
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    // After the commit, so that of two items finishing together the later one sees both.
    await this.db.query(
      `UPDATE replays SET status = 'completed', finished_at = now()
        WHERE id = $1 AND status = 'running' AND NOT EXISTS (SELECT 1 FROM replay_items WHERE replay_id = $1 AND status = 'pending')`,
      [item.replay_id],
    );
  }

  private async schemaOf(item: Claimed): Promise<{ slug: string; schema: NormalizedSchema }> {
    const kept = this.schemas.get(item.replay_id);
    if (kept) return kept;
    const [row] = (await this.db.query(`SELECT d.slug, r.schema FROM replays r JOIN decisions d ON d.id = r.decision_id WHERE r.id = $1`, [
      item.replay_id,
    ])) as Array<{ slug: string; schema: NormalizedSchema }>;
    if (this.schemas.size >= SCHEMAS_KEPT) this.schemas.delete(this.schemas.keys().next().value!);
    this.schemas.set(item.replay_id, row!);
    return row!;
  }
}

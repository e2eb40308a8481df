import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { REPLAY_ENGINE_CONCURRENCY } from '@ds/decision-schema';
import { newId, randomAlphanumeric } from '@ds/ids';
import { Logger, PeriodicJob, PLATFORM } from '@ds/platform';
import { answeredRow, executionBase, ExecutionRow } from '../executions/execution-recorder';
import { Executed, RunExecutor } from '../runs/run-executor';
import { ClaimedItem, ReplayQueue, ReplaySchemas } from './replay-queue.store';

/** How often an idle worker looks for work another replica started, and a draining one for more. */
const POLL_MS = 1_000;
/** After the shared key had no slot free: live runs come first, so the replay steps back this long. */
const SLOTS_BUSY_BACKOFF_MS = 2_000;
/** Replays of a draft may run while it changes: the schema is taken once per replay, at its start, and kept here. */
const SCHEMAS_KEPT = 50;
/**
 * The advisory lock of the replay rounds. The name is the one the worker's own session lock had, so a runner of
 * the version before and one of this version never run replays at the same time during an upgrade.
 */
const LOCK_KEY = 'decision_runner.replay_worker';

/** Never asked the provider: the execution waits again and is tried once slots free up. */
const slotsBusy = (executed: Executed) =>
  executed.status === 'failed' && (executed.error.code === 'ENGINE_RATE_LIMITED' || executed.error.code === 'SERVICE_UNAVAILABLE');

/** The active version's answer to the same state: kept on the item, not recorded as an execution of its own. */
interface BaselineAnswer {
  action: string | null;
  answers: object | null;
  error: { code: string; message: string } | null;
}

type Finished =
  | { status: 'done'; row: ExecutionRow; action: string; answers: object | null }
  | { status: 'failed'; row: ExecutionRow | null; error: { code: string; message: string } };

/**
 * Runs replays in the background, as a PeriodicJob on one replica at a time: a round holds the job's advisory
 * lock while it drains the queue, with its engine calls in flight, so however many replicas run, replays take at
 * most REPLAY_ENGINE_CONCURRENCY engine calls at once and live runs keep the rest of the shared key's slots. Each
 * free slot claims the next item (`claimNextItem`: workspaces in turn), which is `running` until its replay is
 * recorded and the item marked, in one transaction; the round ends once nothing waits and nothing is in flight.
 * A cancel leaves a running item alone: its engine call was made, so it is recorded and counts. A stop, or the
 * lock's session lost, claims nothing more and lets the calls in flight finish. A crash leaves the item running,
 * taken back by the next round on any replica once the claim is older than its engine deadline and a margin.
 */
@Injectable()
export class ReplayWorker {
  private readonly job: PeriodicJob;
  /** Ends the wait of a draining round: an execution finished, a replay started, or the round's signal aborted. */
  private nudge: (() => void) | null = null;
  private nudged = false;
  private slotsFreeAt = 0;
  private readonly claimant = `${hostname()}/${process.pid}/${randomAlphanumeric(8)}`;
  private claims = 0;
  private readonly schemas = new Map<string, ReplaySchemas>();

  private readonly queue: ReplayQueue;

  constructor(
    @InjectDataSource() db: DataSource,
    private readonly executor: RunExecutor,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {
    this.queue = new ReplayQueue(db);
    this.job = new PeriodicJob(POLL_MS, (signal) => this.drain(signal), logger, 'replay worker round failed; trying again', {
      oneReplica: { db, lockKey: LOCK_KEY },
    });
  }

  start(): void {
    this.job.start();
    this.job.wake();
  }

  /** A replay started or an execution finished here: no need to wait for the next poll. */
  wake(): void {
    this.job.wake();
    this.nudgeRound();
  }

  private nudgeRound(): void {
    this.nudged = true;
    this.nudge?.();
  }

  /** Claims nothing more and lets the executions in flight finish (each within its engine deadline), then gives the lock back. */
  stop(): Promise<void> {
    return this.job.stop();
  }

  /**
   * One round: keeps a claimed item in each free slot until nothing waits, then ends once the calls in flight have.
   * The lock is held until then, so no other replica's calls join these.
   */
  private async drain(signal: AbortSignal): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const onAbort = () => this.nudgeRound();
    signal.addEventListener('abort', onAbort);
    try {
      for (;;) {
        this.nudged = false;
        const found = signal.aborted ? false : await this.fillSlots(inFlight, signal);
        if (inFlight.size === 0 && (!found || signal.aborted)) return;
        await this.pause(this.slotsFreeAt > Date.now() ? this.slotsFreeAt - Date.now() : POLL_MS);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      // Never give the lock back with calls in flight: another replica's would join them.
      await Promise.all(inFlight);
    }
  }

  /** Claims an item for each free slot; answers whether the queue may still hold work for this round. */
  private async fillSlots(inFlight: Set<Promise<void>>, signal: AbortSignal): Promise<boolean> {
    if (this.slotsFreeAt > Date.now()) return true;
    if (inFlight.size >= REPLAY_ENGINE_CONCURRENCY) return true;
    await this.queue.takeBackAbandoned();
    while (!signal.aborted && inFlight.size < REPLAY_ENGINE_CONCURRENCY) {
      const item = await this.queue.claimNext(`${this.claimant}#${++this.claims}`);
      if (!item) return false;
      const running: Promise<void> = this.replayOne(item)
        .then((outcome) => {
          if (outcome === 'slots-busy') this.slotsFreeAt = Date.now() + SLOTS_BUSY_BACKOFF_MS;
        })
        .catch((error: unknown) =>
          this.logger.warn({ err: error, replayId: item.replay_id }, 'a replayed execution could not be recorded; it is taken back later'),
        )
        .finally(() => {
          inFlight.delete(running);
          this.nudgeRound();
        });
      inFlight.add(running);
    }
    return true;
  }

  /** Waits `ms`, or less when nudged; a nudge that came since the round last looked ends it at once. */
  private pause(ms: number): Promise<void> {
    if (this.nudged) return Promise.resolve();
    return new Promise((done) => {
      const finish = () => {
        clearTimeout(timer);
        this.nudge = null;
        done();
      };
      const timer = setTimeout(finish, ms);
      this.nudge = finish;
    });
  }

  private async replayOne(item: ClaimedItem): Promise<'finished' | 'slots-busy'> {
    const { slug, schema, baseline } = await this.schemaOf(item);
    const input = await this.queue.input(item);
    if (!input) {
      await this.finish(item, { status: 'failed', row: null, error: { code: 'NOT_FOUND', message: 'The execution was purged before it was replayed.' } });
      return 'finished';
    }
    const state = input.state ?? null;
    // As the playground's: never billed, and apart from live traffic in the overview, where their tokens show as test traffic.
    const base = executionBase(item.replay_execution_id, item.workspace_id, { id: item.decision_id, slug }, item.version ?? 0, 'replay', newId('req'), false);

    // The active version on the same state, first: when the shared key has no slot free, nothing of the item was spent.
    let baselineAnswer: BaselineAnswer | null = null;
    if (baseline) {
      const asked = await this.executor.execute('replay', base, baseline, state);
      if (slotsBusy(asked)) {
        await this.queue.release(item);
        return 'slots-busy';
      }
      baselineAnswer =
        asked.status === 'failed'
          ? { action: null, answers: null, error: { code: asked.error.code, message: asked.error.message } }
          : { action: asked.evaluation.action, answers: baseline.settings.storeOutput ? asked.evaluation.result : null, error: null };
    }

    const asked = await this.executor.execute('replay', base, schema, state);
    if (slotsBusy(asked)) {
      await this.queue.release(item);
      return 'slots-busy';
    }
    const finished: Finished =
      asked.status === 'failed'
        ? { status: 'failed', row: asked.row, error: { code: asked.error.code, message: asked.error.message } }
        : {
            status: 'done',
            row: answeredRow(base, schema, asked.evaluation, asked.metrics, null),
            action: asked.evaluation.action,
            answers: schema.settings.storeOutput ? asked.evaluation.result : null,
          };
    await this.finish(item, finished, baselineAnswer);
    return 'finished';
  }

  /**
   * Marks the item and records its execution together, whether or not its replay was cancelled meanwhile: the
   * engine call was made, so it counts and shows in the rollups. Nothing is recorded when the claim is no longer
   * this one's (taken back after the runner stalled past the claim's margin: the item runs again). Then completes
   * the replay when this was its last item.
   */
  private async finish(item: ClaimedItem, finished: Finished, baseline: BaselineAnswer | null = null): Promise<void> {
    const recorded = await this.queue.finish(
      item,
      {
        status: finished.status,
        action: finished.status === 'done' ? finished.action : null,
        answers: finished.status === 'done' ? finished.answers : null,
        error: finished.status === 'failed' ? finished.error : null,
        baselineAction: baseline?.action ?? null,
        baselineAnswers: baseline?.answers ?? null,
        baselineError: baseline?.error ?? null,
      },
      finished.row,
    );
    if (!recorded) {
      this.logger.warn({ replayId: item.replay_id, position: item.position }, 'a replayed execution finished after its claim was taken back; it runs again');
      return;
    }
    // After the commit, so that of two items finishing together the later one sees both.
    await this.queue.completeIfFinished(item.replay_id);
  }

  private async schemaOf(item: ClaimedItem): Promise<ReplaySchemas> {
    const kept = this.schemas.get(item.replay_id);
    if (kept) return kept;
    const row = await this.queue.schemas(item.replay_id);
    if (this.schemas.size >= SCHEMAS_KEPT) this.schemas.delete(this.schemas.keys().next().value!);
    this.schemas.set(item.replay_id, row!);
    return row!;
  }
}

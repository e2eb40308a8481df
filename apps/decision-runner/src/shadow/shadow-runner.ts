import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { RunDecisionRequest, ServiceError } from '@ds/contracts';
import { shadowSampled } from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { currentRequestId, FairQueue, Logger, Metrics, PLATFORM, runWithRequestContext } from '@ds/platform';
import { RunnableDecision } from '../decisions/decision-cache';
import { VersionCache } from '../decisions/version-cache';
import { answeredRow, errorRow, executionBase, ExecutionRow } from '../executions/execution-recorder';
import { ExecutionStore } from '../executions/execution.store';
import { RunExecutor } from '../runs/run-executor';

/**
 * Per replica: shadow runs waiting for a worker, of them those of one workspace, and shadow runs at once. The last
 * bounds how many shared-key engine slots shadows can hold, and so how much they can compete with live runs for
 * them; the share keeps one workspace's busy shadow from filling the queue that all workspaces' shadows wait in.
 */
export const SHADOW_QUEUE_LIMIT = 200;
export const SHADOW_QUEUE_PER_WORKSPACE = 50;
export const SHADOW_CONCURRENCY = 4;

/** How long a stopping runner waits for shadow runs in flight before it lets them go unrecorded. */
const SHUTDOWN_GRACE_MS = 2_000;

interface ShadowSample {
  workspaceId: string;
  decisionId: string;
  decisionSlug: string;
  version: number;
  liveExecutionId: string;
  requestId: string;
  livemode: boolean;
  state: unknown;
}

/**
 * Evaluates the shadow version on the state of sampled live runs, after their answer has gone: the live run is
 * handed over in one synchronous call that only samples and queues. The shadow's run goes through the live run's
 * executor, with no destinations, no billing and no rate-limit windows (it never passes the gateway), and
 * is recorded as an execution of its own (`source` = `shadow`, `shadow_of` = the live execution). A failure is
 * recorded as that execution's error and goes no further.
 */
@Injectable()
export class ShadowRunner implements OnModuleDestroy {
  private readonly queue = new FairQueue<ShadowSample>(
    { queued: SHADOW_QUEUE_LIMIT, queuedPerKey: SHADOW_QUEUE_PER_WORKSPACE, concurrency: SHADOW_CONCURRENCY },
    (sample) => runWithRequestContext({ requestId: sample.requestId }, () => this.evaluate(sample)),
    // Workspaces take turns for the workers.
    (sample) => sample.workspaceId,
  );
  private readonly dropped: Counter<'reason'>;
  private readonly runs: Counter<'status'>;

  private readonly executions: ExecutionStore;

  constructor(
    @InjectDataSource() db: DataSource,
    private readonly executor: RunExecutor,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Inject(PLATFORM.metrics) metrics: Metrics,
    private readonly versions: VersionCache,
  ) {
    this.executions = new ExecutionStore(db);
    this.dropped = new Counter({
      name: 'decision_service_shadow_dropped_total',
      help: 'Sampled live runs the shadow did not evaluate, by reason (queue_full, shutdown)',
      labelNames: ['reason'],
      registers: [metrics.registry],
    });
    this.runs = new Counter({
      name: 'decision_service_shadow_runs_total',
      help: 'Shadow evaluations recorded, by status (success, error)',
      labelNames: ['status'],
      registers: [metrics.registry],
    });
  }

  /** Samples a live run of the active version that the engine answered; never waits and never throws. */
  follow(request: RunDecisionRequest, decision: RunnableDecision, version: number, executionId: string): void {
    const shadow = decision.shadow;
    if (shadow === null || version !== decision.activeVersion || shadow.version === version) return;
    if (!shadowSampled(shadow.rate, Math.random())) return;
    const offered = this.queue.offer({
      workspaceId: request.workspaceId,
      decisionId: decision.id,
      decisionSlug: decision.slug,
      version: shadow.version,
      liveExecutionId: executionId,
      // The live run's request id: logs of both runs read together.
      requestId: currentRequestId() ?? newId('req'),
      livemode: request.livemode,
      state: request.body.state,
    });
    if (!offered) this.dropped.inc({ reason: 'queue_full' });
  }

  async onModuleDestroy(): Promise<void> {
    const dropped = await this.queue.close(SHUTDOWN_GRACE_MS);
    if (dropped > 0) this.dropped.inc({ reason: 'shutdown' }, dropped);
  }

  private async evaluate(sample: ShadowSample): Promise<void> {
    const decision = { id: sample.decisionId, slug: sample.decisionSlug };
    const base = executionBase(newId('exec'), sample.workspaceId, decision, sample.version, 'shadow', sample.requestId, sample.livemode);
    let row: ExecutionRow;
    try {
      const schema = await this.versions.get(sample.decisionId, sample.version);
      const executed = await this.executor.execute('shadow', base, schema, sample.state);
      row = executed.status === 'failed' ? executed.row : answeredRow(base, schema, executed.evaluation, executed.metrics, null);
    } catch (error) {
      row = errorRow(base, error instanceof ServiceError ? error : new ServiceError('INTERNAL_ERROR', 'The shadow run failed.'));
    }
    try {
      await this.executions.insertShadow(row, sample.liveExecutionId);
      this.runs.inc({ status: row.status });
    } catch (recordError) {
      this.logger.warn({ err: recordError, decisionId: sample.decisionId, shadowOf: sample.liveExecutionId }, 'a shadow run could not be recorded');
    }
  }
}

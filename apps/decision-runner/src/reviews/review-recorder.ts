import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { NormalizedSchema, reviewDueAt, reviewReason, ReviewedRun } from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { GroupCommit, Logger, Metrics, PLATFORM } from '@ds/platform';
import { ExecutionBase } from '../executions/execution.store';
import { NewReviewItem, ReviewStore } from './review.store';

/** Items per INSERT, as for executions. */
const MAX_ITEMS_PER_INSERT = 256;

/**
 * Sends live runs to human review (docs/reviews.md). A run is handed over once its execution is written, in one
 * synchronous call that only decides and queues: the items of concurrent runs are written together by group commit
 * after the caller's answer, and nobody waits for that write. An item lost to a failed write is counted and logged;
 * the run it belongs to was already answered.
 */
@Injectable()
export class ReviewRecorder implements OnModuleDestroy {
  private readonly batches: GroupCommit<NewReviewItem>;
  private readonly created: Counter<'reason'>;
  private readonly lost: Counter;

  constructor(
    @InjectDataSource() db: DataSource,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Inject(PLATFORM.metrics) metrics: Metrics,
  ) {
    const store = new ReviewStore(db);
    this.batches = new GroupCommit<NewReviewItem>((items) => store.insert(items), { maxBatch: MAX_ITEMS_PER_INSERT });
    this.created = new Counter({
      name: 'decision_service_review_items_created_total',
      help: 'Review items created for live runs, by reason (action, low_confidence, engine_error, audit)',
      labelNames: ['reason'],
      registers: [metrics.registry],
    });
    this.lost = new Counter({
      name: 'decision_service_review_items_lost_total',
      help: 'Review items whose write failed (their runs were answered and recorded)',
      registers: [metrics.registry],
    });
  }

  /** Queues the run's review item when the version sends it to review; answers at once. */
  follow(schema: NormalizedSchema, base: ExecutionBase, run: Omit<ReviewedRun, 'executionId'>, executedAt = new Date()): void {
    const review = schema.settings.review;
    if (review === undefined) return;
    const reason = reviewReason(review, { ...run, executionId: base.id });
    if (reason === null) return;
    const item: NewReviewItem = {
      id: newId('rev'),
      workspaceId: base.workspaceId,
      decisionId: base.decisionId,
      decisionSlug: base.decisionSlug,
      version: base.version,
      executionId: base.id,
      reason,
      executedAt,
      dueAt: reviewDueAt(review, executedAt),
    };
    this.batches.add(item).then(
      () => this.created.inc({ reason }),
      (error: unknown) => {
        this.lost.inc();
        this.logger.error({ err: error, executionId: base.id }, 'a review item could not be written');
      },
    );
  }

  /** Items already handed over are written before the pool closes. */
  async onModuleDestroy(): Promise<void> {
    await this.batches.idle();
  }

  /** Settles once every item handed over so far is written (or failed). */
  idle(): Promise<void> {
    return this.batches.idle();
  }
}

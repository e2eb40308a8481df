import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter, Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import {
  DeliveryMessage,
  ListReviewsRequest,
  ResolveReviewBody,
  ResolveReviewRequest,
  ReviewDetail,
  ReviewedAnswer,
  ReviewListReply,
  ReviewListReason,
  ReviewRef,
  ReviewResolvedReply,
  ReviewSummary,
  ServiceError,
  zodIssues,
} from '@ds/contracts';
import {
  claimVerdict,
  NormalizedSchema,
  outcomesOf,
  ReviewedEventData,
  reviewedDelivery,
  reviewedWebhooks,
  ReviewItemState,
  reviewOutcomeSource,
  reviewStatus,
  resolveVerdict,
} from '@ds/decision-schema';
import { looksLikeId, newId } from '@ds/ids';
import { Metrics, PLATFORM } from '@ds/platform';
import { VersionCache } from '../decisions/version-cache';
import { DestinationCalls } from '../runs/destination-calls';
import { ExecutionStore } from '../executions/execution.store';
import { OutcomesService } from '../quality/outcomes.service';
import { ReviewDetailRow, ReviewItemRow, ReviewStore } from './review.store';

/**
 * Review items as reviewers work them (docs/reviews.md): the inbox, one item, a claim, its release and the
 * resolution, which is recorded as the execution's outcome in the same transaction.
 */
@Injectable()
export class ReviewsService {
  private readonly store: ReviewStore;
  private readonly resolutions: Counter<'reason'>;

  constructor(
    @InjectDataSource() db: DataSource,
    private readonly versions: VersionCache,
    private readonly outcomes: OutcomesService,
    private readonly calls: DestinationCalls,
    @Inject(PLATFORM.metrics) metrics: Metrics,
  ) {
    const store = (this.store = new ReviewStore(db));
    const registers = [metrics.registry];
    this.resolutions = new Counter({
      name: 'decision_service_review_resolutions_total',
      help: 'Review items resolved, by the reason they were sent to review',
      labelNames: ['reason'],
      registers,
    });
    // Every replica reads the same table, so these are the same on each: alerts take their max.
    let summary: Promise<Awaited<ReturnType<ReviewStore['unresolvedSummary']>> | null> | null = null;
    const read = () => (summary ??= store.unresolvedSummary().catch(() => null)).finally(() => setImmediate(() => (summary = null)));
    new Gauge({
      name: 'decision_service_review_open_items',
      help: 'Review items not yet resolved (open, claimed or expired), across workspaces',
      registers,
      async collect() {
        const now = await read();
        if (now) this.set(now.count);
      },
    });
    new Gauge({
      name: 'decision_service_review_oldest_open_age_seconds',
      help: 'Age of the run of the oldest review item not yet resolved (0 when none is)',
      registers,
      async collect() {
        const now = await read();
        if (now) this.set(now.oldestExecutedAt === null ? 0 : Math.max(0, (Date.now() - now.oldestExecutedAt.getTime()) / 1000));
      },
    });
    new Gauge({
      name: 'decision_service_review_oldest_overdue_seconds',
      help: 'How long the earliest-due review item not yet resolved is past its due time (0 when none is past due)',
      registers,
      async collect() {
        const now = await read();
        if (now) this.set(now.earliestDueAt === null ? 0 : Math.max(0, (Date.now() - now.earliestDueAt.getTime()) / 1000));
      },
    });
  }

  async list(request: ListReviewsRequest): Promise<ReviewListReply> {
    const now = new Date();
    const rows = await this.store.list(
      request.workspaceId,
      {
        status: request.status ?? 'unresolved',
        decisionId: request.decisionId,
        reason: request.reason,
        after: request.cursor === null ? null : decodeReviewCursor(request.cursor),
        limit: request.limit,
      },
      now,
    );
    const page = rows.slice(0, request.limit);
    const more = rows.length > request.limit;
    const last = page.at(-1);
    return {
      data: page.map((row) => summaryOf(row, now)),
      has_more: more,
      next_cursor: more && last ? encodeReviewCursor(last.due_at, last.id) : null,
    };
  }

  async get(request: ReviewRef): Promise<ReviewDetail> {
    const row = await this.find(request);
    const schema = await this.versions.get(row.decision_id, row.version);
    return detailOf(row, schema, new Date());
  }

  async claim(request: ReviewRef): Promise<ReviewSummary> {
    const now = new Date();
    const claimed = claimVerdict(stateOf(await this.find(request)), request.userId, now);
    if (!claimed.ok) throw refusal(claimed.reason);
    if (!(await this.store.claim(request.workspaceId, request.reviewId, request.userId, now, claimed.claimExpiresAt))) {
      // Someone claimed or resolved it between the read and the update.
      throw await this.refusalNow(request);
    }
    return summaryOf(await this.find(request), now);
  }

  /** Gives the caller's claim up; releasing an item nobody holds changes nothing. */
  async release(request: ReviewRef): Promise<ReviewSummary> {
    const now = new Date();
    const item = await this.find(request);
    const status = reviewStatus(stateOf(item), now);
    if (status === 'resolved') throw refusal('resolved');
    if (status === 'claimed' && item.claimed_by !== request.userId) throw refusal('held');
    if (status === 'claimed') await this.store.release(request.workspaceId, request.reviewId, request.userId, now);
    return summaryOf(await this.find(request), now);
  }

  /**
   * Records the reviewer's answers and action as the execution's outcome (`source` `review`, or `audit` for an audit
   * sample), and resolves the item, in one transaction. Order of checks: the item (404), whether it can still be
   * resolved by the caller (409), the body (400 naming every bad path).
   */
  async resolve(request: ResolveReviewRequest): Promise<ReviewResolvedReply> {
    const now = new Date();
    const item = await this.find(request);
    const verdict = resolveVerdict(stateOf(item), request.userId, now);
    if (!verdict.ok) throw refusal(verdict.reason);
    const body = isObject(request.body) ? request.body : null;
    const parsed = body === null ? null : ResolveReviewBody.safeParse(body);
    const noteIssues = parsed && !parsed.success ? zodIssues(parsed.error) : [];
    const outcomeBody = body === null ? request.body : { answers: body.answers, action: body.action };
    const checked = await this.outcomes.check(request.workspaceId, item.execution_id, outcomeBody, noteIssues);
    const note = parsed?.success ? (parsed.data.note ?? null) : null;
    const stored = { ...checked.stored, source: reviewOutcomeSource(item.reason as ReviewListReason) };
    const resolution = { answers: stored.answers, action: stored.action, note };
    const resolved = await this.store.resolve(request.workspaceId, request.reviewId, request.userId, now, resolution, (tx) =>
      ExecutionStore.recordOutcomeIn(tx, request.workspaceId, item.execution_id, checked.execution, stored, checked.labels),
    );
    if (!resolved) throw await this.refusalNow(request);
    this.resolutions.inc({ reason: item.reason });
    const after = await this.find(request);
    const schema = await this.versions.get(after.decision_id, after.version);
    const deliveries = await this.deliverReviewed(request.workspaceId, schema, after, note);
    return {
      ...summaryOf(after, now),
      outcome: { answers: stored.answers, action: stored.action, source: stored.source, recorded_at: stored.recorded_at },
      deliveries,
    };
  }

  /** The version's `on: "reviewed"` webhooks, through the run's delivery path (the same stream, retries and records). */
  private async deliverReviewed(
    workspaceId: string,
    schema: NormalizedSchema,
    item: Omit<ReviewDetailRow, 'status'>,
    note: string | null,
  ): Promise<ReviewResolvedReply['deliveries']> {
    const webhooks = reviewedWebhooks(schema);
    if (webhooks.length === 0 || item.resolution === null || item.resolved_at === null || item.resolved_by === null) return [];
    const data: ReviewedEventData = {
      review_id: item.id,
      reason: item.reason as ReviewListReason,
      decision_id: item.decision_id,
      decision: item.decision_slug,
      version: item.version,
      execution: {
        id: item.execution_id,
        result: item.result,
        confidence: item.confidence,
        action: item.action,
        action_reason: item.action_reason,
        created_at: item.executed_at.toISOString(),
      },
      review: {
        answers: item.resolution.answers,
        action: item.resolution.action,
        note,
        source: reviewOutcomeSource(item.reason as ReviewListReason),
        resolved_by: item.resolved_by,
        resolved_at: item.resolved_at.toISOString(),
      },
    };
    const createdAt = item.resolved_at;
    const messages = webhooks.map((destination): DeliveryMessage => {
      const deliveryId = newId('dlv');
      const { method, headers, body } = reviewedDelivery(
        destination,
        { deliveryId, created: Math.floor(createdAt.getTime() / 1000), livemode: item.livemode },
        data,
      );
      return {
        deliveryId,
        workspaceId,
        decisionId: item.decision_id,
        decisionSlug: item.decision_slug,
        executionId: item.execution_id,
        destinationKey: destination.key,
        kind: 'webhook',
        livemode: item.livemode,
        url: destination.url,
        method,
        headers,
        body,
        createdAt: createdAt.toISOString(),
      };
    });
    const stored = await this.calls.publish(messages);
    return messages.map((message, i) => ({ key: message.destinationKey, delivery_id: message.deliveryId, status: stored[i] ? 'queued' : 'unavailable' }));
  }

  private async find(request: ReviewRef): Promise<Omit<ReviewDetailRow, 'status'>> {
    const row = looksLikeId('rev', request.reviewId) ? await this.store.find(request.workspaceId, request.reviewId) : undefined;
    if (!row) throw new ServiceError('NOT_FOUND', 'No such review item in this workspace.');
    return row;
  }

  /** Why an update that found the item changed nothing: it is gone (404), resolved or held by someone else (409). */
  private async refusalNow(request: ReviewRef): Promise<ServiceError> {
    const item = await this.find(request);
    const verdict = resolveVerdict(stateOf(item), request.userId, new Date());
    return refusal(verdict.ok ? 'held' : verdict.reason);
  }
}

function refusal(reason: 'resolved' | 'held'): ServiceError {
  return reason === 'resolved'
    ? new ServiceError('CONFLICT', 'This review item is already resolved.')
    : new ServiceError('CONFLICT', 'Another reviewer holds a claim on this review item.');
}

function stateOf(row: ReviewItemRow): ReviewItemState {
  return { dueAt: row.due_at, claimedBy: row.claimed_by, claimExpiresAt: row.claim_expires_at, resolvedAt: row.resolved_at };
}

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

function summaryOf(row: ReviewItemRow, now: Date): ReviewSummary {
  const status = reviewStatus(stateOf(row), now);
  // A lapsed claim is shown as none.
  const claimed = status === 'claimed';
  return {
    id: row.id,
    status,
    reason: row.reason as ReviewListReason,
    decision_id: row.decision_id,
    decision: row.decision_slug,
    version: row.version,
    execution_id: row.execution_id,
    action: row.action,
    action_reason: row.action_reason,
    executed_at: row.executed_at.toISOString(),
    due_at: row.due_at.toISOString(),
    claimed_by: claimed ? row.claimed_by : null,
    claim_expires_at: claimed ? iso(row.claim_expires_at) : null,
    resolved_at: iso(row.resolved_at),
    resolved_by: row.resolved_by,
    resolution: row.resolution,
  };
}

function detailOf(row: Omit<ReviewDetailRow, 'status'>, schema: NormalizedSchema, now: Date): ReviewDetail {
  const model = row.distributions?.model ?? null;
  const answers = schema.questions.map((question): ReviewedAnswer => ({
    key: question.key,
    kind: question.kind,
    outcomes: question.kind === 'probability' ? [true, false] : outcomesOf(question),
    answer: (row.result?.[question.key] as string | number | undefined) ?? null,
    confidence: row.confidence?.[question.key] ?? null,
    distribution: model?.[question.key] ?? null,
  }));
  return {
    ...summaryOf(row, now),
    state: row.input?.state ?? null,
    answers,
    scores: row.scores,
    composites: row.composites,
    trace: row.trace ?? null,
    error: row.error ?? null,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The list's cursor: the last item's due time and id, opaque to the caller. */
export function encodeReviewCursor(dueAt: Date, id: string): string {
  return Buffer.from(`r:${dueAt.getTime()}:${id}`).toString('base64url');
}

export function decodeReviewCursor(cursor: string): { dueAt: Date; id: string } {
  const match = /^r:(\d{1,15}):(rev_[A-Za-z0-9]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw new ServiceError('INVALID_REQUEST', 'cursor is not valid.', [{ path: 'cursor', message: 'not a cursor from this API' }]);
  return { dueAt: new Date(Number(match[1])), id: match[2]! };
}

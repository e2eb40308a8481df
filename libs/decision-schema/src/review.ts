// Human review of a decision's runs (docs/reviews.md): the `settings.review` part of the schema, which runs it
// sends to review, and the states an item goes through. Pure: the runner stores and moves the items.
import { claimUnique, expectArray, expectBoolean, expectNumber, expectObject, expectOneOf, isGiven } from './field-checks';
import type { Issues, Path } from './issues';
import { REVIEW_DUE_MINUTES_DEFAULT, REVIEW_DUE_MINUTES_MAX, REVIEW_DUE_MINUTES_MIN } from './limits';
import { ACTIONS, type NormalizedSchema, type ReviewReason, type WebhookDestination, type ReviewSettings, type ReviewSettingsInput } from './schema-types';

const REVIEW = ['when', 'auditRate', 'dueMinutes'];
const WHEN = ['actions', 'lowConfidence', 'engineError'];

/**
 * Checks `settings.review`. A reviewer judges a run from the state it was called with and the answers it gave, so
 * review needs a version that keeps both: `storeInput` true (its default is false) and `storeOutput` not false.
 */
export function validateReviewSettings(value: unknown, path: Path, issues: Issues, store: { storeInput: unknown; storeOutput: unknown }): void {
  if (!isGiven(value)) return;
  if (!expectObject(value, path, issues, REVIEW)) return;
  if (isGiven(value.when) && expectObject(value.when, [...path, 'when'], issues, WHEN)) {
    const when = value.when;
    const actionsPath = [...path, 'when', 'actions'];
    if (isGiven(when.actions) && expectArray(when.actions, actionsPath, issues, { max: ACTIONS.length, noun: 'actions' })) {
      const seen = new Set<string>();
      when.actions.forEach((action, i) => {
        if (expectOneOf(action, ACTIONS, [...actionsPath, i], issues)) claimUnique(seen, action, [...actionsPath, i], issues);
      });
    }
    if (isGiven(when.lowConfidence)) expectBoolean(when.lowConfidence, [...path, 'when', 'lowConfidence'], issues);
    if (isGiven(when.engineError)) expectBoolean(when.engineError, [...path, 'when', 'engineError'], issues);
  }
  if (isGiven(value.auditRate)) expectNumber(value.auditRate, [...path, 'auditRate'], issues, { min: 0, max: 1 });
  if (isGiven(value.dueMinutes)) {
    expectNumber(value.dueMinutes, [...path, 'dueMinutes'], issues, { min: REVIEW_DUE_MINUTES_MIN, max: REVIEW_DUE_MINUTES_MAX, integer: true });
  }
  if (store.storeInput !== true) issues.add(path, 'needs storeInput: true, since a reviewer must see the state the run was called with');
  if (store.storeOutput === false) issues.add(path, 'needs storeOutput: true, since a reviewer must see the answers the run gave');
}

/** Only for input that validation accepted. */
export function normalizeReview(input: ReviewSettingsInput): ReviewSettings {
  return {
    when: {
      actions: [...(input.when?.actions ?? [])],
      lowConfidence: input.when?.lowConfidence ?? false,
      engineError: input.when?.engineError ?? false,
    },
    auditRate: input.auditRate ?? 0,
    dueMinutes: input.dueMinutes ?? REVIEW_DUE_MINUTES_DEFAULT,
  };
}

/**
 * A number in [0, 1) drawn from an execution id alone (FNV-1a over its UTF-16 units, then a murmur3 finalizer so
 * that ids differing in their last characters land far apart). The same id always draws the same number, so a
 * replay, a second replica or a later recount agrees on which runs were sampled for an audit.
 */
export function auditDraw(executionId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < executionId.length; i++) {
    hash ^= executionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) / 0x1_0000_0000;
}

/** Whether a run not matched by `when` is in the audit share `rate` (0..1). */
export function auditSampled(executionId: string, rate: number): boolean {
  return auditDraw(executionId) < rate;
}

/** What the review rules see of a finished live run. */
export interface ReviewedRun {
  executionId: string;
  /** null for a run that failed without an action. */
  action: string | null;
  /** `action_reason.type` of an answered run; null for a failed one. */
  reasonType: string | null;
  /** The run failed on, or fell back after, an engine error. */
  engineError: boolean;
}

/**
 * Why a run gets a review item, or null when it gets none. `when` is tried in the order of the reasons (an engine
 * error, a low confidence, the action), so an item carries one reason; only a run `when` does not match can be
 * drawn for an audit, which is what makes the audited runs a sample of those decided without review.
 */
export function reviewReason(review: ReviewSettings, run: ReviewedRun): ReviewReason | null {
  if (run.engineError) return review.when.engineError ? 'engine_error' : null;
  if (run.action === null) return null;
  if (review.when.lowConfidence && run.reasonType === 'low_confidence') return 'low_confidence';
  if ((review.when.actions as readonly string[]).includes(run.action)) return 'action';
  return auditSampled(run.executionId, review.auditRate) ? 'audit' : null;
}

export const REVIEW_STATUSES = ['open', 'claimed', 'resolved', 'expired'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** How long a claim holds an item for one reviewer. */
export const REVIEW_CLAIM_MINUTES = 15;

export interface ReviewItemState {
  dueAt: Date;
  claimedBy: string | null;
  claimExpiresAt: Date | null;
  resolvedAt: Date | null;
}

/**
 * The status an item shows at `now`: resolved once resolved; claimed while a claim holds; otherwise open, or
 * expired once past its due time (an expired item is still resolvable). A lapsed claim leaves the item as if never
 * claimed, so a reviewer who walked away does not hold it.
 */
export function reviewStatus(item: ReviewItemState, now: Date): ReviewStatus {
  if (item.resolvedAt !== null) return 'resolved';
  if (item.claimedBy !== null && item.claimExpiresAt !== null && item.claimExpiresAt > now) return 'claimed';
  return item.dueAt <= now ? 'expired' : 'open';
}

export type ClaimVerdict = { ok: true; claimExpiresAt: Date } | { ok: false; reason: 'resolved' | 'held' };

/** Whether `userId` may claim (or renew a claim on) the item at `now`. */
export function claimVerdict(item: ReviewItemState, userId: string, now: Date): ClaimVerdict {
  const status = reviewStatus(item, now);
  if (status === 'resolved') return { ok: false, reason: 'resolved' };
  if (status === 'claimed' && item.claimedBy !== userId) return { ok: false, reason: 'held' };
  return { ok: true, claimExpiresAt: new Date(now.getTime() + REVIEW_CLAIM_MINUTES * 60_000) };
}

/**
 * Whether `userId` may resolve the item at `now`: anyone may resolve an unclaimed (open or expired) item, and a
 * claimed one only its holder.
 */
export function resolveVerdict(item: ReviewItemState, userId: string, now: Date): { ok: true } | { ok: false; reason: 'resolved' | 'held' } {
  const status = reviewStatus(item, now);
  if (status === 'resolved') return { ok: false, reason: 'resolved' };
  if (status === 'claimed' && item.claimedBy !== userId) return { ok: false, reason: 'held' };
  return { ok: true };
}

/** The source an outcome recorded by a review carries: an audit sample's outcome is told apart from the rest. */
export function reviewOutcomeSource(reason: ReviewReason): 'review' | 'audit' {
  return reason === 'audit' ? 'audit' : 'review';
}

/** A review's due time: `dueMinutes` after the run. */
export function reviewDueAt(review: ReviewSettings, executedAt: Date): Date {
  return new Date(executedAt.getTime() + review.dueMinutes * 60_000);
}

/** The webhooks a resolved review of this version fires (`on: "reviewed"`), in schema order. */
export function reviewedWebhooks(schema: NormalizedSchema): WebhookDestination[] {
  return schema.destinations.filter((destination): destination is WebhookDestination => destination.type === 'webhook' && destination.on === 'reviewed');
}

/** What a `decision.reviewed` event carries: the execution, the machine's action and the reviewer's. */
export interface ReviewedEventData {
  review_id: string;
  reason: ReviewReason;
  decision_id: string;
  decision: string;
  version: number;
  execution: {
    id: string;
    result: Record<string, unknown> | null;
    confidence: Record<string, number> | null;
    action: string | null;
    action_reason: unknown;
    created_at: string;
  };
  review: {
    answers: Record<string, unknown>;
    action: string | null;
    note: string | null;
    source: 'review' | 'audit';
    resolved_by: string;
    resolved_at: string;
  };
}

/** The request of one `decision.reviewed` delivery: the event as every webhook's, its headers as the run's webhooks' are. */
export function reviewedDelivery(
  destination: WebhookDestination,
  envelope: { deliveryId: string; created: number; livemode: boolean },
  data: ReviewedEventData,
): { method: 'POST'; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { ...destination.headers };
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const body = JSON.stringify({ id: envelope.deliveryId, type: 'decision.reviewed', created: envelope.created, livemode: envelope.livemode, data });
  return { method: 'POST', headers, body };
}

/**
 * Human review (docs/reviews.md): the runner's subjects' payloads, and the query and body of the application's review
 * routes as zod schemas, read by the gateway's routes and the MCP tools alike.
 */
import { z } from 'zod';
import type { WorkspaceScoped } from './common';
import { ServiceError, type ValidationIssue } from './errors';

export const REVIEW_LIST_STATUSES = ['open', 'claimed', 'expired', 'resolved'] as const;
export const REVIEW_LIST_REASONS = ['action', 'low_confidence', 'engine_error', 'audit'] as const;
export const REVIEWS_PAGE = { min: 1, max: 100, default: 20 } as const;
export const REVIEW_CURSOR_MAX_LENGTH = 200;
/** A reviewer's note on a resolution. */
export const REVIEW_NOTE_MAX = 2_000;

const DECISION_ID = /^dec_[A-Za-z0-9]{1,64}$/;

/** `limit`, `cursor`, `status`, `decision_id` and `reason` as the list route's query text; other parameters are ignored. */
export const ReviewListQuery = z.object({
  limit: z
    .string({ error: `must be an integer from ${REVIEWS_PAGE.min} to ${REVIEWS_PAGE.max}` })
    .regex(/^\d{1,3}$/, { error: `must be an integer from ${REVIEWS_PAGE.min} to ${REVIEWS_PAGE.max}`, abort: true })
    .transform(Number)
    .refine((limit) => limit >= REVIEWS_PAGE.min && limit <= REVIEWS_PAGE.max, { error: `must be an integer from ${REVIEWS_PAGE.min} to ${REVIEWS_PAGE.max}` })
    .optional(),
  cursor: z
    .string({ error: 'is not a valid cursor' })
    .min(1, { error: 'is not a valid cursor' })
    .max(REVIEW_CURSOR_MAX_LENGTH, { error: 'is not a valid cursor' })
    .optional(),
  status: z.enum(REVIEW_LIST_STATUSES, { error: `must be one of ${REVIEW_LIST_STATUSES.join(', ')}` }).optional(),
  decision_id: z.string({ error: 'must be a decision id (dec_…)' }).regex(DECISION_ID, { error: 'must be a decision id (dec_…)' }).optional(),
  reason: z.enum(REVIEW_LIST_REASONS, { error: `must be one of ${REVIEW_LIST_REASONS.join(', ')}` }).optional(),
});

/**
 * A resolution: `answers` and `action` as an outcome takes them (checked by the runner against the version that
 * answered the run, where every bad path is named together with this schema's), and an optional `note`. Other
 * fields are ignored, as an outcome's are.
 */
export const ResolveReviewBody = z.object({
  answers: z.unknown().optional(),
  action: z.unknown().optional(),
  note: z
    .string({ error: `must be text of at most ${REVIEW_NOTE_MAX} characters` })
    .max(REVIEW_NOTE_MAX, { error: `must be text of at most ${REVIEW_NOTE_MAX} characters` })
    .nullable()
    .optional(),
});
export type ResolveReviewBody = z.output<typeof ResolveReviewBody>;

/** A zod failure as the spec's `details`. */
export function zodIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
}

/** The list's query, checked: INVALID_REQUEST naming each bad parameter. */
export function reviewListQuery(query: Record<string, unknown>): Omit<ListReviewsRequest, 'workspaceId'> {
  const parsed = ReviewListQuery.safeParse(query);
  if (!parsed.success) throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', zodIssues(parsed.error));
  const { limit, cursor, status, decision_id, reason } = parsed.data;
  return { limit: limit ?? REVIEWS_PAGE.default, cursor: cursor ?? null, status: status ?? null, decisionId: decision_id ?? null, reason: reason ?? null };
}

export type ReviewListStatus = (typeof REVIEW_LIST_STATUSES)[number];
export type ReviewListReason = (typeof REVIEW_LIST_REASONS)[number];

export interface ListReviewsRequest extends WorkspaceScoped {
  limit: number;
  cursor: string | null;
  /** null lists the items not yet resolved (open, claimed and expired). */
  status: ReviewListStatus | null;
  decisionId: string | null;
  reason: ReviewListReason | null;
}

/** One item named by a reviewer: `userId` is who asks (a claim is theirs). */
export interface ReviewRef extends WorkspaceScoped {
  reviewId: string;
  userId: string;
}

export interface ResolveReviewRequest extends ReviewRef {
  body: unknown;
}

/** An item as lists show it. */
export interface ReviewSummary {
  id: string;
  status: ReviewListStatus;
  reason: ReviewListReason;
  decision_id: string;
  decision: string;
  version: number;
  execution_id: string;
  action: string | null;
  action_reason: Record<string, unknown> | null;
  executed_at: string;
  due_at: string;
  claimed_by: string | null;
  claim_expires_at: string | null;
  resolved_at: string | null;
  resolved_by: string | null;
  resolution: { answers: Record<string, unknown>; action: string | null; note: string | null } | null;
}

/** One answer of the run as a reviewer sees it. */
export interface ReviewedAnswer {
  key: string;
  kind: 'choice' | 'score' | 'probability';
  /** What a resolution may answer: option values, level labels, or true and false. */
  outcomes: Array<string | boolean>;
  answer: string | number | null;
  confidence: number | null;
  /** The engine's distribution over `outcomes` (before calibration), or null for a run without one. */
  distribution: Record<string, number> | null;
}

/** An item with what a reviewer judges. */
export interface ReviewDetail extends ReviewSummary {
  state: unknown;
  answers: ReviewedAnswer[];
  scores: Record<string, number> | null;
  composites: Record<string, number> | null;
  trace: unknown;
  error: unknown;
}

export interface ReviewListReply {
  data: ReviewSummary[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface ReviewResolvedReply extends ReviewSummary {
  outcome: { answers: Record<string, unknown>; action: string | null; source: 'review' | 'audit'; recorded_at: string };
  /** The `decision.reviewed` webhooks (`on: "reviewed"` destinations of the run's version), queued or not. */
  deliveries: Array<{ key: string; delivery_id: string; status: 'queued' | 'unavailable' }>;
}

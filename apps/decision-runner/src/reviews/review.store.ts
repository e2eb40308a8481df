import { DataSource, EntityManager } from 'typeorm';
import { rowsReturned } from '@ds/platform';

/** A review item as written after its run: the run's identity, why it is reviewed and when it is due. */
export interface NewReviewItem {
  id: string;
  workspaceId: string;
  decisionId: string;
  decisionSlug: string;
  version: number;
  executionId: string;
  reason: string;
  executedAt: Date;
  dueAt: Date;
}

/** An item's own columns, as every read answers them. */
export interface ReviewItemRow {
  id: string;
  decision_id: string;
  decision_slug: string;
  version: number;
  execution_id: string;
  reason: string;
  executed_at: Date;
  due_at: Date;
  claimed_by: string | null;
  claim_expires_at: Date | null;
  resolved_at: Date | null;
  resolved_by: string | null;
  resolution: { answers: Record<string, unknown>; action: string | null; note: string | null } | null;
  /** The machine's action and its reason, from the execution. */
  action: string | null;
  action_reason: Record<string, unknown> | null;
}

/** An item with what a reviewer judges: the run's state, answers, distributions and trace. */
export interface ReviewDetailRow extends ReviewItemRow {
  status: string;
  input: { state?: unknown } | null;
  result: Record<string, unknown> | null;
  confidence: Record<string, number> | null;
  scores: Record<string, number> | null;
  composites: Record<string, number> | null;
  distributions: { model?: Record<string, Record<string, number>> } | null;
  trace: unknown;
  error: unknown;
  livemode: boolean;
}

export type ReviewStatusFilter = 'open' | 'claimed' | 'expired' | 'resolved' | 'unresolved';

export interface ReviewListFilter {
  status: ReviewStatusFilter;
  decisionId: string | null;
  reason: string | null;
  /** The last item of the page before, in the list's order. */
  after: { dueAt: Date; id: string } | null;
  limit: number;
}

const ITEM_COLUMNS = `r.id, r.decision_id, r.decision_slug, r.version, r.execution_id, r.reason, r.executed_at, r.due_at,
  r.claimed_by, r.claim_expires_at, r.resolved_at, r.resolved_by, r.resolution, e.action, e.action_reason`;

/** The status filters as conditions on an item `r` at the instant `now` (a placeholder), the same rules as `reviewStatus`. */
const STATUS_SQL: Record<ReviewStatusFilter, string | ((now: string) => string)> = {
  unresolved: 'r.resolved_at IS NULL',
  resolved: 'r.resolved_at IS NOT NULL',
  claimed: (now) => `r.resolved_at IS NULL AND r.claim_expires_at > ${now}`,
  open: (now) => `r.resolved_at IS NULL AND (r.claim_expires_at IS NULL OR r.claim_expires_at <= ${now}) AND r.due_at > ${now}`,
  expired: (now) => `r.resolved_at IS NULL AND (r.claim_expires_at IS NULL OR r.claim_expires_at <= ${now}) AND r.due_at <= ${now}`,
};

/** A claim another reviewer may not take or use: held, and not lapsed at `now`. */
const FREE_FOR = '(claimed_by IS NULL OR claim_expires_at <= $4 OR claimed_by = $3)';

/** Review items (`review_items`), each with its execution. */
export class ReviewStore {
  constructor(private readonly db: DataSource) {}

  /** One statement for a batch of new items; an execution already reviewed keeps its item. */
  async insert(items: readonly NewReviewItem[]): Promise<void> {
    await this.db.query(
      `INSERT INTO review_items (id, workspace_id, decision_id, decision_slug, version, execution_id, reason, executed_at, due_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[])
       ON CONFLICT (execution_id) DO NOTHING`,
      [
        items.map((item) => item.id),
        items.map((item) => item.workspaceId),
        items.map((item) => item.decisionId),
        items.map((item) => item.decisionSlug),
        items.map((item) => item.version),
        items.map((item) => item.executionId),
        items.map((item) => item.reason),
        items.map((item) => item.executedAt),
        items.map((item) => item.dueAt),
      ],
    );
  }

  /** One page of a workspace's items, oldest due first, one past the limit to say whether more follow. */
  async list(workspaceId: string, filter: ReviewListFilter, now: Date): Promise<ReviewItemRow[]> {
    const values: unknown[] = [workspaceId];
    const status = STATUS_SQL[filter.status];
    const where = ['r.workspace_id = $1', typeof status === 'string' ? status : status(`$${values.push(now)}::timestamptz`)];
    if (filter.decisionId !== null) where.push(`r.decision_id = $${values.push(filter.decisionId)}`);
    if (filter.reason !== null) where.push(`r.reason = $${values.push(filter.reason)}`);
    if (filter.after !== null) where.push(`(r.due_at, r.id) > ($${values.push(filter.after.dueAt)}, $${values.push(filter.after.id)})`);
    return (await this.db.query(
      `SELECT ${ITEM_COLUMNS} FROM review_items r JOIN executions e ON e.id = r.execution_id
       WHERE ${where.join(' AND ')} ORDER BY r.due_at, r.id LIMIT ${filter.limit + 1}`,
      values,
    )) as ReviewItemRow[];
  }

  /** One item with its run, or undefined when the workspace has none of that id. */
  async find(workspaceId: string, id: string): Promise<Omit<ReviewDetailRow, 'status'> | undefined> {
    const [row] = (await this.db.query(
      `SELECT ${ITEM_COLUMNS}, e.input, e.result, e.confidence, e.scores, e.composites, e.distributions, e.trace, e.error, e.livemode
       FROM review_items r JOIN executions e ON e.id = r.execution_id WHERE r.workspace_id = $1 AND r.id = $2`,
      [workspaceId, id],
    )) as Array<Omit<ReviewDetailRow, 'status'>>;
    return row;
  }

  /**
   * Claims the item for `userId` until `expiresAt` when it is unresolved and nobody else's claim holds at `now`;
   * answers the item when claimed. The row lock of the update orders two reviewers claiming at once: the second
   * sees the first's claim and gets nothing.
   */
  async claim(workspaceId: string, id: string, userId: string, now: Date, expiresAt: Date): Promise<boolean> {
    const rows = rowsReturned(
      await this.db.query(
        `UPDATE review_items SET claimed_by = $3, claim_expires_at = $5
         WHERE workspace_id = $1 AND id = $2 AND resolved_at IS NULL AND ${FREE_FOR} RETURNING id`,
        [workspaceId, id, userId, now, expiresAt],
      ),
    );
    return rows.length > 0;
  }

  /** Gives up `userId`'s claim that still holds at `now`; answers whether there was one. */
  async release(workspaceId: string, id: string, userId: string, now: Date): Promise<boolean> {
    const rows = rowsReturned(
      await this.db.query(
        `UPDATE review_items SET claimed_by = NULL, claim_expires_at = NULL
         WHERE workspace_id = $1 AND id = $2 AND resolved_at IS NULL AND claimed_by = $3 AND claim_expires_at > $4 RETURNING id`,
        [workspaceId, id, userId, now],
      ),
    );
    return rows.length > 0;
  }

  /**
   * Resolves the item for `userId` when it is unresolved and not claimed by someone else at `now`, and in the same
   * transaction runs `also` (the execution's outcome); answers false, changing nothing, when the item could not be
   * resolved or `also` answered false.
   */
  resolve(workspaceId: string, id: string, userId: string, now: Date, resolution: object, also: (tx: EntityManager) => Promise<boolean>): Promise<boolean> {
    return this.db
      .transaction(async (tx) => {
        const rows = rowsReturned(
          await tx.query(
            `UPDATE review_items SET resolved_at = $4, resolved_by = $3, resolution = $5, claimed_by = NULL, claim_expires_at = NULL
           WHERE workspace_id = $1 AND id = $2 AND resolved_at IS NULL AND ${FREE_FOR} RETURNING id`,
            [workspaceId, id, userId, now, resolution],
          ),
        );
        if (rows.length === 0) return false;
        if (await also(tx)) return true;
        // Nothing of the resolution stays when its outcome could not be written.
        throw new OutcomeNotWritten();
      })
      .catch((error: unknown) => {
        if (error instanceof OutcomeNotWritten) return false;
        throw error;
      });
  }

  /** Items not resolved, across workspaces, with the earliest run and the earliest due time among them (for the metrics). */
  async unresolvedSummary(): Promise<{ count: number; oldestExecutedAt: Date | null; earliestDueAt: Date | null }> {
    const [row] = (await this.db.query(
      'SELECT count(*)::int AS count, min(executed_at) AS executed, min(due_at) AS due FROM review_items WHERE resolved_at IS NULL',
    )) as Array<{ count: number; executed: Date | null; due: Date | null }>;
    return { count: row?.count ?? 0, oldestExecutedAt: row?.executed ?? null, earliestDueAt: row?.due ?? null };
  }
}

class OutcomeNotWritten extends Error {}

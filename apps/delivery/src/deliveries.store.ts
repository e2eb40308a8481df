import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import {
  DeliveryAttemptDetailView,
  DeliveryAttemptView,
  DeliveryDetailView,
  DeliveryMessage,
  isBigintText,
  ServiceError,
  DeliveryStatus,
  DeliveryView,
  ListDeliveriesReply,
  ListDeliveriesRequest,
} from '@ds/contracts';
import { deleteInBatches, rowsAffected } from '@ds/platform';
import { KeptResponse, shownRequestHeaders } from '@ds/webhooks';

/** Deliveries are kept this long after they were queued (the spec's retention), then purged. */
export const RETENTION_DAYS = 30;

/** Taken shared by every delivery recorded for a workspace, and exclusively by that workspace's deletion. */
function workspaceLockKey(workspaceId: string): string {
  return `delivery.workspace:${workspaceId}`;
}
const PURGE_BATCH = 2_000;

export interface DeliveryState {
  status: DeliveryStatus;
  sequence: number;
  attemptCount: number;
}

export type AttemptOutcomeName = 'succeeded' | 'failed' | 'gone' | 'timeout' | 'refused' | 'network' | 'interrupted';

export interface FinishedAttempt {
  outcome: AttemptOutcomeName;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  /** What the receiver answered, already redacted; absent or null when no answer came. */
  response?: KeptResponse | null;
}

interface DeliveryRow {
  id: string;
  seq: string;
  workspace_id: string;
  decision_id: string;
  decision_slug: string;
  execution_id: string;
  destination_key: string;
  kind: DeliveryView['kind'];
  livemode: boolean;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  status: DeliveryStatus;
  sequence: number;
  attempt_count: number;
  next_attempt_at: Date | null;
  created_at: Date;
  completed_at: Date | null;
}

interface AttemptRow {
  delivery_id: string;
  sequence: number;
  attempt: number;
  started_at: Date;
  outcome: string;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  response_content_type?: string | null;
  response_body?: string | null;
  response_truncated?: boolean;
}

/** The only place that speaks SQL to the deliveries and attempts tables. */
@Injectable()
export class DeliveriesStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The delivery's row, written the first time its message is consumed. Redeliveries of the message (a replica
   * died, an acknowledgement was lost) find the row already there and read its state. Null when the id belongs
   * to another workspace's delivery; 'workspace-deleted' when its workspace was deleted (checked under the lock
   * the deletion takes, so no row is written behind it).
   */
  async record(message: DeliveryMessage): Promise<DeliveryState | null | 'workspace-deleted'> {
    return this.db.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock_shared(hashtext($1))', [workspaceLockKey(message.workspaceId)]);
      const deleted = (await manager.query('SELECT 1 FROM deleted_workspaces WHERE workspace_id = $1', [message.workspaceId])) as unknown[];
      if (deleted.length > 0) return 'workspace-deleted';
      return this.insertRecord(manager, message);
    });
  }

  private async insertRecord(manager: EntityManager, message: DeliveryMessage): Promise<DeliveryState | null> {
    const rows = (await manager.query(
      `WITH inserted AS (
         INSERT INTO deliveries (id, workspace_id, decision_id, decision_slug, execution_id, destination_key, kind, livemode, url, method, headers, body, status, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending', $13)
         ON CONFLICT (id) DO NOTHING
         RETURNING status, sequence, attempt_count)
       SELECT status, sequence, attempt_count FROM inserted
       UNION ALL
       SELECT status, sequence, attempt_count FROM deliveries WHERE id = $1 AND workspace_id = $2
       LIMIT 1`,
      [
        message.deliveryId,
        message.workspaceId,
        message.decisionId,
        message.decisionSlug,
        message.executionId,
        message.destinationKey,
        message.kind,
        message.livemode,
        message.url,
        message.method,
        JSON.stringify(message.headers),
        message.body,
        validDate(message.createdAt) ?? new Date(),
      ],
    )) as Array<{ status: DeliveryStatus; sequence: number; attempt_count: number }>;
    const [row] = rows;
    // The id is taken by another workspace's delivery: this message can never be delivered.
    if (row === undefined) return null;
    return { status: row.status, sequence: row.sequence, attemptCount: row.attempt_count };
  }

  /** Starts the attempt sequence of a resend, if the delivery is still the failed one the resend was asked for. */
  async startSequence(deliveryId: string, sequence: number): Promise<boolean> {
    const count = rowsAffected(
      await this.db.query(
        `UPDATE deliveries SET status = 'pending', sequence = $2, attempt_count = 0, next_attempt_at = NULL, completed_at = NULL, updated_at = now()
         WHERE id = $1 AND status = 'failed' AND sequence = $2 - 1`,
        [deliveryId, sequence],
      ),
    );
    return count === 1;
  }

  /**
   * Counts an attempt before it is made and records it as `interrupted` until it finishes: an attempt cut short by
   * a crash still counts and shows. Null when the delivery is no longer pending in this sequence.
   */
  async beginAttempt(deliveryId: string, sequence: number, startedAt = new Date()): Promise<{ attemptId: string; attempt: number } | null> {
    const rows = (await this.db.query(
      `WITH counted AS (
         UPDATE deliveries SET attempt_count = attempt_count + 1, next_attempt_at = NULL, updated_at = now()
         WHERE id = $1 AND sequence = $2 AND status = 'pending'
         RETURNING attempt_count)
       INSERT INTO delivery_attempts (delivery_id, sequence, attempt, outcome, started_at)
       SELECT $1, $2, attempt_count, 'interrupted', $3 FROM counted
       RETURNING id, attempt`,
      [deliveryId, sequence, startedAt],
    )) as Array<{ id: string; attempt: number }>;
    const [row] = rows;
    return row === undefined ? null : { attemptId: String(row.id), attempt: row.attempt };
  }

  /** Records how an attempt ended and where the delivery stands: still pending (with its next attempt), or done. */
  async finishAttempt(
    attemptId: string,
    deliveryId: string,
    sequence: number,
    result: FinishedAttempt,
    next: { status: DeliveryStatus; nextAttemptAt: Date | null },
  ): Promise<void> {
    await this.db.query(
      `WITH attempt AS (
         UPDATE delivery_attempts SET outcome = $2, response_status = $3, duration_ms = $4, error = $5,
           response_content_type = $10, response_body = $11, response_truncated = $12
         WHERE id = $1)
       UPDATE deliveries SET status = $8, next_attempt_at = $9, updated_at = now(),
         completed_at = CASE WHEN $8 = 'pending' THEN NULL ELSE now() END
       WHERE id = $6 AND sequence = $7`,
      [
        attemptId,
        result.outcome,
        result.responseStatus,
        result.durationMs,
        result.error?.slice(0, 1000) ?? null,
        deliveryId,
        sequence,
        next.status,
        next.nextAttemptAt,
        result.response?.contentType ?? null,
        result.response?.body ?? null,
        result.response?.truncated ?? false,
      ],
    );
  }

  /** Ends a sequence that has used up its attempts (attempts cut short by crashes count too). */
  async markFailed(deliveryId: string, sequence: number): Promise<void> {
    await this.db.query(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, completed_at = now(), updated_at = now() WHERE id = $1 AND sequence = $2 AND status = 'pending'`,
      [deliveryId, sequence],
    );
  }

  /** The whole delivery as queued, for publishing a resend. */
  async message(workspaceId: string, deliveryId: string): Promise<{ message: DeliveryMessage; status: DeliveryStatus; sequence: number } | null> {
    const rows = (await this.db.query(`SELECT * FROM deliveries WHERE id = $1 AND workspace_id = $2`, [deliveryId, workspaceId])) as DeliveryRow[];
    const [row] = rows;
    if (row === undefined) return null;
    return {
      status: row.status,
      sequence: row.sequence,
      message: {
        deliveryId: row.id,
        workspaceId: row.workspace_id,
        decisionId: row.decision_id,
        decisionSlug: row.decision_slug,
        executionId: row.execution_id,
        destinationKey: row.destination_key,
        kind: row.kind,
        livemode: row.livemode,
        url: row.url,
        method: row.method,
        headers: row.headers,
        body: row.body,
        createdAt: row.created_at.toISOString(),
      },
    };
  }

  /** One delivery with the request it sends and what each attempt's receiver answered, bodies included. */
  async get(workspaceId: string, deliveryId: string): Promise<DeliveryDetailView | null> {
    const rows = (await this.db.query(`SELECT * FROM deliveries WHERE id = $1 AND workspace_id = $2`, [deliveryId, workspaceId])) as DeliveryRow[];
    const [row] = rows;
    // No row, no view: the delivery is not found.
    if (row === undefined) return null;
    const [view] = await this.withAttempts(rows, true);
    return {
      ...view!,
      bodies_shown: true,
      request: {
        method: row.method,
        headers: shownRequestHeaders({ deliveryId: row.id, destinationHeaders: row.headers }),
        body: row.body,
        body_bytes: Buffer.byteLength(row.body),
      },
      attempts: view!.attempts as DeliveryAttemptDetailView[],
    };
  }

  /** Newest first, paged by an opaque cursor over the row's sequence number. */
  async list(request: ListDeliveriesRequest): Promise<ListDeliveriesReply> {
    const params: unknown[] = [request.workspaceId];
    const where = ['workspace_id = $1'];
    if (request.decisionId !== null) where.push(`decision_id = $${params.push(request.decisionId)}`);
    if (request.status !== null) where.push(`status = $${params.push(request.status)}`);
    if (request.cursor !== null) {
      const seq = decodeCursor(request.cursor);
      if (seq === null)
        throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', [{ path: 'cursor', message: 'is not a valid cursor' }]);
      where.push(`seq < $${params.push(seq)}`);
    }
    const rows = (await this.db.query(
      `SELECT * FROM deliveries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${params.push(request.limit + 1)}`,
      params,
    )) as DeliveryRow[];
    const more = rows.length > request.limit;
    const page = rows.slice(0, request.limit);
    // The limit is at least 1, so when there are more rows the page has a last one.
    return { data: await this.withAttempts(page), has_more: more, next_cursor: more ? encodeCursor(page.at(-1)!.seq) : null };
  }

  /** Deletes deliveries (and, by cascade, their attempts) queued more than RETENTION_DAYS before `now`. */
  async purge(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - RETENTION_DAYS * 86_400_000);
    // The stream keeps a message as long as deliveries are kept: no message can name a workspace forgotten here.
    await this.db.query('DELETE FROM deleted_workspaces WHERE deleted_at < $1', [before]);
    return deleteInBatches(
      this.db,
      `DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE created_at < $1 ORDER BY created_at LIMIT ${PURGE_BATCH})`,
      [before],
      PURGE_BATCH,
    );
  }

  /**
   * Everything of a deleted (sub-)workspace: its deliveries (attempts by cascade) and signing secrets. Messages of
   * it still in the stream find no record and are dropped by the worker's own checks; running it twice is harmless.
   */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    await this.db.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [workspaceLockKey(workspaceId)]);
      await manager.query('INSERT INTO deleted_workspaces (workspace_id) VALUES ($1) ON CONFLICT DO NOTHING', [workspaceId]);
      await manager.query(`DELETE FROM deliveries WHERE workspace_id = $1`, [workspaceId]);
      await manager.query(`DELETE FROM signing_secrets WHERE workspace_id = $1`, [workspaceId]);
      await manager.query(`DELETE FROM workspace_secrets WHERE workspace_id = $1`, [workspaceId]);
    });
  }

  /** Seconds since the oldest delivery still pending was queued (0 when none is). */
  async oldestPendingAgeSeconds(): Promise<number> {
    const rows = (await this.db.query(`SELECT EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age FROM deliveries WHERE status = 'pending'`)) as Array<{
      age: number | null;
    }>;
    return Math.max(0, rows[0]?.age ?? 0);
  }

  /** The rows as views with their attempts; with what each receiver answered when `answers` (one delivery's view). */
  private async withAttempts(rows: DeliveryRow[], answers = false): Promise<DeliveryView[]> {
    if (rows.length === 0) return [];
    const attempts = (await this.db.query(
      `SELECT delivery_id, sequence, attempt, started_at, outcome, response_status, duration_ms, error
         ${answers ? ', response_content_type, response_body, response_truncated' : ''}
       FROM delivery_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, sequence, attempt`,
      [rows.map((row) => row.id)],
    )) as AttemptRow[];
    const byDelivery = new Map<string, Array<DeliveryAttemptView | DeliveryAttemptDetailView>>();
    for (const attempt of attempts) {
      const list = byDelivery.get(attempt.delivery_id) ?? [];
      const view = {
        sequence: attempt.sequence,
        attempt: attempt.attempt,
        started_at: attempt.started_at.toISOString(),
        outcome: attempt.outcome,
        response_status: attempt.response_status,
        duration_ms: attempt.duration_ms,
        error: attempt.error,
      };
      // An answer is kept exactly when the receiver answered with a status after bodies were kept.
      const answered = attempt.response_status !== null && attempt.response_body != null;
      list.push(
        answers
          ? {
              ...view,
              response: answered
                ? {
                    content_type: attempt.response_content_type ?? null,
                    body: attempt.response_body!,
                    body_bytes: Buffer.byteLength(attempt.response_body!),
                    truncated: attempt.response_truncated === true,
                  }
                : null,
            }
          : view,
      );
      byDelivery.set(attempt.delivery_id, list);
    }
    return rows.map((row) => ({
      id: row.id,
      decision_id: row.decision_id,
      decision_slug: row.decision_slug,
      execution_id: row.execution_id,
      destination_key: row.destination_key,
      kind: row.kind,
      url: row.url,
      livemode: row.livemode,
      status: row.status,
      sequence: row.sequence,
      attempt_count: row.attempt_count,
      next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
      created_at: row.created_at.toISOString(),
      completed_at: row.completed_at?.toISOString() ?? null,
      attempts: byDelivery.get(row.id) ?? [],
    }));
  }
}

function validDate(text: string): Date | null {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function encodeCursor(seq: string): string {
  return Buffer.from(`d${seq}`).toString('base64url');
}

/** The row sequence a cursor stands for, or null for a cursor that is not one of ours. */
export function decodeCursor(cursor: string): string | null {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  return /^d\d+$/.test(decoded) && isBigintText(decoded.slice(1)) ? decoded.slice(1) : null;
}

import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, SelectQueryBuilder } from 'typeorm';
import {
  ExecutionInputReply,
  ExecutionInputRequest,
  ExecutionOutcomesReply,
  ExecutionOutcomesRequest,
  EXECUTIONS_COUNT_CAP,
  isBigintText,
  LeaseExecutionsReply,
  LeaseExecutionsRequest,
  ListExecutionsReply,
  ListExecutionsRequest,
  ServiceError,
} from '@ds/contracts';
import { looksLikeId } from '@ds/ids';
import { ExecutionEntity } from '../entities';
import { ERROR_CODE_SQL, SOURCE_GROUP_SQL } from './source-groups';
import { STORED_INPUT } from './execution-recorder';

/**
 * How much JSON one page of executions may carry. Rows can hold mapped state values, so a hundred of them
 * could pass what NATS carries (1 MB by default); a page stops early instead, and the cursor goes on from there.
 */
export const EXECUTIONS_PAGE_BYTES = 256 * 1024;

/** An execution answered with a fresh 200 by the engine: what a decision is billed for. */
const BILLABLE = `status = 'success' AND coalesce(action_reason->>'type', '') <> 'engine_error'`;

/**
 * Newest first, paged by an opaque cursor over the row's sequence number. New rows get higher numbers,
 * so paging down while runs arrive never repeats or skips a row already behind the cursor.
 */
@Injectable()
export class ExecutionsQuery {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async list(request: ListExecutionsRequest): Promise<ListExecutionsReply> {
    const query = this.pageQuery(request);
    const [rows, total] = await Promise.all([query.getMany(), request.includeTotal === true ? this.count(request) : null]);
    const { page, hasMore } = pageWithin(
      rows.slice(0, request.limit).map((row) => ({ row, body: toPublicExecution(row, request.includeTrace === true) })),
      EXECUTIONS_PAGE_BYTES,
    );
    const more = hasMore || rows.length > request.limit;
    return {
      data: page.map(({ body }) => body),
      has_more: more,
      // The limit is at least 1 and pageWithin keeps at least one item, so a page with more after it has a last row.
      next_cursor: more ? encodeCursor(page.at(-1)!.row.seq) : null,
      ...(total === null ? {} : { total_count: Math.min(total, EXECUTIONS_COUNT_CAP), total_capped: total > EXECUTIONS_COUNT_CAP }),
    };
  }

  /** One page's statement: one row past the limit says whether more follow. */
  pageQuery(request: ListExecutionsRequest): SelectQueryBuilder<ExecutionEntity> {
    const query = this.filtered(request)
      .orderBy('e.seq', 'DESC')
      .limit(request.limit + 1);
    if (request.cursor !== null) query.andWhere('e.seq < :before', { before: decodeCursor(request.cursor) });
    return query;
  }

  /**
   * The executions matching the filters, whatever the cursor, counted through the same index as the page and no
   * further than one past the cap: an exact count of a busy workspace would read every row it ever kept.
   */
  private async count(request: ListExecutionsRequest): Promise<number> {
    const [sql, parameters] = this.countStatement(request);
    const [row] = (await this.db.query(`SELECT count(*)::int AS n FROM (${sql}) matching`, parameters)) as Array<{ n: number }>;
    return row!.n;
  }

  countStatement(request: ListExecutionsRequest): [string, unknown[]] {
    // Ordered as the page is, so that the count walks the page's index and stops at the cap, rather than a
    // sequential scan the planner may prefer for a common filter, which reads as far for a rare one.
    return this.filtered(request)
      .orderBy('e.seq', 'DESC')
      .select('1')
      .limit(EXECUTIONS_COUNT_CAP + 1)
      .getQueryAndParameters();
  }

  /**
   * The workspace's executions narrowed by every filter of the request. The source groups are compared through
   * SOURCE_GROUP_SQL over the bare columns (the only table of the statement), which is what the list indexes hold.
   */
  private filtered(request: ListExecutionsRequest): SelectQueryBuilder<ExecutionEntity> {
    const query = this.db.getRepository(ExecutionEntity).createQueryBuilder('e').where('e.workspace_id = :workspaceId', { workspaceId: request.workspaceId });
    if (request.decision !== null) query.andWhere('e.decision_slug = :slug', { slug: request.decision });
    if (request.sources !== undefined && request.sources !== null) {
      query.andWhere(`(${SOURCE_GROUP_SQL}) IN (:...sources)`, { sources: request.sources.length > 0 ? request.sources : ['none'] });
    }
    if (request.status !== null) query.andWhere('e.status = :status', { status: request.status });
    if (request.version != null) query.andWhere('e.version = :version', { version: request.version });
    if (request.action != null) query.andWhere('e.action = :action', { action: request.action });
    if (request.reason != null) query.andWhere(`e.action_reason->>'type' = :reason`, { reason: request.reason });
    // A failed run's own error, or the engine error an engine_error fallback answered instead of.
    if (request.errorCode != null) query.andWhere(`(${ERROR_CODE_SQL}) = :errorCode`, { errorCode: request.errorCode });
    return query;
  }

  /**
   * The state one execution was called with, kept as `{ state }` where its version stores inputs. Only the
   * application API asks, for a person who may edit the decision to try that state again in the playground.
   */
  async input(request: ExecutionInputRequest): Promise<ExecutionInputReply> {
    if (!looksLikeId('exec', request.executionId)) throw noSuchExecution();
    const [row] = (await this.db.query(`SELECT decision_id, decision_slug, ${STORED_INPUT} AS input FROM executions WHERE workspace_id = $1 AND id = $2`, [
      request.workspaceId,
      request.executionId,
    ])) as Array<{ decision_id: string; decision_slug: string; input: { state?: unknown } | null }>;
    if (!row) throw noSuchExecution();
    const kept = row.input !== null && typeof row.input === 'object' && 'state' in row.input;
    return {
      execution_id: request.executionId,
      decision_id: row.decision_id,
      decision: row.decision_slug,
      kept,
      ...(kept ? { state: row.input!.state } : {}),
    };
  }

  /** What billing needs to settle a reservation the runner could not settle itself. */
  async outcomes(request: ExecutionOutcomesRequest): Promise<ExecutionOutcomesReply> {
    const rows: Array<{ id: string; billable: boolean; decision_id: string }> = await this.db.query(
      `SELECT id, (${BILLABLE}) AS billable, decision_id
         FROM executions WHERE workspace_id = $1 AND id = ANY($2)`,
      [request.workspaceId, request.executionIds],
    );
    const known = new Map(rows.map((row) => [row.id, row.billable]));
    return {
      outcomes: Object.fromEntries(request.executionIds.map((id) => [id, known.has(id) ? (known.get(id) ? 'billable' : 'not_billable') : 'unknown'] as const)),
      decisions: Object.fromEntries(rows.map((row) => [row.id, row.decision_id])),
    };
  }

  /** The billable executions that took a unit of the lease, found through the workspace's time index. */
  async leaseExecutions(request: LeaseExecutionsRequest): Promise<LeaseExecutionsReply> {
    const rows: Array<{ id: string; decision_id: string }> = await this.db.query(
      `SELECT id, decision_id FROM executions
        WHERE workspace_id = $1 AND created_at BETWEEN $3::timestamptz AND $4::timestamptz AND lease_id = $2
          AND ${BILLABLE}`,
      [request.workspaceId, request.leaseId, request.from, request.to],
    );
    return { billable: rows.map((row) => row.id), decisions: Object.fromEntries(rows.map((row) => [row.id, row.decision_id])) };
  }
}

function noSuchExecution(): ServiceError {
  return new ServiceError('NOT_FOUND', 'No such execution in this workspace.');
}

/**
 * The leading items whose JSON bodies fit in maxBytes together (UTF-8), and at least one, so that paging
 * always moves on; hasMore when some were left for the next page.
 */
export function pageWithin<T extends { body: unknown }>(items: T[], maxBytes: number): { page: T[]; hasMore: boolean } {
  let bytes = 0;
  for (const [i, item] of items.entries()) {
    // Each item after the first is preceded by a comma in the page's array.
    bytes += Buffer.byteLength(JSON.stringify(item.body)) + (i > 0 ? 1 : 0);
    if (i > 0 && bytes > maxBytes) return { page: items.slice(0, i), hasMore: true };
  }
  return { page: items, hasMore: false };
}

export function encodeCursor(seq: string): string {
  return Buffer.from(`e:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  const match = /^e:(\d{1,19})$/.exec(decoded);
  // A sequence past bigint would fail the statement: a forged cursor is as invalid as a malformed one.
  if (!match || !isBigintText(match[1]!))
    throw new ServiceError('INVALID_REQUEST', 'cursor is not valid.', [{ path: 'cursor', message: 'not a cursor from this API' }]);
  return match[1]!;
}

/** The public form of an execution: never its input. */
function toPublicExecution(row: ExecutionEntity, withTrace: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: row.id,
    decision_id: row.decisionId,
    decision: row.decisionSlug,
    version: row.version,
    status: row.status,
    source: row.source,
    request_id: row.requestId,
    livemode: row.livemode,
    result: row.result,
    confidence: row.confidence,
  };
  if (row.scores !== null) body.scores = row.scores;
  if (row.composites !== null) body.composites = row.composites;
  body.action = row.action;
  body.action_reason = row.actionReason;
  body.destinations = row.destinations;
  body.metrics = row.metrics;
  if (row.error !== null) body.error = row.error;
  // Failed runs and runs recorded before traces have none.
  if (withTrace) body.trace = row.trace;
  body.outcome = row.outcome;
  body.created_at = row.createdAt.toISOString();
  return body;
}

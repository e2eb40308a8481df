import { Injectable } from '@nestjs/common';
import { SelectQueryBuilder } from 'typeorm';
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
import { ExecutionStore } from './execution.store';

/**
 * How much JSON one page of executions may carry. Rows can hold mapped state values, so a hundred of them
 * could pass what NATS carries (1 MB by default); a page stops early instead, and the cursor goes on from there.
 */
export const EXECUTIONS_PAGE_BYTES = 256 * 1024;

/**
 * Newest first, paged by an opaque cursor over the row's sequence number. New rows get higher numbers,
 * so paging down while runs arrive never repeats or skips a row already behind the cursor.
 */
@Injectable()
export class ExecutionsQuery {
  constructor(private readonly executions: ExecutionStore) {}

  async list(request: ListExecutionsRequest): Promise<ListExecutionsReply> {
    const query = this.pageQuery(request);
    const [rows, total] = await Promise.all([query.getMany(), request.includeTotal === true ? this.executions.count(request) : null]);
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
    const query = this.executions
      .filtered(request)
      .orderBy('e.seq', 'DESC')
      .limit(request.limit + 1);
    if (request.cursor !== null) query.andWhere('e.seq < :before', { before: decodeCursor(request.cursor) });
    return query;
  }

  /** The count's statement, for a plan to be read. */
  countStatement(request: ListExecutionsRequest): [string, unknown[]] {
    return this.executions.countStatement(request);
  }

  /**
   * The state one execution was called with, kept as `{ state }` where its version stores inputs. Only the
   * application API asks, for a person who may edit the decision to try that state again in the playground.
   */
  async input(request: ExecutionInputRequest): Promise<ExecutionInputReply> {
    if (!looksLikeId('exec', request.executionId)) throw noSuchExecution();
    const row = await this.executions.input(request.workspaceId, request.executionId);
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
    const rows = await this.executions.billable(request.workspaceId, request.executionIds);
    const known = new Map(rows.map((row) => [row.id, row.billable]));
    return {
      outcomes: Object.fromEntries(request.executionIds.map((id) => [id, known.has(id) ? (known.get(id) ? 'billable' : 'not_billable') : 'unknown'] as const)),
      decisions: Object.fromEntries(rows.map((row) => [row.id, row.decision_id])),
    };
  }

  /** The billable executions that took a unit of the lease, found through the workspace's time index. */
  async leaseExecutions(request: LeaseExecutionsRequest): Promise<LeaseExecutionsReply> {
    const rows = await this.executions.leaseExecutions(request.workspaceId, request.leaseId, request.from, request.to);
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

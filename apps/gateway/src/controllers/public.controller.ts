import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import {
  ERROR_STATUS,
  EXECUTION_REASONS,
  EXECUTION_SOURCE_GROUPS,
  EXECUTION_STATUSES,
  EXECUTIONS_CURSOR_MAX_LENGTH,
  ExecutionSourceGroup,
  EXECUTIONS_PAGE,
  RunDecisionReply,
  RunDecisionRequest,
  ServiceError,
  SUBJECTS,
  ValidationIssue,
} from '@ds/contracts';
import { ACTIONS, isValidSlug, parseVersionText } from '@ds/decision-schema';
import { JsonText, parseIdempotencyKey, PLATFORM, RpcClient } from '@ds/platform';
import { AuthenticatedKey } from '../auth/api-keys.service';
import { GatewayConfig } from '../config';
import { ApiKey, ApiKeyRoute, PublicRoute, RunRoute } from '../http/access';
import { parseDecisionVersion } from '../http/decision-version';
import { objectBody, RequestId } from '../http/request-lifecycle';
import { requestFingerprint } from '../idempotency/fingerprint';
import { IdempotencyService, StillRunning } from '../idempotency/idempotency.service';
import { accountBody } from '../workspaces/account';
import { WorkspacesService } from '../workspaces/workspaces.service';

@Controller()
export class PublicController {
  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    private readonly idempotency: IdempotencyService,
    private readonly workspaces: WorkspacesService,
    @Inject(PLATFORM.config) private readonly config: GatewayConfig,
  ) {}

  @Get('health')
  @PublicRoute()
  health() {
    return { status: 'ok' };
  }

  @Post('v1/decisions/:slug')
  @RunRoute('slug')
  @HttpCode(200)
  async run(
    @ApiKey() key: AuthenticatedKey,
    @RequestId() requestId: string,
    @Param('slug') slug: string,
    @Query('include') include: string | string[] | undefined,
    @Headers('content-type') contentType: string | undefined,
    @Headers('idempotency-key') idempotencyHeader: string | undefined,
    @Headers('decision-version') versionHeader: string | string[] | undefined,
    @Body() rawBody: unknown,
    @Req() httpRequest: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    if (!contentType || !/^application\/json\s*(;|$)/i.test(contentType)) {
      throw new ServiceError('INVALID_REQUEST', 'Content-Type must be application/json.');
    }
    const body = objectBody(rawBody);
    const idempotencyKey = parseIdempotencyKey(idempotencyHeader);
    const version = parseDecisionVersion(versionHeader);
    const run = {
      workspaceId: key.workspaceId,
      slug,
      // The body goes on as the text it arrived as (the parser validated it), not serialised a second time.
      body: httpRequest.rawBody === null ? body : new JsonText(httpRequest.rawBody),
      includeProbabilities: includes(include, 'probabilities'),
      source: 'api' as const,
      livemode: key.mode === 'live',
      apiKeyId: key.keyId,
      version,
    };
    // The runner's response text is what the client gets, and what a replay sends again.
    reply.header('content-type', 'application/json; charset=utf-8');
    if (idempotencyKey === undefined) return (await this.runDecision(run, requestId)).body;

    // A pinned version is part of the request: the same key with another version is another request.
    const fingerprint = requestFingerprint('POST', httpRequest.url, body, version === null ? [] : [`decision-version:${version}`]);
    try {
      const outcome = await this.idempotency.runOnce(key.workspaceId, idempotencyKey, fingerprint, async () => {
        const result = await this.runDecision(run, requestId);
        // Engine-error fallbacks are answered but not kept: a retry may find the engine back.
        return { body: result.body, keep: result.billable };
      });
      if (outcome.replayed) reply.header('idempotent-replayed', 'true');
      return outcome.body;
    } catch (error) {
      if (error instanceof StillRunning) reply.header('retry-after', '1');
      throw error;
    }
  }

  private runDecision(run: Omit<RunDecisionRequest, 'body'> & { body: RunDecisionRequest['body'] | JsonText }, requestId: string): Promise<RunDecisionReply> {
    return this.rpc.call(SUBJECTS.runner.run, run, { timeoutMs: this.config.runReplyTimeoutMs, requestId });
  }

  @Get('v1/decisions')
  @ApiKeyRoute('reads')
  listDecisions(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string) {
    return this.rpc.call(SUBJECTS.runner.listDecisions, { workspaceId: key.workspaceId }, { requestId });
  }

  @Get('v1/decisions/:slug')
  @ApiKeyRoute('reads')
  getDecision(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Param('slug') slug: string) {
    if (!isValidSlug(slug)) throw new ServiceError('DECISION_NOT_FOUND', 'No decision with this slug in this workspace.');
    return this.rpc.call(SUBJECTS.runner.getContract, { workspaceId: key.workspaceId, slug }, { requestId });
  }

  @Get('v1/me')
  @ApiKeyRoute('reads')
  me(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string) {
    return accountBody(this.workspaces, this.rpc, key, requestId);
  }

  @Get('v1/executions')
  @ApiKeyRoute('reads')
  listExecutions(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.listExecutions, { workspaceId: key.workspaceId, ...executionQuery(query) }, { requestId });
  }

  /** The customer's system reports what turned out to be right; a repeat replaces the earlier outcome. */
  @Post('v1/executions/:id/outcome')
  @ApiKeyRoute('outcomes')
  @HttpCode(200)
  recordOutcome(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.rpc.call(SUBJECTS.runner.recordOutcome, { workspaceId: key.workspaceId, executionId: id, body: objectBody(body) }, { requestId });
  }
}

export function includes(include: string | string[] | undefined, wanted: string): boolean {
  const values = Array.isArray(include) ? include : include === undefined ? [] : [include];
  return values.some((value) => value.split(',').some((part) => part.trim() === wanted));
}

/**
 * `limit` (1..100, default 20), `cursor`, `decision` (slug) and `status` (success or error), as Stripe-style list
 * parameters; `include=trace` adds each execution's trace (other include values are ignored, as on the run endpoint).
 * Added filters: `source` (groups, comma-separated or repeated; `all` for every one), `version`, `action`, `reason`
 * (an `action_reason.type`) and `error_code`; `include=total_count` adds the bounded count of what matches.
 * `defaultSources` is what an absent `source` lists: every source on the public API, live runs in the application.
 */
export function executionQuery(query: Record<string, unknown>, defaultSources: ExecutionSourceGroup[] | null = null) {
  const issues: ValidationIssue[] = [];
  let limit: number = EXECUTIONS_PAGE.default;
  if (query.limit !== undefined) {
    limit = typeof query.limit === 'string' && /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= EXECUTIONS_PAGE.min && limit <= EXECUTIONS_PAGE.max))
      issues.push({ path: 'limit', message: `must be an integer from ${EXECUTIONS_PAGE.min} to ${EXECUTIONS_PAGE.max}` });
  }
  const cursor = query.cursor;
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > EXECUTIONS_CURSOR_MAX_LENGTH))
    issues.push({ path: 'cursor', message: 'is not a valid cursor' });
  const decision = query.decision;
  if (decision !== undefined && typeof decision !== 'string') issues.push({ path: 'decision', message: 'must be a decision slug' });
  const status = query.status;
  if (status !== undefined && !EXECUTION_STATUSES.includes(status as never))
    issues.push({ path: 'status', message: `must be ${EXECUTION_STATUSES.join(' or ')}` });
  const sources = sourceGroups(query.source, defaultSources, issues);
  let version: number | null = null;
  if (query.version !== undefined) {
    const parsed = parseVersionText(query.version, 'version');
    if (parsed.ok) version = parsed.value;
    else issues.push(parsed.issue);
  }
  const action = oneOf(query.action, 'action', ACTIONS, issues);
  const reason = oneOf(query.reason, 'reason', EXECUTION_REASONS, issues);
  const errorCode = oneOf(query.error_code, 'error_code', Object.keys(ERROR_STATUS), issues);
  if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', issues);
  const include = query.include as string | string[] | undefined;
  return {
    limit,
    cursor: (cursor as string | undefined) ?? null,
    decision: (decision as string | undefined) ?? null,
    status: (status as (typeof EXECUTION_STATUSES)[number] | undefined) ?? null,
    includeTrace: includes(include, 'trace'),
    sources,
    version,
    action,
    reason,
    errorCode,
    includeTotal: includes(include, 'total_count'),
  };
}

/** A filter that takes one value of a fixed list; a repeated parameter is refused like a value not in the list. */
function oneOf(value: unknown, path: string, allowed: readonly string[], issues: ValidationIssue[]): string | null {
  if (value === undefined) return null;
  if (typeof value === 'string' && allowed.includes(value)) return value;
  issues.push({ path, message: `must be one of ${allowed.join(', ')}` });
  return null;
}

/** `source=live,replay` or `source=live&source=replay`; `all` lists every source; null means every source. */
function sourceGroups(value: unknown, defaults: ExecutionSourceGroup[] | null, issues: ValidationIssue[]): ExecutionSourceGroup[] | null {
  if (value === undefined) return defaults;
  const texts = Array.isArray(value) ? value : [value];
  const parts = texts.every((text) => typeof text === 'string') ? (texts as string[]).flatMap((text) => text.split(',')) : [];
  const allowed: readonly string[] = [...EXECUTION_SOURCE_GROUPS, 'all'];
  if (parts.length === 0 || parts.some((part) => !allowed.includes(part))) {
    issues.push({ path: 'source', message: `must be one or more of ${allowed.join(', ')}, separated by commas` });
    return null;
  }
  if (parts.includes('all')) return null;
  return EXECUTION_SOURCE_GROUPS.filter((group) => parts.includes(group));
}

import { Controller, Delete, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { DecisionRef, HookChangeReply, ResolvedHook, RpcSubject, RunDecisionRequest, ServiceError, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { GatewayConfig } from '../config';
import { HookRoute, MemberWorkspace, SecretUrl, WorkspaceRole } from '../http/access';
import { RequestId } from '../http/request-lifecycle';
import { hookRunBody } from '../hooks/hook-body';
import { HookTokens } from '../hooks/hook-tokens';
import { HookProofLimits } from '../hooks/proof-limits';
import { verifyProof } from '../hooks/proof';
import { RateLimiter } from '../limits/rate-limiter';
import { allowed, rateLimitHeaders, retryAfterSeconds } from '../limits/windows';
import { includes } from './public.controller';

/** The secret-URL trigger (`POST /v1/hooks/{token}`) and the application's switches for it. */
@Controller()
export class HooksController {
  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.config) private readonly config: GatewayConfig,
    private readonly tokens: HookTokens,
    private readonly proofLimits: HookProofLimits,
    private readonly rateLimiter: RateLimiter,
  ) {}

  /**
   * After the token (404, in the edge): the proof of the secret over the body as sent (401; too many wrong
   * ones 429), then the workspace's webhooks window (429, and from here on the rate-limit headers), then
   * the body (400); the runner does the rest as for the run endpoint. No Idempotency-Key: a retry runs again.
   */
  @Post('v1/hooks/:token')
  @HookRoute('token')
  @HttpCode(200)
  async trigger(
    @SecretUrl() hook: ResolvedHook,
    @RequestId() requestId: string,
    @Query('include') include: string | string[] | undefined,
    @Headers('content-type') contentType: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const raw = request.rawBody;
    if (hook.secret !== null) {
      const signature = request.headers['service-signature'];
      const proof = verifyProof({
        secret: hook.secret,
        signature: Array.isArray(signature) ? signature.join(',') : signature,
        authorization: request.headers.authorization,
        body: raw ?? '',
        nowSeconds: Math.floor(Date.now() / 1000),
      });
      if (!proof.ok) {
        await this.proofLimits.wrongProof(hook.decisionId);
        throw new ServiceError('UNAUTHORIZED', proof.message);
      }
    }

    const window = await this.rateLimiter.count(hook.workspaceId, 'webhooks', requestId);
    const now = Math.floor(Date.now() / 1000);
    reply.headers(rateLimitHeaders(window, now));
    if (!allowed(window)) {
      reply.header('retry-after', String(retryAfterSeconds(window, now)));
      throw new ServiceError('RATE_LIMITED', `The workspace's secret URLs used their ${window.limit} calls of this minute; retry after the window resets.`);
    }

    const run: RunDecisionRequest = {
      workspaceId: hook.workspaceId,
      slug: hook.slug,
      body: { ...hookRunBody(contentType, raw) },
      includeProbabilities: includes(include, 'probabilities'),
      source: 'webhook',
      livemode: true,
      apiKeyId: null,
    };
    const result = await this.rpc.call(SUBJECTS.runner.run, run, { timeoutMs: this.config.runReplyTimeoutMs, requestId });
    reply.header('content-type', 'application/json; charset=utf-8');
    return result.body;
  }

  @Get('app/v1/workspaces/:ws/decisions/:id/hook')
  @WorkspaceRole('viewer')
  async state(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    const state = await this.rpc.call(SUBJECTS.runner.hookState, { workspaceId: ws, decisionId: id }, { requestId });
    return {
      enabled: state.enabled,
      secret_set: state.secretSet,
      enabled_at: state.enabledAt,
      changed_at: state.changedAt,
      last_call_at: state.lastCallAt,
    };
  }

  @Post('app/v1/workspaces/:ws/decisions/:id/hook')
  @WorkspaceRole('member')
  async enable(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    const changed = await this.change(SUBJECTS.runner.enableHook, { workspaceId: ws, decisionId: id }, requestId);
    return this.urlOf(changed);
  }

  @Delete('app/v1/workspaces/:ws/decisions/:id/hook')
  @WorkspaceRole('member')
  @HttpCode(204)
  async disable(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    await this.change(SUBJECTS.runner.disableHook, { workspaceId: ws, decisionId: id }, requestId);
  }

  @Post('app/v1/workspaces/:ws/decisions/:id/hook/rotate')
  @WorkspaceRole('admin')
  @HttpCode(200)
  async rotate(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    const changed = await this.change(SUBJECTS.runner.rotateHook, { workspaceId: ws, decisionId: id }, requestId);
    return this.urlOf(changed);
  }

  @Post('app/v1/workspaces/:ws/decisions/:id/hook/secret')
  @WorkspaceRole('admin')
  async createSecret(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    const changed = await this.change(SUBJECTS.runner.createHookSecret, { workspaceId: ws, decisionId: id }, requestId);
    return { secret: changed.secret };
  }

  @Delete('app/v1/workspaces/:ws/decisions/:id/hook/secret')
  @WorkspaceRole('admin')
  @HttpCode(204)
  async deleteSecret(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    await this.change(SUBJECTS.runner.deleteHookSecret, { workspaceId: ws, decisionId: id }, requestId);
  }

  private async change(subject: RpcSubject<DecisionRef, HookChangeReply>, ref: DecisionRef, requestId: string): Promise<HookChangeReply> {
    const changed = await this.rpc.call(subject, ref, { requestId });
    await this.tokens.changed(changed.dropped);
    return changed;
  }

  private urlOf(changed: HookChangeReply): { url: string; token: string } {
    const token = changed.token!;
    return { url: `${this.config.baseUrl}/v1/hooks/${token}`, token };
  }
}

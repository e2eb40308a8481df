import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { EmbedSessionView, PartnerCaller, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKey, ApiKeyRoute, EmbedSession, EmbedSessionRoute } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';
import { WorkspacesService } from '../workspaces/workspaces.service';

function partnerCaller(key: AuthenticatedKey): PartnerCaller {
  return { partnerWorkspaceId: key.workspaceId, authorId: key.authorId, livemode: key.mode === 'live' };
}

/**
 * Partner mode: sub-workspaces and embed sessions, answered by the partner service. The gateway adds what it
 * owns: the caller's key (workspace, author, mode) and the sub-workspaces' rows in its workspaces table.
 */
@Controller()
export class PartnerController {
  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    private readonly workspaces: WorkspacesService,
  ) {}

  @Post('v1/workspaces')
  @ApiKeyRoute('reads')
  async upsertWorkspace(
    @ApiKey() key: AuthenticatedKey,
    @RequestId() requestId: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const answer = await this.rpc.call(SUBJECTS.partner.upsertWorkspace, { caller: partnerCaller(key), body: objectBody(body) }, { requestId });
    await this.workspaces.ensureSubWorkspace(answer.workspace);
    reply.status(answer.created ? 201 : 200);
    return answer.workspace;
  }

  @Get('v1/workspaces')
  @ApiKeyRoute('reads')
  listWorkspaces(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.partner.listWorkspaces, { caller: partnerCaller(key), query: { ...query } }, { requestId });
  }

  @Get('v1/workspaces/:ref')
  @ApiKeyRoute('reads')
  getWorkspace(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Param('ref') ref: string) {
    return this.rpc.call(SUBJECTS.partner.getWorkspace, { caller: partnerCaller(key), ref }, { requestId });
  }

  @Patch('v1/workspaces/:ref')
  @ApiKeyRoute('reads')
  async updateWorkspace(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Param('ref') ref: string, @Body() body: unknown) {
    const workspace = await this.rpc.call(SUBJECTS.partner.updateWorkspace, { caller: partnerCaller(key), ref, body: objectBody(body) }, { requestId });
    await this.workspaces.ensureSubWorkspace(workspace);
    return workspace;
  }

  /** 204 once the deletion is announced; every service holding the workspace's rows removes them from the event. */
  @Delete('v1/workspaces/:ref')
  @ApiKeyRoute('reads')
  @HttpCode(204)
  async deleteWorkspace(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Param('ref') ref: string) {
    await this.rpc.call(SUBJECTS.partner.deleteWorkspace, { caller: partnerCaller(key), ref }, { requestId });
  }

  @Post('v1/embed/sessions')
  @ApiKeyRoute('reads')
  async createEmbedSession(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Body() body: unknown) {
    const session = await this.rpc.call(SUBJECTS.partner.createEmbedSession, { caller: partnerCaller(key), body: objectBody(body) }, { requestId });
    await this.workspaces.ensureSubWorkspace(session.workspace);
    return session;
  }

  @Post('v1/embed/sessions/revoke')
  @ApiKeyRoute('reads')
  @HttpCode(200)
  revokeEmbedSessions(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Body() body: unknown) {
    return this.rpc.call(SUBJECTS.partner.revokeEmbedSessions, { caller: partnerCaller(key), body: objectBody(body) }, { requestId });
  }

  @Delete('v1/embed/sessions/:id')
  @ApiKeyRoute('reads')
  @HttpCode(204)
  async closeEmbedSession(@ApiKey() key: AuthenticatedKey, @RequestId() requestId: string, @Param('id') id: string) {
    await this.rpc.call(SUBJECTS.partner.closeEmbedSession, { caller: partnerCaller(key), id }, { requestId });
  }

  /** The embedded editor's view of its own session: what it may show and do. */
  @Get('app/v1/embed/session')
  @EmbedSessionRoute()
  embedSession(@EmbedSession() session: EmbedSessionView) {
    return {
      id: session.id,
      workspace_id: session.workspaceId,
      user: session.user,
      permissions: session.permissions,
      origins: session.origins,
      start_path: session.startPath,
      locale: session.locale,
      theme: session.theme,
      expires_at: session.expiresAt,
    };
  }
}

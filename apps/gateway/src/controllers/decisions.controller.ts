import { Body, Controller, Get, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';
import { ENDPOINT_BODY, parseBody, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';

/** Decisions and their drafts, the public endpoint's switch, and the playground that runs a draft or a version. */
@Controller('app/v1/workspaces/:ws/decisions')
export class DecisionsController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  @Get()
  @WorkspaceRole('viewer', 'decisions:read')
  async listDecisions(@RequestId() requestId: string, @MemberWorkspace() ws: string) {
    return this.rpc.call(SUBJECTS.runner.listDecisions, { workspaceId: ws }, { requestId });
  }

  @Post()
  @WorkspaceRole('member', 'decisions:write')
  async createDecision(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Body() body: unknown) {
    const input = objectBody(body);
    return this.rpc.call(
      SUBJECTS.runner.createDecision,
      { workspaceId: ws, slug: input.slug, name: input.name, description: input.description, schema: input.schema },
      { requestId },
    );
  }

  @Put(':id/draft')
  @WorkspaceRole('member', 'decisions:write')
  async saveDraft(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    const input = objectBody(body);
    return this.rpc.call(SUBJECTS.runner.saveDraft, { workspaceId: ws, decisionId: id, schema: input.schema, revision: input.revision }, { requestId });
  }

  @Put(':id/endpoint')
  @WorkspaceRole('admin', 'decisions:deploy')
  async setEndpoint(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    return this.rpc.call(
      SUBJECTS.runner.setEndpoint,
      { workspaceId: ws, decisionId: id, enabled: parseBody(ENDPOINT_BODY, body, 'enabled must be a boolean.').enabled },
      { requestId },
    );
  }

  /** `:id` is the decision's id or its slug: embed start paths name decisions by id, the application's links by slug. */
  @Get(':id')
  @WorkspaceRole('viewer', 'decisions:read')
  getDecision(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.getDecision, { workspaceId: ws, decision: id }, { requestId });
  }

  @Post(':id/playground')
  @WorkspaceRole('member', 'decisions:write')
  @HttpCode(200)
  playground(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Body() body: unknown) {
    const input = objectBody(body);
    // A 429's details.retryAfter becomes its Retry-After where every error is answered.
    return this.rpc.call(SUBJECTS.runner.playground, { workspaceId: ws, decisionId: id, version: input.version ?? null, state: input.state }, { requestId });
  }
}

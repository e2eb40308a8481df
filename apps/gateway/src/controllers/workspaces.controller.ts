import { Body, Controller, Delete, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { parseBody, SUBJECTS, WORKSPACE_BODY } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, SignedIn, UserId, WorkspaceRole } from '../http/access';
import { RequestId } from '../http/request-lifecycle';
import { WorkspaceDeletionService } from '../workspaces/workspace-deletion.service';
import { WorkspacesService } from '../workspaces/workspaces.service';

/** A user's workspaces, each with its plan as the ledger's account names it. */
@Controller('app/v1/workspaces')
export class WorkspacesController {
  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly deletion: WorkspaceDeletionService,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
  ) {}

  @Post()
  @SignedIn()
  async createWorkspace(@UserId() userId: string, @RequestId() requestId: string, @Body() body: unknown) {
    const workspace = await this.workspaces.create(userId, parseBody(WORKSPACE_BODY, body, 'The workspace name must be 1 to 80 characters.').name);
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId: workspace.id }, { requestId });
    return { ...workspace, plan: account.plan.name };
  }

  @Get()
  @SignedIn()
  listWorkspaces(@UserId() userId: string) {
    return this.workspaces.ofUser(userId);
  }

  @Get(':ws')
  @WorkspaceRole('viewer')
  async getWorkspace(@MemberWorkspace() ws: string, @RequestId() requestId: string) {
    const workspace = await this.workspaces.describe(ws);
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId: ws }, { requestId });
    return { ...workspace, plan: account.plan.name, account };
  }

  @Delete(':ws')
  @WorkspaceRole('owner')
  @HttpCode(204)
  async deleteWorkspace(@MemberWorkspace() ws: string, @RequestId() requestId: string) {
    await this.deletion.delete(ws, requestId);
  }
}

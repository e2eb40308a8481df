import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { Deployer, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { ActingUser, objectBody, RequestId } from '../http/request-lifecycle';

/** A decision's shadow: a second version run beside the active one on a share of live runs; like deploy, Admin. */
@Controller('app/v1/workspaces/:ws/decisions/:id/shadow')
export class ShadowController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  /** The decision's shadow and its comparison with the active version. */
  @Get()
  @WorkspaceRole('admin', 'decisions:deploy')
  getShadow(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.getShadow, { workspaceId: ws, decisionId: id }, { requestId });
  }

  /** Starts a shadow (`{ rate, version? }`; without a version the draft is deployed as the shadow) or changes its rate. */
  @Post()
  @WorkspaceRole('admin', 'decisions:deploy')
  async startShadow(
    @RequestId() requestId: string,
    @MemberWorkspace() ws: string,
    @Param('id') id: string,
    @Body() body: unknown,
    @ActingUser() startedBy: Deployer | null,
  ) {
    const input = objectBody(body);
    return this.rpc.call(SUBJECTS.runner.startShadow, { workspaceId: ws, decisionId: id, version: input.version, rate: input.rate, startedBy }, { requestId });
  }

  /** Makes the shadow's version the active one: a deploy of that version. */
  @Post('promote')
  @WorkspaceRole('admin', 'decisions:deploy')
  async promoteShadow(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @ActingUser() deployedBy: Deployer | null) {
    return this.rpc.call(SUBJECTS.runner.promoteShadow, { workspaceId: ws, decisionId: id, deployedBy }, { requestId });
  }

  @Delete()
  @WorkspaceRole('admin', 'decisions:deploy')
  @HttpCode(204)
  async stopShadow(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string): Promise<void> {
    await this.rpc.call(SUBJECTS.runner.stopShadow, { workspaceId: ws, decisionId: id }, { requestId });
  }
}

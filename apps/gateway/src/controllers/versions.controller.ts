import { Body, Controller, Get, Inject, Param, Post, Query } from '@nestjs/common';
import { Deployer, deployNote, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { ActingUser, RequestId } from '../http/request-lifecycle';

/** Deploying a draft, the version history, comparing and reviewing versions, rolling back: Admin, or `decisions:deploy`. */
@Controller('app/v1/workspaces/:ws/decisions/:id')
export class VersionsController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  @Post('deploy')
  @WorkspaceRole('admin', 'decisions:deploy')
  async deploy(
    @RequestId() requestId: string,
    @MemberWorkspace() ws: string,
    @Param('id') id: string,
    @ActingUser() deployedBy: Deployer | null,
    @Body() body: unknown,
  ) {
    const note = deployNote(body);
    return this.rpc.call(SUBJECTS.runner.deploy, { workspaceId: ws, decisionId: id, deployedBy, note }, { requestId });
  }

  /** Every deployed version, newest first, with who deployed it and its contract changes; like deploy, Admin. */
  @Get('versions')
  @WorkspaceRole('admin', 'decisions:deploy')
  listVersions(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.listVersions, { workspaceId: ws, decisionId: id }, { requestId });
  }

  /** Two versions side by side: both schemas, the schema diff and the contract diff (`?from=N&to=M`). */
  @Get('versions/compare')
  @WorkspaceRole('admin', 'decisions:deploy')
  compareVersions(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.compareVersions, { workspaceId: ws, decisionId: id, from: query.from, to: query.to }, { requestId });
  }

  /**
   * What deploying the draft, or rolling back to `?version=N`, would change against the active version, in the
   * editor's words, with the headers that name a secret the workspace does not have.
   */
  @Get('review')
  @WorkspaceRole('admin', 'decisions:deploy')
  reviewVersion(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.reviewVersion, { workspaceId: ws, decisionId: id, version: query.version }, { requestId });
  }

  /** Deploys a copy of an earlier version as the next version. */
  @Post('versions/:version/rollback')
  @WorkspaceRole('admin', 'decisions:deploy')
  async rollback(
    @RequestId() requestId: string,
    @MemberWorkspace() ws: string,
    @Param('id') id: string,
    @Param('version') version: string,
    @ActingUser() deployedBy: Deployer | null,
  ) {
    return this.rpc.call(SUBJECTS.runner.rollback, { workspaceId: ws, decisionId: id, version, deployedBy }, { requestId });
  }
}

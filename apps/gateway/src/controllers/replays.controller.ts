import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { Deployer, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { ActingUser, RequestId } from '../http/request-lifecycle';

/**
 * Replays of a draft or a deployed version against the decision's past executions. Like deploy and the version
 * history, Admin (an embed session needs `decisions:deploy`): a replay spends engine calls.
 */
@Controller('app/v1/workspaces/:ws/decisions/:id/replays')
export class ReplaysController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  /** `{ version: N | null, last: N }` or `{ version, from, to }`; 201 with the replay, which runs in the background. */
  @Post()
  @WorkspaceRole('admin', 'decisions:deploy')
  async start(
    @RequestId() requestId: string,
    @MemberWorkspace() ws: string,
    @Param('id') id: string,
    @Body() body: unknown,
    @ActingUser() startedBy: Deployer | null,
  ) {
    // The daily cap is the plan's; the runner checks the body.
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId: ws }, { requestId });
    return this.rpc.call(
      SUBJECTS.runner.startReplay,
      { workspaceId: ws, decisionId: id, body: body ?? null, plan: account.plan.name, startedBy },
      { requestId },
    );
  }

  /** The decision's last 20 replays, newest first, each with its progress and result. */
  @Get()
  @WorkspaceRole('admin', 'decisions:deploy')
  list(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.listReplays, { workspaceId: ws, decisionId: id }, { requestId });
  }

  /**
   * How many executions a replay of `?last=N` or `?from=…&to=…` would take (they kept their input), and how many
   * in it did not: asked while the selection is chosen, before anything is spent.
   */
  @Get('eligible')
  @WorkspaceRole('admin', 'decisions:deploy')
  eligible(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.replayEligible, { workspaceId: ws, decisionId: id, query: { ...query } }, { requestId });
  }

  /** Progress and result so far: what a client polls while the replay runs. */
  @Get(':replay')
  @WorkspaceRole('admin', 'decisions:deploy')
  get(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Param('replay') replay: string) {
    return this.rpc.call(SUBJECTS.runner.getReplay, { workspaceId: ws, decisionId: id, replayId: replay }, { requestId });
  }

  /** Each replayed execution, old and new action and answers (`?after=<position>&limit=1..200`). */
  @Get(':replay/executions')
  @WorkspaceRole('admin', 'decisions:deploy')
  executions(
    @RequestId() requestId: string,
    @MemberWorkspace() ws: string,
    @Param('id') id: string,
    @Param('replay') replay: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.rpc.call(
      SUBJECTS.runner.replayExecutions,
      { workspaceId: ws, decisionId: id, replayId: replay, after: query.after, limit: query.limit },
      { requestId },
    );
  }

  @Post(':replay/cancel')
  @WorkspaceRole('admin', 'decisions:deploy')
  @HttpCode(200)
  cancel(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Param('replay') replay: string) {
    return this.rpc.call(SUBJECTS.runner.cancelReplay, { workspaceId: ws, decisionId: id, replayId: replay }, { requestId });
  }
}

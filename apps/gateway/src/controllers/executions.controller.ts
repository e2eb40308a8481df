import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { RequestId } from '../http/request-lifecycle';
import { executionQuery } from './public.controller';

/** The execution log as the application reads it: the list, one execution's input, a decision's charts. */
@Controller('app/v1/workspaces/:ws')
export class ExecutionsController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  /** Charts of one decision over `from`..`to` (ISO 8601; the last 24 hours by default), read from the runner's rollups. */
  @Get('decisions/:id/overview')
  @WorkspaceRole('viewer', 'executions:read')
  decisionOverview(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return this.rpc.call(SUBJECTS.runner.decisionOverview, { workspaceId: ws, decision: id, from: query.from, to: query.to }, { requestId });
  }

  @Get('executions')
  @WorkspaceRole('viewer', 'executions:read')
  listExecutions(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Query() query: Record<string, unknown>) {
    // A person reading the list is looking at callers' runs first; the other sources are a filter away.
    return this.rpc.call(SUBJECTS.runner.listExecutions, { workspaceId: ws, ...executionQuery(query, ['live']) }, { requestId });
  }

  /** The state an execution was called with (where its version stores inputs), to try again in the playground. */
  @Get('executions/:id/input')
  @WorkspaceRole('member', 'decisions:write')
  executionInput(@RequestId() requestId: string, @MemberWorkspace() ws: string, @Param('id') id: string) {
    return this.rpc.call(SUBJECTS.runner.executionInput, { workspaceId: ws, executionId: id }, { requestId });
  }
}

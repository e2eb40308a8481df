import { Body, Controller, Get, Inject, Put } from '@nestjs/common';
import { parseBody, SPEND_CAP_BODY, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { MemberWorkspace, WorkspaceRole } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';

/** The workspace's usage and the settings its account at the ledger keeps: how long executions are kept, the spend cap. */
@Controller('app/v1/workspaces/:ws')
export class BillingController {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  /** The account (as `GET /v1/me` gives it) with the period's billed decisions per day, from the ledger's own entries. */
  @Get('usage')
  @WorkspaceRole('viewer')
  usageByDay(@MemberWorkspace() ws: string, @RequestId() requestId: string) {
    return this.rpc.call(SUBJECTS.billing.usageByDay, { workspaceId: ws }, { requestId });
  }

  /** How long the execution log is kept: the plan's, or less by the workspace's own setting. */
  @Get('execution-retention')
  @WorkspaceRole('viewer')
  executionRetention(@MemberWorkspace() ws: string, @RequestId() requestId: string) {
    return this.rpc.call(SUBJECTS.billing.getExecutionRetention, { workspaceId: ws }, { requestId });
  }

  @Put('execution-retention')
  @WorkspaceRole('admin')
  setExecutionRetention(@MemberWorkspace() ws: string, @RequestId() requestId: string, @Body() body: unknown) {
    // The ledger checks `days` against the plan; a missing one arrives as undefined and is refused there.
    return this.rpc.call(SUBJECTS.billing.setExecutionRetention, { workspaceId: ws, days: objectBody(body).days }, { requestId });
  }

  /**
   * The Owner's own cap on what the workspace spends past its included volume per billing cycle (the spec: billing
   * needs the Owner); operators set the same through /admin/v1. Answers the account, as GET workspaces/:ws shows it.
   */
  @Put('spend-cap')
  @WorkspaceRole('owner')
  setSpendCap(@MemberWorkspace() ws: string, @RequestId() requestId: string, @Body() body: unknown) {
    const { spend_cap_cents } = parseBody(SPEND_CAP_BODY, body, 'The spend cap is not valid.');
    return this.rpc.call(SUBJECTS.billing.setSpendCap, { workspaceId: ws, spend_cap_cents }, { requestId });
  }
}

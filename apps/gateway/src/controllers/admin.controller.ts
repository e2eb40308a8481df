import { Body, Controller, Headers, Inject, Param, Post, Put } from '@nestjs/common';
import { CREDIT_GRANT_BODY, parseValue, PLAN_NAMES, ServiceError, SPEND_CAP_BODY, SUBJECTS } from '@ds/contracts';
import { newId } from '@ds/ids';
import { parseIdempotencyKey, PLATFORM, RpcClient } from '@ds/platform';
import { OperatorRoute } from '../http/access';
import { objectBody, RequestId } from '../http/request-lifecycle';
import { WorkspacesService } from '../workspaces/workspaces.service';

/** The plan that costs nothing; every other one is paid. */
const FREE_PLAN = 'genesis';

/** Operator endpoints: they stand in for the payment provider and support staff of a self-hosted install. */
@Controller('admin/v1')
export class AdminController {
  constructor(
    private readonly workspaces: WorkspacesService,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
  ) {}

  @Put('workspaces/:ws/plan')
  @OperatorRoute()
  async setPlan(@RequestId() requestId: string, @Param('ws') ws: string, @Body() body: unknown) {
    const input = objectBody(body);
    await this.requireWorkspace(ws);
    if (typeof input.plan === 'string' && input.plan !== FREE_PLAN && (PLAN_NAMES as readonly string[]).includes(input.plan)) {
      await this.workspaces.requireVerifiedOwner(ws);
    }
    return this.rpc.call(SUBJECTS.billing.setPlan, { workspaceId: ws, plan: input.plan, overrides: input.overrides }, { requestId });
  }

  /** `Idempotency-Key` makes a grant safe to retry: the same key grants once. */
  @Post('workspaces/:ws/credits')
  @OperatorRoute()
  async grantCredits(
    @RequestId() requestId: string,
    @Param('ws') ws: string,
    @Headers('idempotency-key') idempotencyHeader: string | undefined,
    @Body() body: unknown,
  ) {
    const input = objectBody(body);
    const idempotencyKey = parseIdempotencyKey(idempotencyHeader);
    await this.requireWorkspace(ws);
    const grant = parseValue(CREDIT_GRANT_BODY, input, 'The credit grant is not valid.');
    return this.rpc.call(
      SUBJECTS.billing.grantCredits,
      { workspaceId: ws, ...grant, expires_at: grant.expires_at?.toISOString() ?? null, grantId: idempotencyKey ?? newId('ent') },
      { requestId },
    );
  }

  @Put('workspaces/:ws/spend-cap')
  @OperatorRoute()
  async setSpendCap(@RequestId() requestId: string, @Param('ws') ws: string, @Body() body: unknown) {
    const input = objectBody(body);
    await this.requireWorkspace(ws);
    const { spend_cap_cents } = parseValue(SPEND_CAP_BODY, input, 'The spend cap is not valid.');
    return this.rpc.call(SUBJECTS.billing.setSpendCap, { workspaceId: ws, spend_cap_cents }, { requestId });
  }

  /** Partner mode: sub-workspaces and embed sessions for the workspace's keys, framed by `allowed_origins`. */
  @Put('workspaces/:ws/partner')
  @OperatorRoute()
  async setPartner(@RequestId() requestId: string, @Param('ws') ws: string, @Body() body: unknown) {
    const input = objectBody(body);
    await this.requireWorkspace(ws);
    return this.rpc.call(SUBJECTS.partner.setSettings, { workspaceId: ws, enabled: input.enabled, allowed_origins: input.allowed_origins }, { requestId });
  }

  private async requireWorkspace(ws: string): Promise<void> {
    if (!(await this.workspaces.exists(ws))) throw new ServiceError('WORKSPACE_NOT_FOUND', 'No such workspace.');
  }
}

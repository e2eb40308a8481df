import { Body, Controller, Inject, Param, Put } from '@nestjs/common';
import { ServiceError, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { objectBody, RequestId } from '../http/edge';
import { RateLimiter } from '../limits/rate-limiter';
import { WorkspacesService } from '../workspaces/workspaces.service';

/** Operator endpoints: they stand in for the payment provider and support staff of a self-hosted install. */
@Controller('admin/v1')
export class AdminController {
  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly rateLimiter: RateLimiter,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
  ) {}

  @Put('workspaces/:ws/plan')
  async setPlan(@RequestId() requestId: string, @Param('ws') ws: string, @Body() body: unknown) {
    const input = objectBody(body);
    if (!(await this.workspaces.exists(ws))) throw new ServiceError('WORKSPACE_NOT_FOUND', 'No such workspace.');
    const account = await this.rpc.call(SUBJECTS.billing.setPlan, { workspaceId: ws, plan: input.plan, overrides: input.overrides }, { requestId });
    this.rateLimiter.planChanged(ws);
    return account;
  }
}

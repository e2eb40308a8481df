import { Inject, Injectable } from '@nestjs/common';
import { PlanName, ServiceError, SUBJECTS } from '@ds/contracts';
import { PLATFORM, RpcClient } from '@ds/platform';
import { ApiKeysService } from '../auth/api-keys.service';
import { WorkspacesService } from './workspaces.service';

/** The plan every workspace starts on and goes back to; any other is a paid subscription. */
const UNPAID_PLAN: PlanName = 'genesis';

/**
 * The Owner deletes a workspace. Each service removes its own rows when the deletion is announced on
 * WORKSPACE_EVENTS; the gateway removes its rows at once as well, so the workspace is gone from the caller's
 * next request rather than when the gateway's consumer gets to it.
 */
@Injectable()
export class WorkspaceDeletionService {
  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly apiKeys: ApiKeysService,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
  ) {}

  async delete(workspaceId: string, requestId: string): Promise<void> {
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId }, { requestId });
    if (account.plan.name !== UNPAID_PLAN) {
      throw new ServiceError(
        'CONFLICT',
        `The workspace has a live ${account.plan.name} subscription; it must be back on the ${UNPAID_PLAN} plan before it is deleted.`,
        { plan: account.plan.name },
      );
    }
    await this.rpc.call(SUBJECTS.partner.deleteOwnWorkspace, { workspaceId }, { requestId });
    await this.removeHere(workspaceId);
  }

  /** The gateway's rows of a deleted workspace, its API keys dropped from every replica's cache; idempotent. */
  async removeHere(workspaceId: string): Promise<void> {
    this.apiKeys.forget(await this.workspaces.purge(workspaceId));
  }
}

import { SUBJECTS } from '@ds/contracts';
import { RpcClient } from '@ds/platform';
import { AuthenticatedKey } from '../auth/api-keys.service';
import { WorkspacesService } from './workspaces.service';

/** The body of GET /v1/me (and of the MCP tool get_account): the key's workspace, the key, the plan and usage. */
export async function accountBody(workspaces: WorkspacesService, rpc: RpcClient, key: AuthenticatedKey, requestId: string) {
  const [workspace, account] = await Promise.all([
    workspaces.describe(key.workspaceId),
    rpc.call(SUBJECTS.billing.account, { workspaceId: key.workspaceId }, { requestId }),
  ]);
  return {
    workspace,
    api_key: { id: key.keyId, mode: key.mode },
    plan: account.plan,
    usage: account.usage,
    balance: account.balance,
    spend_cap: account.spend_cap,
  };
}

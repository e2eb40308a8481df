import { BROADCAST_SUBJECTS, ServiceError, SUBJECTS } from '@ds/contracts';
import { NatsLink, publishBroadcast, RpcClient } from '@ds/platform';
import { WindowCounter } from './storage';
import { WINDOW_MS, WindowName, WindowState } from './windows';

const PLAN_CACHE_MS = 30_000;
const PLAN_CHANGED_SUBJECT = BROADCAST_SUBJECTS.gatewayPlanChanged;

/**
 * Counts requests per workspace and window in a shared store, one round trip per request. The limit
 * comes from the workspace's plan, cached briefly; a plan change made through any replica is broadcast so
 * that every replica applies the new limit at once.
 */
export class RateLimiter {
  private readonly plans = new Map<string, { limit: number; at: number }>();

  constructor(
    private readonly windows: WindowCounter,
    private readonly rpc: RpcClient,
    private readonly nats: NatsLink,
    private readonly keyPrefix: string,
  ) {
    nats.connection.subscribe(PLAN_CHANGED_SUBJECT, { callback: (_error, message) => this.plans.delete(message.string()) });
  }

  async count(workspaceId: string, window: WindowName, requestId: string): Promise<WindowState> {
    const hit = this.windows.hit(`${this.keyPrefix}:rl:${workspaceId}:${window}`, window, WINDOW_MS);
    // The count does not depend on the limit, so a plan that is not cached is asked for while counting.
    const cached = this.cachedLimit(workspaceId);
    const [limit, counted] = cached === undefined ? await Promise.all([this.lookUpLimit(workspaceId, requestId), hit]) : [cached, await hit];
    return { window, limit, hits: counted.hits, resetAt: Math.floor(Date.now() / 1000) + counted.secondsLeft };
  }

  planChanged(workspaceId: string): void {
    this.plans.delete(workspaceId);
    publishBroadcast(this.nats, PLAN_CHANGED_SUBJECT, workspaceId);
  }

  private cachedLimit(workspaceId: string): number | undefined {
    const cached = this.plans.get(workspaceId);
    return cached && Date.now() - cached.at < PLAN_CACHE_MS ? cached.limit : undefined;
  }

  private async lookUpLimit(workspaceId: string, requestId: string): Promise<number> {
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId }, { requestId });
    const limit = account.plan.rate_limit_per_minute;
    if (!Number.isInteger(limit) || limit < 1) throw new ServiceError('INTERNAL_ERROR', 'The workspace plan has no usable rate limit.');
    this.plans.set(workspaceId, { limit, at: Date.now() });
    return limit;
  }
}

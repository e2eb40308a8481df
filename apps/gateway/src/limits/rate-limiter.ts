import { ThrottlerStorage } from '@nestjs/throttler';
import { AccountReply, BROADCAST_SUBJECTS, ServiceError, SUBJECTS } from '@ds/contracts';
import { NatsLink, RpcClient } from '@ds/platform';
import { WINDOW_MS, WindowName, WindowState } from './windows';

const PLAN_CACHE_MS = 30_000;
const PLAN_CHANGED_SUBJECT = BROADCAST_SUBJECTS.gatewayPlanChanged;

/**
 * Counts requests per workspace and window in a shared ThrottlerStorage. The limit comes from the
 * workspace's plan, cached briefly; a plan change made through any replica is broadcast so that every
 * replica applies the new limit at once.
 */
export class RateLimiter {
  private readonly plans = new Map<string, { limit: number; at: number }>();

  constructor(
    private readonly storage: ThrottlerStorage,
    private readonly rpc: RpcClient,
    private readonly nats: NatsLink,
    private readonly keyPrefix: string,
  ) {
    nats.connection.subscribe(PLAN_CHANGED_SUBJECT, { callback: (_error, message) => this.plans.delete(message.string()) });
  }

  async count(workspaceId: string, window: WindowName, requestId: string): Promise<WindowState> {
    const limit = await this.limitOf(workspaceId, requestId);
    // The record's block is not used: a fixed window ends when its first request is 60 s old, so the
    // decision is made here from the count alone.
    const record = await this.storage.increment(`${this.keyPrefix}:rl:${workspaceId}:${window}`, WINDOW_MS, limit, WINDOW_MS, window);
    return { window, limit, hits: record.totalHits, resetAt: Math.floor(Date.now() / 1000) + record.timeToExpire };
  }

  planChanged(workspaceId: string): void {
    this.plans.delete(workspaceId);
    this.nats.connection.publish(PLAN_CHANGED_SUBJECT, workspaceId);
  }

  private async limitOf(workspaceId: string, requestId: string): Promise<number> {
    const cached = this.plans.get(workspaceId);
    if (cached && Date.now() - cached.at < PLAN_CACHE_MS) return cached.limit;
    const account = await this.rpc.call<AccountReply>(SUBJECTS.billing.account, { workspaceId }, { requestId });
    const limit = account.plan.rate_limit_per_minute;
    if (!Number.isInteger(limit) || limit < 1) throw new ServiceError('INTERNAL_ERROR', 'The workspace plan has no usable rate limit.');
    this.plans.set(workspaceId, { limit, at: Date.now() });
    return limit;
  }
}

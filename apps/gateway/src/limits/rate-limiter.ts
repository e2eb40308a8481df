import { OnModuleDestroy } from '@nestjs/common';
import { BROADCAST_SUBJECTS, ServiceError, SUBJECTS } from '@ds/contracts';
import { BroadcastInvalidatedCache, NatsLink, natsNotices, RpcClient } from '@ds/platform';
import { WindowCounter } from './storage';
import { WINDOW_MS, windowLimit, WindowName, WindowState } from './windows';

const PLAN_CACHE_MS = 30_000;
/** Workspaces whose limit one replica keeps; the least recently counted leave first. */
const PLAN_CACHE_MAX_ENTRIES = 10_000;
const PLAN_CHANGED_SUBJECT = BROADCAST_SUBJECTS.billingPlanChanged;

/**
 * Counts requests per workspace and window in a shared store, one round trip per request. The limit
 * comes from the workspace's plan, cached briefly; the billing ledger announces every plan change, whoever
 * made it, so that every replica applies the new limit at once.
 */
export class RateLimiter implements OnModuleDestroy {
  /** Per-minute limits by workspace id. */
  private readonly limits: BroadcastInvalidatedCache<string, number>;

  constructor(
    private readonly windows: WindowCounter,
    private readonly rpc: RpcClient,
    nats: NatsLink,
    private readonly keyPrefix: string,
  ) {
    this.limits = new BroadcastInvalidatedCache({ bus: natsNotices(nats), subject: PLAN_CHANGED_SUBJECT, max: PLAN_CACHE_MAX_ENTRIES, ttlMs: PLAN_CACHE_MS });
    this.limits.listen();
  }

  onModuleDestroy(): void {
    this.limits.close();
  }

  async count(workspaceId: string, window: WindowName, requestId: string): Promise<WindowState> {
    const hit = this.windows.hit(`${this.keyPrefix}:rl:${workspaceId}:${window}`, window, WINDOW_MS);
    // The count does not depend on the limit, so a plan that is not cached is asked for while counting.
    const cached = this.limits.peek(workspaceId);
    const [planLimit, counted] = typeof cached === 'number' ? [cached, await hit] : await Promise.all([this.limitOf(workspaceId, requestId), hit]);
    return { window, planLimit, limit: windowLimit(window, planLimit), hits: counted.hits, resetAt: Math.floor(Date.now() / 1000) + counted.secondsLeft };
  }

  private limitOf(workspaceId: string, requestId: string): Promise<number> {
    return this.limits.get(workspaceId, () => this.lookUpLimit(workspaceId, requestId));
  }

  private async lookUpLimit(workspaceId: string, requestId: string): Promise<number> {
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId }, { requestId });
    const limit = account.plan.rate_limit_per_minute;
    if (!Number.isInteger(limit) || limit < 1) throw new ServiceError('INTERNAL_ERROR', 'The workspace plan has no usable rate limit.');
    return limit;
  }
}

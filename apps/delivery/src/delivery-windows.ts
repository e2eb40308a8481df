import { Counter } from 'prom-client';
import { Logger, OutageLog, redact } from '@ds/platform';
import { SlidingWindow, WindowDecision, WORKSPACE_ATTEMPTS_PER_MINUTE, WORKSPACE_WINDOW_MS } from '@ds/webhooks';
import { RedisWindow, WindowStoreUnavailable } from './redis-window';

/** An attempt may start: `startedAt` is the moment it was counted. Or it has to wait `waitMs` and ask again. */
export type WindowSlot = { startedAt: number } | { waitMs: number };

/**
 * The 600-a-minute windows of this replica's workspaces. With Redis they are counted there, across every
 * delivery replica. Without it (no REDIS_URL) each replica counts its own, which is exact with one replica
 * only. While a configured Redis is away each take is counted in this process instead: deliveries go on, and
 * the cap is per replica until Redis answers again.
 */
export class DeliveryWindows {
  private readonly outage: OutageLog;

  constructor(
    private readonly shared: RedisWindow | null,
    private readonly fallbacks: Counter,
    private readonly logger: Logger,
    readonly limit = WORKSPACE_ATTEMPTS_PER_MINUTE,
    readonly windowMs = WORKSPACE_WINDOW_MS,
  ) {
    this.outage = new OutageLog(logger, {
      lost: 'Redis for the delivery windows is unavailable; counting in this process (the cap is per replica) until it is back',
      restored: 'Redis for the delivery windows is back; counting across replicas again',
    });
  }

  async connect(): Promise<void> {
    if (this.windowMs !== WORKSPACE_WINDOW_MS) {
      this.logger.warn(
        { windowMs: this.windowMs },
        `delivery windows: ${this.limit} attempts per ${this.windowMs} ms, not per minute (DELIVERY_WINDOW_MS is for tests)`,
      );
    }
    if (this.shared) {
      if (await this.shared.connect()) this.logger.info({ redis: redact(this.shared.url) }, 'delivery windows: counted in Redis across every delivery replica');
    } else {
      this.logger.warn('delivery windows: counted in this process only (no REDIS_URL); the 600-a-minute cap is exact only with a single delivery replica');
    }
  }

  async close(): Promise<void> {
    await this.shared?.close();
  }

  /** A workspace's window as this replica sees it. */
  forWorkspace(workspaceId: string): WorkspaceWindow {
    return new WorkspaceWindow(this, workspaceId, new SlidingWindow(this.limit, this.windowMs));
  }

  /** The shared window's answer, or null when there is none (no Redis, or Redis did not answer). */
  async takeShared(workspaceId: string): Promise<WindowDecision | null> {
    if (!this.shared) return null;
    if (this.shared.available) {
      try {
        const decision = await this.shared.take(workspaceId, this.limit, this.windowMs);
        this.outage.restored();
        return decision;
      } catch (error) {
        if (!(error instanceof WindowStoreUnavailable)) throw error;
        this.outage.lost(error.message);
      }
    } else {
      this.outage.lost('not connected');
    }
    this.fallbacks.inc();
    return null;
  }
}

/**
 * One workspace's window on this replica. The local window stands in while the shared one is away; it also
 * records every start the shared one counted here, so that an outage does not give the replica a fresh
 * 600 on top of what it just sent.
 */
export class WorkspaceWindow {
  /** Local time until which the shared window last said it was full. */
  private sharedFullUntil = 0;

  constructor(
    private readonly windows: DeliveryWindows,
    readonly workspaceId: string,
    private readonly local: SlidingWindow,
  ) {}

  /** Counts an attempt now, or answers how long until one fits. */
  async take(): Promise<WindowSlot> {
    const decision = await this.windows.takeShared(this.workspaceId);
    const now = Date.now();
    if (decision?.counted) {
      this.local.record(now);
      // Redis's time: the recorded starts of every replica then obey the one window that counted them.
      return { startedAt: decision.at };
    }
    if (decision) {
      this.sharedFullUntil = now + decision.waitMs;
      return { waitMs: decision.waitMs };
    }
    const wait = this.local.take(now);
    return wait === 0 ? { startedAt: now } : { waitMs: wait };
  }

  /** How long until an attempt would fit, as far as this replica knows, without counting one. */
  waitAt(now: number): number {
    return Math.max(this.local.waitAt(now), this.sharedFullUntil - now, 0);
  }

  /** True when this replica has nothing of the workspace's window worth keeping. */
  idle(now: number): boolean {
    return this.local.idle(now) && now >= this.sharedFullUntil;
  }
}

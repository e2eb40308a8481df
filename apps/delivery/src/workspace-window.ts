import { WORKSPACE_ATTEMPTS_PER_MINUTE, WORKSPACE_WINDOW_MS } from '@ds/webhooks';

/**
 * A sliding window of attempt start times for one workspace. `take` either counts an attempt now or answers
 * how long until one is allowed.
 */
export class SlidingWindow {
  private readonly starts: number[] = [];
  private head = 0;

  constructor(
    private readonly limit = WORKSPACE_ATTEMPTS_PER_MINUTE,
    private readonly windowMs = WORKSPACE_WINDOW_MS,
  ) {}

  /** 0 when the attempt may start now (and it is counted), else the milliseconds to wait. */
  take(now: number): number {
    const wait = this.waitAt(now);
    if (wait === 0) this.starts.push(now);
    return wait;
  }

  /**
   * Counts an attempt another window allowed (the shared one), so that this one knows the replica's own recent
   * starts if it has to stand in for the other.
   */
  record(now: number): void {
    this.starts.push(now);
  }

  /** How long until an attempt would be allowed, without counting one. */
  waitAt(now: number): number {
    while (this.head < this.starts.length && this.starts[this.head]! <= now - this.windowMs) this.head++;
    if (this.head > 1024) {
      this.starts.splice(0, this.head);
      this.head = 0;
    }
    if (this.starts.length - this.head < this.limit) return 0;
    // At least `limit` (a positive number of) starts remain from head on, so the oldest counted one exists.
    return this.starts[this.head]! + this.windowMs - now;
  }

  /** True when nothing was counted within the window (the workspace's state can be dropped). */
  idle(now: number): boolean {
    return this.starts.length === this.head || this.starts.at(-1)! <= now - this.windowMs;
  }
}

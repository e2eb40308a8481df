/**
 * The per-workspace cap on delivery attempts: at most 600 attempt starts in any 60 seconds. With Redis the
 * window is one sorted set per workspace that every delivery replica counts in, scored by Redis's own clock.
 */
export const WORKSPACE_ATTEMPTS_PER_MINUTE = 600;
export const WORKSPACE_WINDOW_MS = 60_000;

/** The Redis key of a workspace's window: a sorted set of attempt starts (score: milliseconds of Redis time). */
export function workspaceWindowKey(workspaceId: string): string {
  return `ds:delivery:window:${workspaceId}`;
}

/**
 * What the shared window answered for one attempt, `at` being Redis's time of the answer: counted then, or full
 * until `waitMs` later, when its oldest start leaves.
 */
export type WindowDecision = { counted: true; at: number } | { counted: false; at: number; waitMs: number };

/**
 * Reads the window script's reply: `[1, now]` when the attempt was counted, `[0, now, waitMs]` when the window
 * is full. Null for anything else, which the caller treats like an unreachable Redis.
 */
export function windowDecision(reply: unknown): WindowDecision | null {
  if (!Array.isArray(reply) || !reply.every((value) => Number.isSafeInteger(value))) return null;
  const [counted, at, waitMs] = reply as number[];
  if (counted === 1 && reply.length === 2 && at! >= 0) return { counted: true, at: at! };
  // A full window's oldest start is still inside it, so a wait of 0 or less would only spin; it is at least 1 ms.
  if (counted === 0 && reply.length === 3 && at! >= 0) return { counted: false, at: at!, waitMs: Math.max(1, waitMs!) };
  return null;
}

/**
 * A sliding window of attempt start times for one workspace, counted in this process: alone without Redis, and
 * standing in while Redis is away. `take` either counts an attempt now or answers
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

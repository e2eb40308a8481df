export interface RestartPolicyOptions {
  /** Wait before the first restart after a stable run. */
  firstDelayMs: number;
  /** The longest wait, however often the service crashed in a row. */
  maxDelayMs: number;
  /** This many crashes within `crashLoopWindowMs` is a crash loop: the launcher gives up. */
  crashLoopLimit: number;
  crashLoopWindowMs: number;
  /** A process that ran this long before crashing starts the backoff over. */
  stableAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  firstDelayMs: 500,
  maxDelayMs: 15_000,
  crashLoopLimit: 5,
  crashLoopWindowMs: 60_000,
  stableAfterMs: 30_000,
};

export type RestartVerdict = { restart: true; delayMs: number; recentCrashes: number } | { restart: false; recentCrashes: number };

/**
 * When a supervised service that crashed comes back: at once-ish after a stable run, exponentially later
 * while it keeps crashing, and never once it crashes `crashLoopLimit` times within the window, because a
 * service that cannot stay up needs a person, not a faster loop.
 */
export class RestartPolicy {
  private crashes: number[] = [];
  private inARow = 0;

  constructor(private readonly options: RestartPolicyOptions = DEFAULT_RESTART_POLICY) {
    for (const [name, value] of Object.entries(options)) {
      if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number`);
    }
    if (options.crashLoopLimit < 1) throw new RangeError('crashLoopLimit must be at least 1');
  }

  /** The process that started at `startedAt` exited unexpectedly at `now`. */
  onCrash(now: number, startedAt: number): RestartVerdict {
    this.crashes = this.crashes.filter((at) => now - at < this.options.crashLoopWindowMs);
    this.crashes.push(now);
    const recentCrashes = this.crashes.length;
    if (recentCrashes >= this.options.crashLoopLimit) return { restart: false, recentCrashes };
    if (now - startedAt >= this.options.stableAfterMs) this.inARow = 0;
    const delayMs = Math.min(this.options.maxDelayMs, this.options.firstDelayMs * 2 ** this.inARow);
    this.inARow++;
    return { restart: true, delayMs, recentCrashes };
  }
}

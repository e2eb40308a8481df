import { ServiceError } from '@ds/contracts';

/** The spec's playground limits, per workspace. */
export const PLAYGROUND_RUNS_PER_MINUTE = 30;
export const PLAYGROUND_RUNS_PER_DAY = 2_000;

export interface PlaygroundUsage {
  /** Playground runs recorded in the last 60 seconds and the last 24 hours. */
  minute: number;
  day: number;
  /** Seconds until the oldest run of each window leaves it (null when the window is empty). */
  minuteResetSeconds: number | null;
  dayResetSeconds: number | null;
}

/** Refuses a run past either window with 429 RATE_LIMITED; `details.retryAfter` is what Retry-After says, as on every other 429. */
export function checkPlaygroundLimits(usage: PlaygroundUsage): void {
  if (usage.minute >= PLAYGROUND_RUNS_PER_MINUTE) {
    throw new ServiceError('RATE_LIMITED', `The playground allows ${PLAYGROUND_RUNS_PER_MINUTE} runs a minute per workspace.`, {
      retryAfter: retryAfter(usage.minuteResetSeconds, 60),
    });
  }
  if (usage.day >= PLAYGROUND_RUNS_PER_DAY) {
    throw new ServiceError('RATE_LIMITED', `The playground allows ${PLAYGROUND_RUNS_PER_DAY} runs a day per workspace.`, {
      retryAfter: retryAfter(usage.dayResetSeconds, 86_400),
    });
  }
}

function retryAfter(reset: number | null, window: number): number {
  if (reset === null || !Number.isFinite(reset)) return window;
  return Math.min(window, Math.max(1, Math.ceil(reset)));
}

/**
 * Errors that mean the provider was never asked, so the run's place in the windows is given back: the engine is
 * not configured for the workspace, or no slot on the shared key (or the provider's own rate limit) let it through.
 * Anything else, a timeout included, may have reached the provider and keeps its place.
 */
export function engineCallNotMade(error: unknown): boolean {
  return error instanceof ServiceError && (error.code === 'ENGINE_NOT_CONFIGURED' || error.code === 'ENGINE_RATE_LIMITED');
}

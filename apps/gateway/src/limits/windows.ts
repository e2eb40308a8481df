/**
 * The per-workspace windows: the spec's three, and outcomes, and the response fields that describe them. Pure:
 * the counting itself happens in a ThrottlerStorage (Redis, or in-process in all-in-one mode without Redis).
 */
export const WINDOW_NAMES = ['decisions', 'reads', 'webhooks', 'outcomes'] as const;
export type WindowName = (typeof WINDOW_NAMES)[number];

export const WINDOW_MS = 60_000;

/**
 * Outcomes are writes of their own kind: at most one per run (a repeat replaces it), often posted in batches as
 * a backlog of runs is judged. Their window is twice the plan's per-minute limit, so a minute's worth of runs can
 * be labelled while the next minute's outcomes keep coming, and reading executions to find them (the reads
 * window) is never starved by posting them.
 */
export const OUTCOMES_PER_PLAN_REQUEST = 2;

/** A window's limit for a plan allowing `planLimit` requests a minute. */
export function windowLimit(window: WindowName, planLimit: number): number {
  return window === 'outcomes' ? planLimit * OUTCOMES_PER_PLAN_REQUEST : planLimit;
}

export interface WindowState {
  window: WindowName;
  /** The plan's requests a minute, from which every window's limit follows. */
  planLimit: number;
  /** This window's limit. */
  limit: number;
  /** Requests counted in the current window, this one included. */
  hits: number;
  /** Unix seconds at which the current window ends. */
  resetAt: number;
}

export function allowed(state: WindowState): boolean {
  return state.hits <= state.limit;
}

/**
 * `X-RateLimit-*` as the spec names them, plus the IETF RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` lists the workspace's windows,
 * `RateLimit` reports the one this request counted in).
 */
export function rateLimitHeaders(state: WindowState, nowSeconds: number): Record<string, string> {
  const remaining = Math.max(0, state.limit - state.hits);
  const secondsLeft = Math.max(0, state.resetAt - nowSeconds);
  const policy = WINDOW_NAMES.map((name) => `"${name}";q=${windowLimit(name, state.planLimit)};w=${WINDOW_MS / 1000}`).join(', ');
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(state.resetAt),
    'ratelimit-policy': policy,
    ratelimit: `"${state.window}";r=${remaining};t=${secondsLeft}`,
  };
}

/** Whole seconds to wait before the window has room again; at least 1 so clients never spin. */
export function retryAfterSeconds(state: WindowState, nowSeconds: number): number {
  return Math.max(1, state.resetAt - nowSeconds);
}

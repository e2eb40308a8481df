/**
 * The three per-workspace windows of the spec, and the response fields that describe them. Pure: the
 * counting itself happens in a ThrottlerStorage (Redis, or in-process in all-in-one mode without Redis).
 */
export type WindowName = 'decisions' | 'reads' | 'webhooks';

export const WINDOW_MS = 60_000;

export interface WindowState {
  window: WindowName;
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
 * (draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` lists the workspace's three windows,
 * `RateLimit` reports the one this request counted in).
 */
export function rateLimitHeaders(state: WindowState, nowSeconds: number): Record<string, string> {
  const remaining = Math.max(0, state.limit - state.hits);
  const secondsLeft = Math.max(0, state.resetAt - nowSeconds);
  const policy = (['decisions', 'reads', 'webhooks'] as const).map((name) => `"${name}";q=${state.limit};w=${WINDOW_MS / 1000}`).join(', ');
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

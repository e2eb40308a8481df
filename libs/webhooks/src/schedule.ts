/**
 * The retry schedule: 6 attempts over about 7 hours. The delay after attempt n (1-based) is
 * RETRY_DELAYS_MS[n - 1]; after the sixth attempt there is none. Sum: 7 h 5 min 5 s, before jitter.
 */
export const MAX_ATTEMPTS = 6;
export const RETRY_DELAYS_MS: readonly number[] = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 4.5 * 3600_000];
/** Each delay is spread by up to this fraction either way, so that receivers that failed together are not retried together. */
export const RETRY_JITTER = 0.1;
/** The longest wait a receiver's `Retry-After` can ask for (at scale 1; it is scaled like the schedule). */
export const RETRY_AFTER_CAP_MS = 3 * 3600_000;
/** One attempt's whole time: connecting, sending and the answer's headers and body. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * How long to wait after a failed attempt, or null when it was the last. `scale` shrinks the schedule and the
 * cap (tests); `random` is in [0, 1). A receiver's `Retry-After` is honoured when it asks for longer than the
 * schedule, up to the cap; it never shortens the schedule.
 */
export function retryDelayMs(attempt: number, options: { scale: number; random: number; retryAfterMs?: number | null }): number | null {
  if (!Number.isInteger(attempt) || attempt < 1 || attempt >= MAX_ATTEMPTS) return null;
  // One delay follows each attempt but the last, so attempts 1 to MAX_ATTEMPTS - 1 all have one.
  const base = RETRY_DELAYS_MS[attempt - 1]! * options.scale;
  const jittered = base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * options.random);
  const cap = RETRY_AFTER_CAP_MS * options.scale;
  const asked = options.retryAfterMs ?? null;
  const honoured = asked === null ? 0 : Math.min(asked, cap);
  return Math.max(0, Math.round(Math.max(jittered, honoured)));
}

/** `Retry-After` as milliseconds from `now`: delta seconds or an HTTP date; null when absent or malformed. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return null;
  const text = raw.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

export type AttemptOutcome = 'success' | 'gone' | 'failure';

/** 2xx is success; 410 Gone stops retrying; everything else, 3xx included (redirects are never followed), fails and is retried. */
export function classifyStatus(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return 'success';
  if (status === 410) return 'gone';
  return 'failure';
}

import { ErrorCode } from '@ds/contracts';

export interface AttemptFailure {
  code: ErrorCode;
  retryable: boolean;
  /** Seconds the provider asked us to wait, when it said. */
  retryAfterSeconds: number | null;
  reason: string;
}

/** Maps a provider's HTTP answer to the public engine error and whether another attempt may help. */
export function classifyStatus(status: number, reason: string, retryAfter: string | null, now = Date.now()): AttemptFailure {
  const wait = parseRetryAfter(retryAfter, now);
  if (status === 429 || status === 529) return { code: 'ENGINE_RATE_LIMITED', retryable: true, retryAfterSeconds: wait, reason };
  if (status >= 500) return { code: 'ENGINE_UNAVAILABLE', retryable: true, retryAfterSeconds: wait, reason };
  if (status === 401 || status === 403) return { code: 'ENGINE_AUTH_FAILED', retryable: false, retryAfterSeconds: null, reason };
  return { code: 'ENGINE_INVALID_REQUEST', retryable: false, retryAfterSeconds: null, reason };
}

export function networkFailure(reason: string): AttemptFailure {
  return { code: 'ENGINE_UNAVAILABLE', retryable: true, retryAfterSeconds: null, reason };
}

/** `Retry-After` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  // An HTTP date always names its day and month; without letters Date.parse reads "-5" as a year.
  if (!/[a-z]/i.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, (at - now) / 1000);
}

export const MAX_RETRIES = 2;
const BASE_BACKOFF_MS = 100;

/**
 * How long to wait before retry number `retry` (1-based), or null when no retry fits: the retry budget
 * is spent, the failure is permanent, or the wait would reach past the deadline.
 */
export function retryDelayMs(failure: AttemptFailure, retry: number, msLeft: number, random = Math.random): number | null {
  if (!failure.retryable || retry > MAX_RETRIES) return null;
  const delay = failure.retryAfterSeconds !== null ? failure.retryAfterSeconds * 1000 : BASE_BACKOFF_MS * 2 ** (retry - 1) * (0.5 + random());
  // A retry needs time to answer too; waiting until the very deadline only turns the error into a timeout.
  return delay < msLeft - 50 ? Math.round(delay) : null;
}

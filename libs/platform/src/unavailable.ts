import { ServiceError } from '@ds/contracts';

/** PostgreSQL SQLSTATEs that mean the server cannot take this request now: starting, stopping, out of connections. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006']);
/** Socket failures on the way to a dependency (PostgreSQL, Redis, a provider behind a service). */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** The pg pool's and ioredis's own words for a connection that is gone or never came. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /Stream isn't writeable/,
  /Client has encountered a connection error/,
];

/**
 * True when an unexpected error only says that a dependency is unreachable for now (its database restarting, a
 * connection refused or cut): the request should be retried, so it is answered 503 SERVICE_UNAVAILABLE with
 * Retry-After, not 500. TypeORM wraps driver errors, so the cause chain is followed.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const { code, errno, message } = current as { code?: unknown; errno?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
    if (typeof errno === 'string' && UNAVAILABLE_ERRNOS.has(errno)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
    current = (current as { driverError?: unknown; cause?: unknown }).driverError ?? (current as { cause?: unknown }).cause;
  }
  return false;
}

export function dependencyUnavailable(): ServiceError {
  return new ServiceError('SERVICE_UNAVAILABLE', 'A service this request needs cannot reach its data store right now. Retry shortly.');
}

import { ServiceError } from '@ds/contracts';
import { Logger } from './logger';
import { dependencyUnavailable, isDependencyUnavailable } from './unavailable';

const INTERNAL_ERROR_MESSAGE = 'An unexpected error occurred; retry, and contact support with the request id if it persists.';

/** The answer to a bug: a fixed message, since internals must not reach the caller. */
export function internalError(): ServiceError {
  return new ServiceError('INTERNAL_ERROR', INTERNAL_ERROR_MESSAGE);
}

/**
 * The one place an error that is not a ServiceError becomes an answer. A dependency unreachable for now (its
 * database restarting, a connection refused) is a retryable 503 SERVICE_UNAVAILABLE, logged as a warning;
 * anything else is a bug, logged with its cause as `failure` and answered 500 INTERNAL_ERROR without internals.
 * A ServiceError is already an answer and passes as it is; one that refused more issues than it lists is the
 * caller's doing, so it is logged as a warning, never as an error.
 */
export function answerForUnexpected(error: unknown, logger: Logger, failure: string, fields: Record<string, unknown> = {}): ServiceError {
  if (error instanceof ServiceError) {
    if (error.issuesNotListed > 0) noteLongRefusal(error, logger, fields);
    return error;
  }
  if (isDependencyUnavailable(error)) {
    logger.warn({ err: error, ...fields }, 'a dependency is unreachable; answered 503');
    return dependencyUnavailable();
  }
  logger.error({ err: error, ...fields }, failure);
  return internalError();
}

/** A refusal with more issues than an error lists: worth a line, since a body of thousands of bad keys is seldom a mistake. */
function noteLongRefusal(error: ServiceError, logger: Logger, fields: Record<string, unknown>): void {
  const issues = (Array.isArray(error.details) ? error.details.length : 0) + error.issuesNotListed;
  logger.warn({ ...fields, code: error.code, status: error.status, issues }, 'refused a request with more issues than an error lists');
}

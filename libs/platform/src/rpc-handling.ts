import { ArgumentsHost, Catch, RpcExceptionFilter } from '@nestjs/common';
import { Observable, throwError } from 'rxjs';
import { ServiceError, WireError } from '@ds/contracts';
import { Logger } from './logger';
import { dependencyUnavailable, isDependencyUnavailable } from './unavailable';

/**
 * Every failing handler answers with a public error code and status. A ServiceError is the handler's
 * own verdict; a dependency that is unreachable for now (its database restarting, a connection refused) is a
 * retryable SERVICE_UNAVAILABLE; anything else is a bug, logged with its cause and answered as INTERNAL_ERROR
 * without internals.
 */
@Catch()
export class WireErrorFilter implements RpcExceptionFilter<unknown> {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => toWire(exception, this.logger));
  }
}

export function toWire(exception: unknown, logger: Logger): WireError {
  if (exception instanceof ServiceError) return exception.toWire();
  if (isDependencyUnavailable(exception)) {
    logger.warn({ err: exception }, 'a dependency is unreachable; answered 503');
    return dependencyUnavailable().toWire();
  }
  logger.error({ err: exception }, 'unexpected failure while handling a request');
  return new ServiceError('INTERNAL_ERROR', 'An unexpected error occurred; retry, and contact support with the request id if it persists.').toWire();
}

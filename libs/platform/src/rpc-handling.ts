import { ArgumentsHost, Catch, RpcExceptionFilter } from '@nestjs/common';
import { Observable, throwError } from 'rxjs';
import { WireError } from '@ds/contracts';
import { Logger } from './logger';
import { answerForUnexpected } from './unexpected-errors';

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
  return answerForUnexpected(exception, logger, 'unexpected failure while handling a request').toWire();
}

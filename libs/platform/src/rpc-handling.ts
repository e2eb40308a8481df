import { ArgumentsHost, CallHandler, Catch, ExecutionContext, Injectable, NestInterceptor, RpcExceptionFilter } from '@nestjs/common';
import { NatsContext } from '@nestjs/microservices';
import { Observable, throwError, tap } from 'rxjs';
import { ServiceError, WireError } from '@ds/contracts';
import { Logger } from './logger';
import { Metrics } from './metrics';

/**
 * Every failing handler answers with a public error code and status. A ServiceError is the handler's
 * own verdict; anything else is a bug or an infrastructure failure, logged with its cause and answered
 * as INTERNAL_ERROR without internals.
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
  logger.error({ err: exception }, 'unexpected failure while handling a request');
  return new ServiceError('INTERNAL_ERROR', 'An unexpected error occurred; retry, and contact support with the request id if it persists.').toWire();
}

/** RED metrics per subject: rate and errors by outcome, duration as a histogram. */
@Injectable()
export class RpcMetricsInterceptor implements NestInterceptor {
  constructor(private readonly metrics: Metrics) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const subject = context.switchToRpc().getContext<NatsContext>().getSubject();
    const started = process.hrtime.bigint();
    const record = (outcome: string) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.rpcHandled.inc({ subject, outcome });
      this.metrics.rpcHandleDuration.observe({ subject, outcome }, seconds);
    };
    return next.handle().pipe(
      tap({
        complete: () => record('ok'),
        error: (error: unknown) => record(error instanceof ServiceError ? error.code : 'INTERNAL_ERROR'),
      }),
    );
  }
}

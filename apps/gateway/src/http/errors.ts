import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, ServiceError, WireError } from '@ds/contracts';
import { answerForUnexpected, Logger } from '@ds/platform';

/**
 * Nest hands Fastify's own failures (body limits, parsing, unknown routes) to the exception filter as
 * HttpExceptions carrying Fastify's status; they become the API's codes with fixed, internals-free messages.
 */
function fromHttpStatus(status: number | null): ServiceError | null {
  if (status === null) return null;
  if (status === 413) return new ServiceError('PAYLOAD_TOO_LARGE', 'The request body is larger than 128 KB.');
  if (status === 415) return new ServiceError('INVALID_REQUEST', 'Content-Type must be application/json.');
  if (status === 404 || status === 405) return new ServiceError('NOT_FOUND', 'No such endpoint.');
  if (status >= 400 && status < 500) return new ServiceError('INVALID_REQUEST', 'The request could not be read.');
  return null;
}

/**
 * Fastify marks the client's own failures that reach no handler (a body the client aborted or never
 * finished) with a 4xx `statusCode`; they are the caller's doing, not an unexpected failure worth a log line.
 */
function fastifyClientStatus(error: unknown): number | null {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

export function toServiceError(error: unknown, logger: Logger): ServiceError {
  if (!(error instanceof ServiceError)) {
    const mapped = error instanceof HttpException ? fromHttpStatus(error.getStatus()) : fromHttpStatus(fastifyClientStatus(error));
    if (mapped) return mapped;
  }
  // A ServiceError passes through too, so that it is logged as the platform logs refusals.
  return answerForUnexpected(error, logger, 'unexpected failure while answering a request');
}

/** Seconds a client waits before retrying a request that found a service behind the gateway unavailable. */
const SERVICE_UNAVAILABLE_RETRY_AFTER_S = 5;

export function sendError(reply: FastifyReply, request: FastifyRequest, error: WireError): void {
  // The route that matched, not the URL's text: `/%6Dcp` reaches the MCP route too and must be answered alike.
  if (error.code === 'INVALID_API_KEY' && request.routeOptions?.url === '/mcp') reply.header('www-authenticate', 'Bearer');
  if (error.code === 'SERVICE_UNAVAILABLE' && !reply.hasHeader('retry-after')) reply.header('retry-after', String(SERVICE_UNAVAILABLE_RETRY_AFTER_S));
  // A refusal that knows when to come back says so: the workspace's window, or a full queue for the engine's key.
  const retryAfter =
    (error.code === 'RATE_LIMITED' || error.code === 'ENGINE_RATE_LIMITED') && !Array.isArray(error.details) ? error.details?.retryAfter : undefined;
  if (typeof retryAfter === 'number' && !reply.hasHeader('retry-after')) reply.header('retry-after', String(retryAfter));
  // Set here as well as in the onRequest hook: some failures (a path the router cannot decode for a method it
  // has no routes for) are answered without the hooks running.
  void reply
    .status(error.status)
    .header('x-request-id', request.id)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(errorBody(error, request.id)));
}

/** The one place every failure is shaped: Nest routes errors of handlers, hooks and Fastify itself here. */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    sendError(http.getResponse<FastifyReply>(), request, toServiceError(exception, this.logger.child({ request_id: request.id })).toWire());
  }
}

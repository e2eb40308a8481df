import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, ServiceError } from '@ds/contracts';
import { newId } from '@ds/ids';

/** Node's limit on the request line and headers together (its default, stated so that nothing depends on the default). */
export const HEADER_BLOCK_MAX = 16_384;

/** The headers must arrive within this time (or the whole request timeout, when that is shorter). */
export const HEADERS_TIMEOUT_MAX_MS = 10_000;

/**
 * How often Node looks for requests past their timeout. Its default (30 s) would let a slow request live up
 * to twice a 30 s timeout; the check walks the open connections only, so once a second costs nothing.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

export interface HttpServerLimits {
  /** The whole request, headers and body, must be received within this time. */
  requestTimeoutMs: number;
}

/**
 * Fastify options that keep hostile clients from holding connections (slow headers, slow bodies) and that
 * answer what Node and the router refuse before any route runs (oversized headers, bad HTTP, undecodable
 * URLs) in the API's one error shape instead of their own.
 */
export function httpServerOptions(limits: HttpServerLimits) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(limits.requestTimeoutMs, HEADERS_TIMEOUT_MAX_MS),
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, limits.requestTimeoutMs),
      maxHeaderSize: HEADER_BLOCK_MAX,
    },
    // A parameter can never be longer than the header block, so the router never answers 414 itself: a long
    // slug reaches its route and that route's own checks (the run endpoint's 401, 429, then 404).
    routerOptions: { maxParamLength: HEADER_BLOCK_MAX },
    clientErrorHandler: (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, limits),
    frameworkErrors: answerFrameworkError,
  };
}

/** What Node refuses before a request exists: no route, no hooks, so a fresh request id. */
export function clientErrorFor(code: string | undefined, limits: HttpServerLimits): ServiceError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ServiceError('INVALID_REQUEST', `The request line and headers are larger than ${HEADER_BLOCK_MAX / 1024} KB.`);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ServiceError('INVALID_REQUEST', `The request was not received within ${limits.requestTimeoutMs / 1000} seconds.`);
    default:
      return new ServiceError('INVALID_REQUEST', 'The request is not valid HTTP/1.1.');
  }
}

export function clientErrorResponse(error: ServiceError, requestId: string): string {
  const body = JSON.stringify(errorBody(error.toWire(), requestId));
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-ID: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, limits: HttpServerLimits): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way on this socket cannot be followed by another.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(clientErrorResponse(clientErrorFor(error.code, limits), newId('req')));
  socket.destroy();
}

function answerFrameworkError(_error: Error, request: FastifyRequest, reply: FastifyReply): void {
  const error = new ServiceError('INVALID_REQUEST', 'The request URL could not be decoded.');
  void reply
    .status(error.status)
    .header('x-request-id', request.id)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(errorBody(error.toWire(), request.id)));
}

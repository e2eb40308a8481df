import { LoggerService } from '@nestjs/common';
import pino, { DestinationStream, Logger } from 'pino';
import { currentRequestId } from './request-context';

export type { Logger } from 'pino';

const REDACTED = '[redacted]';

/**
 * Fields that hold a caller's data or a secret, wherever a log call puts them (top level or one object
 * down): decision state, passwords and their hashes, tokens, API keys, provider keys, key material.
 */
const SENSITIVE_FIELDS = [
  'state',
  'password',
  'passwordHash',
  'password_hash',
  'token',
  'sessionToken',
  'session_token',
  'apiKey',
  'api_key',
  'keyHash',
  'key_hash',
  'secret',
  'credentialsKey',
  'sealed',
  'authorization',
  'cookie',
];

export const REDACT_PATHS = [
  ...SENSITIVE_FIELDS,
  ...SENSITIVE_FIELDS.map((field) => `*.${field}`),
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-admin-token"]',
  'headers.authorization',
  'headers.cookie',
];

/**
 * Properties of driver errors that carry the values of a statement: TypeORM's QueryFailedError keeps the
 * statement and its parameters, and PostgreSQL's errors quote rows in `detail` ("Key (email)=(…) exists").
 */
const DRIVER_VALUE_FIELDS = new Set(['parameters', 'query', 'detail', 'where', 'internalQuery', 'hint']);

/** PostgreSQL's data exceptions (class 22) quote the offending value in their message. */
const SQLSTATE_QUOTING_VALUES = /^22/;

type SerializedError = Record<string, unknown>;

function scrubError(serialized: SerializedError, depth: number): SerializedError {
  const scrubbed: SerializedError = {};
  for (const [field, value] of Object.entries(serialized)) {
    if (DRIVER_VALUE_FIELDS.has(field)) continue;
    scrubbed[field] =
      value !== null && typeof value === 'object' && !Array.isArray(value) && depth < 4 ? scrubError(value as SerializedError, depth + 1) : value;
  }
  const code = typeof scrubbed.code === 'string' ? scrubbed.code : null;
  if (code !== null && SQLSTATE_QUOTING_VALUES.test(code) && typeof scrubbed.message === 'string') {
    scrubbed.message = `database data exception ${code}`;
    if (typeof scrubbed.stack === 'string') scrubbed.stack = scrubbed.stack.replace(/^[^\n]*/, `${String(scrubbed.type ?? 'Error')}: ${scrubbed.message}`);
  }
  return scrubbed;
}

/** pino's error serializer (type, message, stack, cause chain, own fields) without the values of a failed statement. */
export function serializeError(error: unknown): unknown {
  if (error === null || typeof error !== 'object') return error;
  return scrubError(pino.stdSerializers.err(error as Error) as unknown as SerializedError, 0);
}

/** A request as logged: method and path, never the query string (it can carry tokens or state). */
export function serializeRequest(request: { method?: string; url?: string; id?: unknown }): Record<string, unknown> {
  return { id: request.id, method: request.method, path: typeof request.url === 'string' ? request.url.split('?')[0] : undefined };
}

/** JSON lines on stdout (or the given stream); every line made inside a request carries its `request_id`. */
export function createLogger(service: string, level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: { err: serializeError, error: serializeError, req: serializeRequest },
    mixin() {
      const requestId = currentRequestId();
      return requestId ? { request_id: requestId } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Routes Nest's own log calls into pino so there is one log format. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}

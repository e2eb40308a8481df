import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { currentRequestId } from './request-context';

export type { Logger } from 'pino';

/** JSON lines on stdout; every line made inside a request carries its `request_id`. */
export function createLogger(service: string, level: string): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin() {
      const requestId = currentRequestId();
      return requestId ? { request_id: requestId } : {};
    },
  });
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

import { Logger } from './logger';

/**
 * For a dependency the service works around while it is away (Redis behind a shared counter, say): one warning
 * when it goes, one line when it is back with how long it was away, and nothing in between however many
 * requests notice it.
 */
export class OutageLog {
  private since: number | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly messages: { lost: string; restored: string },
  ) {}

  lost(reason: string): void {
    if (this.since !== null) return;
    this.since = Date.now();
    this.logger.warn({ reason }, this.messages.lost);
  }

  restored(): void {
    if (this.since === null) return;
    this.logger.info({ afterMs: Date.now() - this.since }, this.messages.restored);
    this.since = null;
  }
}

import { Logger } from './logger';

/**
 * Background work done every `intervalMs` (0 turns it off): database purges, the billing sweep. A round starts
 * only after the previous one has finished, so a slow round never runs beside the next; a failed round is
 * logged and the next one comes as planned; `stop` waits for a round in progress, so that nothing it uses is
 * closed under it. The timer does not keep the process alive.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly intervalMs: number,
    private readonly round: () => Promise<unknown>,
    private readonly logger: Logger,
    private readonly failure: string,
  ) {}

  start(): void {
    if (this.intervalMs === 0 || this.timer) return;
    this.schedule();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.running = this.round()
        .catch((error: unknown) => this.logger.error({ err: error }, this.failure))
        .finally(() => {
          if (this.timer) this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }
}

import { DataSource } from 'typeorm';
import { Logger } from './logger';
import { onOneReplica } from './one-replica';

export interface PeriodicJobOptions {
  /**
   * The round runs on one replica at a time: where PostgreSQL's advisory lock of this name is taken, the others
   * skip that round (see `onOneReplica`).
   */
  oneReplica?: { db: DataSource; lockKey: string };
}

/**
 * Background work done every `intervalMs` (0 turns it off): database purges, the billing sweep, on every replica or
 * on one at a time (`oneReplica`). A round starts
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
    private readonly options: PeriodicJobOptions = {},
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
      const single = this.options.oneReplica;
      this.running = (single ? onOneReplica(single.db, single.lockKey, this.round) : this.round())
        .catch((error: unknown) => this.logger.error({ err: error }, this.failure))
        .finally(() => {
          if (this.timer) this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }
}

import { DataSource } from 'typeorm';
import { Logger } from './logger';
import { onOneReplica } from './one-replica';
import { outsideRequestContext } from './request-context';

export interface PeriodicJobOptions {
  /**
   * The round runs on one replica at a time: where PostgreSQL's advisory lock of this name is taken, the others
   * skip that round (see `onOneReplica`). The lock is held for the whole round, so a round that keeps work in
   * flight keeps the other replicas out until that work is done.
   */
  oneReplica?: { db: DataSource; lockKey: string };
}

/**
 * A round's work. `signal` aborts when the job stops or, with `oneReplica`, when the lock's session is lost: a
 * round that takes work on as it goes (a queue it drains) takes no more then, and ends once its work in flight
 * has.
 */
export type Round = (signal: AbortSignal) => Promise<unknown>;

/**
 * Background work done every `intervalMs` (0 turns it off): database purges, the billing sweep, the replay queue,
 * on every replica or on one at a time (`oneReplica`). A round starts only after the previous one has finished,
 * so a slow round never runs beside the next; `wake` brings the next round forward (right after the one in
 * progress, if any), for work that arrives between rounds; a failed round is logged and the next one comes as
 * planned; `stop` aborts the round's signal and waits for the round, so that nothing it uses is closed under it.
 * The timer does not keep the process alive.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | null = null;
  /** Set while the job is started; aborted by `stop`. */
  private started: AbortController | null = null;
  private running: Promise<unknown> | null = null;
  /** A wake that came during a round: the next one starts as soon as it ends. */
  private woken = false;

  constructor(
    private readonly intervalMs: number,
    private readonly round: Round,
    private readonly logger: Logger,
    private readonly failure: string,
    private readonly options: PeriodicJobOptions = {},
  ) {}

  start(): void {
    if (this.intervalMs === 0 || this.started) return;
    this.started = new AbortController();
    this.schedule(this.intervalMs);
  }

  /** Runs the next round now rather than after the interval; nothing when the job is not started. */
  wake(): void {
    if (!this.started) return;
    if (this.running) this.woken = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.started?.abort();
    this.started = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    // A request that wakes the job must not lend the round its deadline: calls made past it would be refused.
    this.timer = outsideRequestContext(() => setTimeout(() => this.runRound(), delayMs));
    this.timer.unref();
  }

  private runRound(): void {
    this.timer = null;
    const started = this.started;
    if (!started) return;
    this.woken = false;
    const single = this.options.oneReplica;
    const round = single ? onOneReplica(single.db, single.lockKey, (held) => this.round(AbortSignal.any([started.signal, held]))) : this.round(started.signal);
    this.running = round
      .catch((error: unknown) => this.logger.error({ err: error }, this.failure))
      .finally(() => {
        this.running = null;
        if (this.started === started) this.schedule(this.woken ? 0 : this.intervalMs);
      });
  }
}

export interface ShadowQueueLimits {
  /** Samples waiting for a worker; an offer beyond this is dropped. */
  queued: number;
  /** Samples evaluated at once. */
  concurrency: number;
}

/**
 * Work that must never hold up whoever offers it: an offer returns at once, work starts on a later turn of the
 * event loop (after the offerer's own reply has gone out), and a full queue drops the offer rather than grow.
 */
export class ShadowQueue<T> {
  private readonly waiting: T[] = [];
  private readonly running = new Set<Promise<void>>();
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly limits: ShadowQueueLimits,
    private readonly work: (item: T) => Promise<void>,
  ) {
    if (!Number.isInteger(limits.queued) || limits.queued < 0) throw new RangeError('queued must be a whole number');
    if (!Number.isInteger(limits.concurrency) || limits.concurrency < 1) throw new RangeError('concurrency must be a positive integer');
  }

  /** False when the item was dropped: the queue is full or closed. */
  offer(item: T): boolean {
    if (this.closed || this.waiting.length >= this.limits.queued) return false;
    this.waiting.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    }
    return true;
  }

  get depth(): number {
    return this.waiting.length;
  }

  get inFlight(): number {
    return this.running.size;
  }

  /** Drops what waits and settles once the work in flight has, or after `graceMs`; how many were dropped. */
  async close(graceMs: number): Promise<number> {
    this.closed = true;
    const dropped = this.waiting.splice(0).length;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.running), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    return dropped;
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.limits.concurrency && this.waiting.length > 0) {
      const item = this.waiting.shift()!;
      const done: Promise<void> = this.work(item)
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(done);
          this.pump();
        });
      this.running.add(done);
    }
  }
}

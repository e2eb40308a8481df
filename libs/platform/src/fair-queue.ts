export interface FairQueueLimits {
  /** Samples waiting for a worker; an offer beyond this is dropped. */
  queued: number;
  /** Samples of one key (a workspace) waiting at once; an offer beyond this is dropped. All of `queued` without it. */
  queuedPerKey?: number;
  /** Samples evaluated at once. */
  concurrency: number;
}

/**
 * Work that must never hold up whoever offers it: an offer returns at once, work starts on a later turn of the
 * event loop (after the offerer's own reply has gone out), and a full queue drops the offer rather than grow.
 * Keys (workspaces) take turns: each free worker takes the next item of the key after the one served last, so an
 * item waits for at most one item of each other key, however many they offered first; and no key holds more than
 * its share of the queue.
 */
export class FairQueue<T> {
  /** Each key's items, oldest first; the map's order is the rotation, the key served next first. */
  private readonly waiting = new Map<string, T[]>();
  private waitingCount = 0;
  private readonly running = new Set<Promise<void>>();
  private scheduled = false;
  private closed = false;
  private readonly queuedPerKey: number;

  constructor(
    private readonly limits: FairQueueLimits,
    private readonly work: (item: T) => Promise<void>,
    private readonly keyOf: (item: T) => string = () => '',
  ) {
    if (!Number.isInteger(limits.queued) || limits.queued < 0) throw new RangeError('queued must be a whole number');
    if (!Number.isInteger(limits.concurrency) || limits.concurrency < 1) throw new RangeError('concurrency must be a positive integer');
    this.queuedPerKey = limits.queuedPerKey ?? limits.queued;
    if (!Number.isInteger(this.queuedPerKey) || this.queuedPerKey < 0) throw new RangeError('queuedPerKey must be a whole number');
  }

  /** False when the item was dropped: the queue, or its key's share of it, is full, or the queue is closed. */
  offer(item: T): boolean {
    if (this.closed || this.waitingCount >= this.limits.queued) return false;
    const key = this.keyOf(item);
    const line = this.waiting.get(key);
    if ((line?.length ?? 0) >= this.queuedPerKey) return false;
    if (line) line.push(item);
    else this.waiting.set(key, [item]);
    this.waitingCount++;
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
    return this.waitingCount;
  }

  get inFlight(): number {
    return this.running.size;
  }

  /** Drops what waits and settles once the work in flight has, or after `graceMs`; how many were dropped. */
  async close(graceMs: number): Promise<number> {
    this.closed = true;
    const dropped = this.waitingCount;
    this.waiting.clear();
    this.waitingCount = 0;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.running), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    return dropped;
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.limits.concurrency && this.waitingCount > 0) {
      const item = this.nextInTurn();
      const done: Promise<void> = this.work(item)
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(done);
          this.pump();
        });
      this.running.add(done);
    }
  }

  /** The first key's oldest item; that key goes to the back of the rotation if it has more. */
  private nextInTurn(): T {
    const [key, line] = this.waiting.entries().next().value!;
    const item = line.shift()!;
    this.waiting.delete(key);
    if (line.length > 0) this.waiting.set(key, line);
    this.waitingCount--;
    return item;
  }
}

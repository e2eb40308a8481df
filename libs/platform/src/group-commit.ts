/** Writes a whole batch at once; rejecting fails every item in the batch. */
export type BatchWriter<T> = (items: readonly T[]) => Promise<void>;

export interface GroupCommitOptions {
  /** The most items one write carries; the rest wait for the next write. */
  maxBatch: number;
}

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items added while a write is in flight accumulate and go together in the next write, so
 * the number of writes follows the writer's latency rather than the arrival rate. One write runs at a
 * time. When idle, the first item waits for the end of the current event-loop turn, so that items
 * arriving from the same burst of I/O share a write. `add` settles when the write carrying the item
 * has settled, with its outcome.
 */
export class GroupCommit<T> {
  private pending: Waiting<T>[] = [];
  private writing = false;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly write: BatchWriter<T>,
    private readonly options: GroupCommitOptions,
  ) {
    if (!Number.isInteger(options.maxBatch) || options.maxBatch < 1) throw new RangeError('maxBatch must be a positive integer');
  }

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.writing && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          void this.drain();
        });
      }
    });
  }

  /** Items waiting for a write, not counting those in flight. */
  get waiting(): number {
    return this.pending.length;
  }

  /** Settles once every item added so far has been written (or has failed). */
  idle(): Promise<void> {
    if (!this.writing && !this.scheduled && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.options.maxBatch);
        try {
          await this.write(batch.map((waiting) => waiting.item));
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
          continue;
        }
        for (const waiting of batch) waiting.resolve();
      }
    } finally {
      this.writing = false;
    }
    if (!this.scheduled) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

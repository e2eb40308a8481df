import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LabResult, LabTask, runLabTask } from './lab-tasks';

/** The compiled thread entry beside this file; absent when the sources run under ts-jest. */
const WORKER_FILE = join(__dirname, 'lab-worker.js');

/** Old-generation heap of one lab thread: a fit over the sample cap needs a few tens of MB. */
const WORKER_HEAP_MB = 256;

interface Job {
  task: LabTask;
  resolve: (result: LabResult<LabTask>) => void;
  reject: (error: Error) => void;
}

/**
 * A bounded pool of worker threads for the runner's heavy CPU work (fits), so that the thread answering live runs
 * never spends more than a message's copy on it. At most `size` tasks run at once; the rest wait in order. A thread
 * that dies fails its task and is replaced on demand.
 */
export class LabPool {
  private readonly threads = new Set<Worker>();
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Job>();
  private readonly waiting: Job[] = [];
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly workerFile: string | null = existsSync(WORKER_FILE) ? WORKER_FILE : null,
  ) {}

  /** Tasks running now and tasks waiting for a thread (for metrics and tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.busy.size, waiting: this.waiting.length };
  }

  run<T extends LabTask>(task: T): Promise<LabResult<T>> {
    if (this.closed) return Promise.reject(new Error('the lab pool is closed'));
    // Under ts-jest there is no compiled thread entry: the same task runs here, which only tests do.
    if (this.workerFile === null) return Promise.resolve().then(() => runLabTask(task) as LabResult<T>);
    return new Promise<LabResult<T>>((resolve, reject) => {
      this.waiting.push({ task, resolve: resolve as Job['resolve'], reject });
      this.next();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(new Error('the lab pool is closed'));
    await Promise.all([...this.threads].map((thread) => thread.terminate()));
  }

  private next(): void {
    while (this.waiting.length > 0 && (this.idle.length > 0 || this.threads.size < this.size)) {
      const thread = this.idle.pop() ?? this.spawn();
      const job = this.waiting.shift()!;
      this.busy.set(thread, job);
      thread.postMessage(job.task);
    }
  }

  private spawn(): Worker {
    const thread = new Worker(this.workerFile!, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    this.threads.add(thread);
    thread.on('message', (reply: { ok: true; result: LabResult<LabTask> } | { ok: false; message: string }) => {
      const job = this.busy.get(thread);
      this.busy.delete(thread);
      this.idle.push(thread);
      if (job) {
        if (reply.ok) job.resolve(reply.result);
        else job.reject(new Error(`lab task ${job.task.kind} failed: ${reply.message}`));
      }
      this.next();
    });
    const lost = (error: Error) => {
      const job = this.busy.get(thread);
      this.busy.delete(thread);
      this.threads.delete(thread);
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
      job?.reject(error);
      if (!this.closed) this.next();
    };
    thread.on('error', lost);
    thread.on('exit', (code) => lost(new Error(`a lab thread exited with code ${code}`)));
    return thread;
  }
}

/**
 * At most `size` of the lab's statements hold a database connection at once, so that heavy reads queue here and
 * never take the connections live runs need from the shared pool.
 */
export class LabGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) await new Promise<void>((turn) => this.waiting.push(turn));
    else this.active++;
    try {
      return await work();
    } finally {
      const turn = this.waiting.shift();
      // The slot passes straight to the next in line, so `active` never drops below what is running.
      if (turn) turn();
      else this.active--;
    }
  }
}

import { ShadowQueue } from './shadow-queue';

/** A job that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ShadowQueue', () => {
  it('starts nothing on the turn of the offer', async () => {
    const started: number[] = [];
    const queue = new ShadowQueue<number>({ queued: 5, concurrency: 2 }, async (n) => void started.push(n));
    expect(queue.offer(1)).toBe(true);
    expect(started).toEqual([]);
    await turn();
    expect(started).toEqual([1]);
  });

  it('runs at most `concurrency` at once and drops offers past the queue limit', async () => {
    const gates = new Map<number, ReturnType<typeof gate>>();
    const started: number[] = [];
    const queue = new ShadowQueue<number>({ queued: 2, concurrency: 2 }, (n) => {
      started.push(n);
      const g = gate();
      gates.set(n, g);
      return g.opened;
    });
    expect([1, 2].map((n) => queue.offer(n))).toEqual([true, true]);
    await turn();
    expect(started).toEqual([1, 2]);
    expect(queue.inFlight).toBe(2);
    expect([3, 4, 5].map((n) => queue.offer(n))).toEqual([true, true, false]);
    expect(queue.depth).toBe(2);
    gates.get(1)!.open();
    await turn();
    await turn();
    expect(started).toEqual([1, 2, 3]);
    expect(queue.offer(6)).toBe(true);
  });

  it('keeps going after a job fails', async () => {
    const done: number[] = [];
    const queue = new ShadowQueue<number>({ queued: 5, concurrency: 1 }, async (n) => {
      if (n === 1) throw new Error('engine down');
      done.push(n);
    });
    queue.offer(1);
    queue.offer(2);
    for (let i = 0; i < 5; i++) await turn();
    expect(done).toEqual([2]);
  });

  it('on close drops what waits, refuses offers and waits for the work in flight', async () => {
    const g = gate();
    let finished = false;
    const queue = new ShadowQueue<number>({ queued: 5, concurrency: 1 }, async () => {
      await g.opened;
      finished = true;
    });
    queue.offer(1);
    queue.offer(2);
    queue.offer(3);
    await turn();
    const closing = queue.close(10_000);
    expect(queue.offer(4)).toBe(false);
    g.open();
    expect(await closing).toBe(2);
    expect(finished).toBe(true);
  });

  it('stops waiting for work in flight after the grace period', async () => {
    const queue = new ShadowQueue<number>({ queued: 1, concurrency: 1 }, () => new Promise<void>(() => undefined));
    queue.offer(1);
    await turn();
    expect(await queue.close(5)).toBe(0);
  });

  it('refuses limits it cannot honour', () => {
    expect(() => new ShadowQueue({ queued: 1, concurrency: 0 }, async () => undefined)).toThrow(RangeError);
    expect(() => new ShadowQueue({ queued: -1, concurrency: 1 }, async () => undefined)).toThrow(RangeError);
  });
});

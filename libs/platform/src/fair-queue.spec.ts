import { FairQueue, FairQueueLimits } from './fair-queue';

/** A job that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('FairQueue', () => {
  it('starts nothing on the turn of the offer', async () => {
    const started: number[] = [];
    const queue = new FairQueue<number>({ queued: 5, concurrency: 2 }, async (n) => void started.push(n));
    expect(queue.offer(1)).toBe(true);
    expect(started).toEqual([]);
    await turn();
    expect(started).toEqual([1]);
  });

  it('runs at most `concurrency` at once and drops offers past the queue limit', async () => {
    const gates = new Map<number, ReturnType<typeof gate>>();
    const started: number[] = [];
    const queue = new FairQueue<number>({ queued: 2, concurrency: 2 }, (n) => {
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
    const queue = new FairQueue<number>({ queued: 5, concurrency: 1 }, async (n) => {
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
    const queue = new FairQueue<number>({ queued: 5, concurrency: 1 }, async () => {
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
    const queue = new FairQueue<number>({ queued: 1, concurrency: 1 }, () => new Promise<void>(() => undefined));
    queue.offer(1);
    await turn();
    expect(await queue.close(5)).toBe(0);
  });

  it('refuses limits it cannot honour', () => {
    expect(() => new FairQueue({ queued: 1, concurrency: 0 }, async () => undefined)).toThrow(RangeError);
    expect(() => new FairQueue({ queued: -1, concurrency: 1 }, async () => undefined)).toThrow(RangeError);
    expect(() => new FairQueue({ queued: 1, queuedPerKey: 0.5, concurrency: 1 }, async () => undefined)).toThrow(RangeError);
  });

  describe('with keys', () => {
    /** Items named `<key><n>`; one worker that finishes each job on the next turn. Answers the start order. */
    async function served(offers: string[], limits: FairQueueLimits = { queued: 100, concurrency: 1 }): Promise<{ started: string[]; accepted: boolean[] }> {
      const started: string[] = [];
      const queue = new FairQueue<string>(
        limits,
        async (item) => void started.push(item),
        (item) => item[0]!,
      );
      const accepted = offers.map((item) => queue.offer(item));
      for (let i = 0; i < offers.length * 3; i++) await turn();
      return { started, accepted };
    }

    it("serves keys in turn: B's single item waits for one of A's, not for the 40 A offered first", async () => {
      const offers = [...Array.from({ length: 40 }, (_, n) => `a${n}`), 'b0'];
      const { started } = await served(offers);
      expect(started.slice(0, 2)).toEqual(['a0', 'b0']);
      expect(started).toHaveLength(41);
    });

    it('rotates over three keys, each in its own order', async () => {
      const { started } = await served(['a0', 'a1', 'a2', 'a3', 'b0', 'b1', 'c0']);
      expect(started).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'a3']);
    });

    it('a newcomer waits behind the keys already in rotation, one item each', async () => {
      const g = gate();
      const started: string[] = [];
      const queue = new FairQueue<string>(
        { queued: 100, concurrency: 1 },
        async (item) => {
          started.push(item);
          if (item === 'a0') await g.opened;
        },
        (item) => item[0]!,
      );
      for (const item of ['a0', 'a1', 'a2', 'b0', 'b1']) queue.offer(item);
      await turn();
      expect(started).toEqual(['a0']);
      queue.offer('c0');
      g.open();
      for (let i = 0; i < 20; i++) await turn();
      expect(started).toEqual(['a0', 'b0', 'a1', 'c0', 'b1', 'a2']);
    });

    it("drops an offer past its key's share, while other keys still get in", async () => {
      const { accepted, started } = await served(['a0', 'a1', 'a2', 'b0', 'a3', 'b1'], { queued: 5, queuedPerKey: 2, concurrency: 1 });
      expect(accepted).toEqual([true, true, false, true, false, true]);
      expect(started).toEqual(['a0', 'b0', 'a1', 'b1']);
    });
  });
});

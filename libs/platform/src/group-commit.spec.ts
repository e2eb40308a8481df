import { GroupCommit } from './group-commit';

/** A writer whose writes finish only when the test says so, recording every batch it was given. */
function controlledWriter() {
  const batches: number[][] = [];
  const finishers: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  const write = (items: readonly number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push([...items]);
      finishers.push({ resolve, reject });
    });
  /** The settlers of the index-th write, which must have started. */
  const finisher = (index: number) => {
    const found = finishers[index];
    if (!found) throw new Error(`write ${index} has not started`);
    return found;
  };
  return { batches, finisher, write };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Observes a promise's outcome without awaiting it. */
function track(promise: Promise<void>) {
  const state: { outcome: 'pending' | 'written' | 'failed'; error?: unknown } = { outcome: 'pending' };
  promise.then(
    () => (state.outcome = 'written'),
    (error: unknown) => {
      state.outcome = 'failed';
      state.error = error;
    },
  );
  return state;
}

describe('GroupCommit', () => {
  it('writes items added in the same event-loop turn together, once', async () => {
    const writer = controlledWriter();
    const commit = new GroupCommit(writer.write, { maxBatch: 100 });
    const added = [1, 2, 3].map((n) => track(commit.add(n)));
    await turn();
    expect(writer.batches).toEqual([[1, 2, 3]]);
    writer.finisher(0).resolve();
    await turn();
    expect(added.map((state) => state.outcome)).toEqual(['written', 'written', 'written']);
  });

  it('does not settle an add before the write carrying its item has finished', async () => {
    const writer = controlledWriter();
    const commit = new GroupCommit(writer.write, { maxBatch: 100 });
    const added = track(commit.add(1));
    await turn();
    await turn();
    expect(added.outcome).toBe('pending');
    writer.finisher(0).resolve();
    await turn();
    expect(added.outcome).toBe('written');
  });

  it('accumulates items while a write is in flight and writes them all in the next one', async () => {
    const writer = controlledWriter();
    const commit = new GroupCommit(writer.write, { maxBatch: 100 });
    const first = track(commit.add(1));
    await turn();
    const later = [2, 3, 4, 5].map((n) => track(commit.add(n)));
    await turn();
    expect(writer.batches).toEqual([[1]]);
    expect(commit.waiting).toBe(4);
    writer.finisher(0).resolve();
    await turn();
    expect(first.outcome).toBe('written');
    expect(later.map((state) => state.outcome)).toEqual(['pending', 'pending', 'pending', 'pending']);
    expect(writer.batches).toEqual([[1], [2, 3, 4, 5]]);
    writer.finisher(1).resolve();
    await turn();
    expect(later.map((state) => state.outcome)).toEqual(['written', 'written', 'written', 'written']);
  });

  it('never puts more than maxBatch items in one write', async () => {
    const writer = controlledWriter();
    const commit = new GroupCommit(writer.write, { maxBatch: 2 });
    const added = [1, 2, 3, 4, 5].map((n) => track(commit.add(n)));
    await turn();
    for (let written = 0; written < 3; written += 1) {
      writer.finisher(written).resolve();
      await turn();
    }
    expect(writer.batches).toEqual([[1, 2], [3, 4], [5]]);
    expect(added.every((state) => state.outcome === 'written')).toBe(true);
  });

  it('fails every item of a failed write with its error, and only those', async () => {
    const writer = controlledWriter();
    const commit = new GroupCommit(writer.write, { maxBatch: 100 });
    const failing = [1, 2, 3].map((n) => track(commit.add(n)));
    await turn();
    const next = [4, 5].map((n) => track(commit.add(n)));
    const refusal = new Error('connection lost');
    writer.finisher(0).reject(refusal);
    await turn();
    expect(failing.map((state) => [state.outcome, state.error])).toEqual([
      ['failed', refusal],
      ['failed', refusal],
      ['failed', refusal],
    ]);
    expect(writer.batches[1]).toEqual([4, 5]);
    writer.finisher(1).resolve();
    await turn();
    expect(next.map((state) => state.outcome)).toEqual(['written', 'written']);
  });

  it('fails the batch when the writer throws before returning a promise, and keeps going', async () => {
    let calls = 0;
    const commit = new GroupCommit<number>(
      (() => {
        calls += 1;
        if (calls === 1) throw new Error('no connection');
        return Promise.resolve();
      }) as (items: readonly number[]) => Promise<void>,
      { maxBatch: 10 },
    );
    await expect(commit.add(1)).rejects.toThrow('no connection');
    await expect(commit.add(2)).resolves.toBeUndefined();
  });

  it('reports idle only once every item added has been written', async () => {
    const writer = controlledWriter();
    const commit = new GroupCommit(writer.write, { maxBatch: 100 });
    await expect(commit.idle()).resolves.toBeUndefined();
    void commit.add(1);
    const idle = track(commit.idle());
    await turn();
    void commit.add(2);
    writer.finisher(0).resolve();
    await turn();
    expect(idle.outcome).toBe('pending');
    writer.finisher(1).resolve();
    await turn();
    expect(idle.outcome).toBe('written');
  });

  it('refuses a batch size that is not a positive integer', () => {
    expect(() => new GroupCommit(async () => undefined, { maxBatch: 0 })).toThrow(RangeError);
  });
});

import { LoadingCache } from './loading-cache';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A load that waits until released, to change things while it is in flight. */
function heldLoad<V>(value: V) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const load = jest.fn(async () => {
    await held;
    return value;
  });
  return { load, release };
}

describe('LoadingCache', () => {
  it('loads a key once and answers from memory after that', async () => {
    const cache = new LoadingCache<string, { n: number }>({ max: 10 });
    const load = jest.fn(async () => ({ n: 1 }));
    expect(await cache.get('a', load)).toEqual({ n: 1 });
    expect(await cache.get('a', load)).toEqual({ n: 1 });
    expect(cache.peek('a')).toEqual({ n: 1 });
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('shares one load among the callers that miss at once', async () => {
    const cache = new LoadingCache<string, string>({ max: 10 });
    const { load, release } = heldLoad('value');
    const answers = Promise.all([cache.get('a', load), cache.get('a', load), cache.get('a', load)]);
    release();
    expect(await answers).toEqual(['value', 'value', 'value']);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('keeps misses only when told to, and apart from values', async () => {
    const forgetful = new LoadingCache<string, string>({ max: 10 });
    const none = jest.fn(async () => null);
    expect(await forgetful.get('x', none)).toBeNull();
    expect(forgetful.peek('x')).toBeUndefined();
    expect(await forgetful.get('x', none)).toBeNull();
    expect(none).toHaveBeenCalledTimes(2);

    const cache = new LoadingCache<string, string>({ max: 2, missTtlMs: 60_000 });
    await cache.get('kept', async () => 'value');
    for (const key of ['m1', 'm2', 'm3']) expect(await cache.get(key, none)).toBeNull();
    expect(cache.peek('m3')).toBeNull();
    // Three misses in a cache of two evicted a miss, not the value.
    expect(cache.peek('m1')).toBeUndefined();
    expect(cache.peek('kept')).toBe('value');
    expect(cache.size).toEqual({ values: 1, misses: 2 });
  });

  it('evicts the least recently used value past its size', async () => {
    const cache = new LoadingCache<string, string>({ max: 2 });
    await cache.get('a', async () => 'A');
    await cache.get('b', async () => 'B');
    await cache.get('a', async () => 'unused');
    await cache.get('c', async () => 'C');
    expect(cache.peek('a')).toBe('A');
    expect(cache.peek('b')).toBeUndefined();
  });

  it('loads again once a value or a miss has outlived its TTL', async () => {
    const cache = new LoadingCache<string, string>({ max: 10, ttlMs: 20, missTtlMs: 20 });
    await cache.get('a', async () => 'old');
    await cache.get('m', async () => null);
    await sleep(40);
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('m')).toBeUndefined();
    expect(await cache.get('a', async () => 'new')).toBe('new');
  });

  it('keeps nothing of a failed load, and the next caller tries again', async () => {
    const cache = new LoadingCache<string, string>({ max: 10, missTtlMs: 60_000 });
    await expect(cache.get('a', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await expect(
      cache.get('a', () => {
        throw new Error('thrown before any promise');
      }),
    ).rejects.toThrow('thrown before any promise');
    expect(cache.peek('a')).toBeUndefined();
    expect(await cache.get('a', async () => 'up')).toBe('up');
  });

  it('does not keep a load that began before the key was forgotten, and starts a fresh one', async () => {
    const cache = new LoadingCache<string, string>({ max: 10 });
    const stale = heldLoad('old');
    const inFlight = cache.get('a', stale.load);
    cache.forget('a');
    const fresh = jest.fn(async () => 'new');
    expect(await cache.get('a', fresh)).toBe('new');
    stale.release();
    // Its own caller still gets what it read; it is not put back over the fresh value.
    expect(await inFlight).toBe('old');
    expect(cache.peek('a')).toBe('new');
  });

  it('does not keep a load that began before everything was forgotten', async () => {
    const cache = new LoadingCache<string, string>({ max: 10, missTtlMs: 60_000 });
    await cache.get('kept', async () => 'value');
    await cache.get('missing', async () => null);
    const stale = heldLoad('old');
    const inFlight = cache.get('a', stale.load);
    cache.forgetAll();
    stale.release();
    expect(await inFlight).toBe('old');
    expect(cache.size).toEqual({ values: 0, misses: 0 });
  });
});

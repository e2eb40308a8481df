import { BroadcastInvalidatedCache, NoticeBus, NoticeCodec } from './broadcast-invalidated-cache';

/** A bus in memory: every subscriber hears every notice, its own included, at once. */
function memoryBus() {
  const listeners = new Map<string, Set<(payload: string | null) => void>>();
  const disconnectListeners = new Set<() => void>();
  const bus: NoticeBus = {
    subscribe(subject, onNotice) {
      const set = listeners.get(subject) ?? new Set();
      listeners.set(subject, set);
      set.add(onNotice);
      return { unsubscribe: () => set.delete(onNotice) };
    },
    publish(subject, payload) {
      for (const listener of listeners.get(subject) ?? []) listener(payload);
    },
    onDisconnect(listener) {
      disconnectListeners.add(listener);
      return { unsubscribe: () => disconnectListeners.delete(listener) };
    },
  };
  return {
    bus,
    listeners: (subject: string) => listeners.get(subject)?.size ?? 0,
    disconnect: () => disconnectListeners.forEach((listener) => listener()),
    garble: (subject: string) => listeners.get(subject)?.forEach((listener) => listener(null)),
  };
}

const SUBJECT = 'test.thing.changed';

function replicas(bus: NoticeBus, options: { codec?: NoticeCodec<string>; forgetAllOnDisconnect?: boolean } = {}) {
  const make = () => new BroadcastInvalidatedCache<string, string>({ bus, subject: SUBJECT, max: 10, ttlMs: 60_000, missTtlMs: 60_000, ...options });
  const caches = [make(), make()] as const;
  caches.forEach((cache) => cache.listen());
  return caches;
}

describe('BroadcastInvalidatedCache', () => {
  it('drops a changed key on every replica, the one that changed it included, and only that key', async () => {
    const { bus } = memoryBus();
    const [a, b] = replicas(bus);
    for (const cache of [a, b]) {
      await cache.get('changed', async () => 'old');
      await cache.get('missing', async () => null);
      await cache.get('other', async () => 'other');
    }
    a.invalidate('changed');
    b.invalidate('missing');
    for (const cache of [a, b]) {
      expect(cache.peek('changed')).toBeUndefined();
      expect(cache.peek('missing')).toBeUndefined();
      expect(cache.peek('other')).toBe('other');
    }
  });

  it('does not put back a load that was in flight on another replica when the notice came', async () => {
    const { bus } = memoryBus();
    const [a, b] = replicas(bus);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const inFlight = b.get('k', async () => {
      await held;
      return 'old';
    });
    a.invalidate('k');
    release();
    expect(await inFlight).toBe('old');
    expect(b.peek('k')).toBeUndefined();
  });

  it('writes keys into notices with its codec, and drops everything on a notice it cannot read', async () => {
    const { bus, garble } = memoryBus();
    const codec: NoticeCodec<string> = {
      encode: (key) => JSON.stringify({ key }),
      decode: (payload) => {
        try {
          const { key } = JSON.parse(payload) as { key?: unknown };
          return typeof key === 'string' ? key : null;
        } catch {
          return null;
        }
      },
    };
    const published: string[] = [];
    const [a, b] = replicas({ ...bus, publish: (subject, payload) => (published.push(payload), bus.publish(subject, payload)) }, { codec });
    await b.get('one', async () => '1');
    await b.get('two', async () => '2');
    a.invalidate('one');
    expect(published).toEqual(['{"key":"one"}']);
    expect(b.peek('one')).toBeUndefined();
    expect(b.peek('two')).toBe('2');

    bus.publish(SUBJECT, 'not json');
    expect(b.peek('two')).toBeUndefined();
    await b.get('three', async () => '3');
    garble(SUBJECT);
    expect(b.peek('three')).toBeUndefined();
  });

  it('forgets everything when the connection drops only when told to', async () => {
    const { bus, disconnect } = memoryBus();
    const [forgetful] = replicas(bus, { forgetAllOnDisconnect: true });
    const [keeper] = replicas(bus);
    await forgetful.get('k', async () => 'v');
    await keeper.get('k', async () => 'v');
    disconnect();
    expect(forgetful.peek('k')).toBeUndefined();
    expect(keeper.peek('k')).toBe('v');
  });

  it('stops hearing notices once closed, and listens once however often it is asked to', async () => {
    const { bus, listeners } = memoryBus();
    const cache = new BroadcastInvalidatedCache<string, string>({ bus, subject: SUBJECT, max: 10, forgetAllOnDisconnect: true });
    cache.listen();
    cache.listen();
    expect(listeners(SUBJECT)).toBe(1);
    cache.close();
    expect(listeners(SUBJECT)).toBe(0);
    await cache.get('k', async () => 'v');
    bus.publish(SUBJECT, 'k');
    expect(cache.peek('k')).toBe('v');
  });
});

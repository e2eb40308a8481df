import { LRUCache } from 'lru-cache';

export interface LoadingCacheOptions {
  /** Entries kept at most; the least recently used leave first. Misses are bounded by the same number, apart. */
  max: number;
  /** How long a loaded value is answered from memory; unset keeps it until it is evicted or forgotten. */
  ttlMs?: number;
  /**
   * How long "there is no such thing" is answered from memory; unset asks again every time. Misses live apart
   * from values, so a flood of unknown keys can evict only other misses, never a value that is in use.
   */
  missTtlMs?: number;
}

/** Anything but null and undefined, which lru-cache cannot hold (and null means a miss here). */
export type CacheableValue = NonNullable<unknown>;

/**
 * Values loaded on demand and kept in memory, least recently used first out. Callers that miss on the same key
 * at once share one load. Forgetting a key (or everything) moves a generation: a load that began before it may
 * have read the old value, so it answers its callers but is not kept.
 */
export class LoadingCache<K extends CacheableValue, V extends CacheableValue> {
  private readonly values: LRUCache<K, V>;
  private readonly misses: LRUCache<K, true> | null;
  private readonly loading = new Map<K, Promise<V | null>>();
  private generation = 0;

  constructor(options: LoadingCacheOptions) {
    this.values = new LRUCache({ max: options.max, ttl: options.ttlMs ?? 0 });
    this.misses = options.missTtlMs === undefined ? null : new LRUCache({ max: options.max, ttl: options.missTtlMs });
  }

  /** The kept value, null for a kept miss, undefined when nothing is kept for the key. */
  peek(key: K): V | null | undefined {
    const value = this.values.get(key);
    if (value !== undefined) return value;
    return this.misses?.has(key) ? null : undefined;
  }

  /** The kept value or miss, or else `load`'s answer (null: no such thing), shared with callers that miss meanwhile. */
  get(key: K, load: () => Promise<V>): Promise<V>;
  get(key: K, load: () => Promise<V | null>): Promise<V | null>;
  get(key: K, load: () => Promise<V | null>): Promise<V | null> {
    const kept = this.peek(key);
    if (kept !== undefined) return Promise.resolve(kept);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const generation = this.generation;
    let started: Promise<V | null>;
    try {
      started = load();
    } catch (error) {
      started = Promise.reject(error as Error);
    }
    const loaded = started.then(
      (value) => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
        if (generation === this.generation) this.keep(key, value);
        return value;
      },
      (error: unknown) => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
        throw error;
      },
    );
    this.loading.set(key, loaded);
    return loaded;
  }

  /** Drops one key's value, miss and load in flight; the next caller loads afresh. */
  forget(key: K): void {
    this.generation += 1;
    this.values.delete(key);
    this.misses?.delete(key);
    this.loading.delete(key);
  }

  forgetAll(): void {
    this.generation += 1;
    this.values.clear();
    this.misses?.clear();
    this.loading.clear();
  }

  /** Entries held now, values and misses apart (expired ones may still count until they are next touched). */
  get size(): { values: number; misses: number } {
    return { values: this.values.size, misses: this.misses?.size ?? 0 };
  }

  private keep(key: K, value: V | null): void {
    if (value !== null) this.values.set(key, value);
    else this.misses?.set(key, true);
  }
}

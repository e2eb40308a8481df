import { CacheableValue, LoadingCache, LoadingCacheOptions } from './loading-cache';
import type { NatsLink } from './nats';

/** What the cache needs of a message bus; `natsNotices` gives it over a NatsLink. */
export interface NoticeBus {
  subscribe(subject: string, onNotice: (payload: string | null) => void): { unsubscribe(): void };
  publish(subject: string, payload: string): void;
  /** Calls `listener` whenever the connection was lost, since notices sent meanwhile may never arrive. */
  onDisconnect(listener: () => void): { unsubscribe(): void };
}

/** Notices carry the string key as it is unless a codec says otherwise. */
export interface NoticeCodec<K> {
  encode(key: K): string;
  /** The key a notice names, or null when it cannot be read: something changed, so everything is dropped. */
  decode(payload: string): K | null;
}

export interface BroadcastInvalidatedCacheOptions<K> extends LoadingCacheOptions {
  bus: NoticeBus;
  /** The subject every replica's cache of this kind hears, and tells, what changed. */
  subject: string;
  codec?: NoticeCodec<K>;
  /** Drop everything when the connection drops, as notices may have been missed meanwhile. */
  forgetAllOnDisconnect?: boolean;
}

const KEY_AS_IS: NoticeCodec<string> = { encode: (key) => key, decode: (payload) => payload };

export function natsNotices(link: Pick<NatsLink, 'connection' | 'disconnects'>): NoticeBus {
  return {
    subscribe: (subject, onNotice) => link.connection.subscribe(subject, { callback: (error, message) => onNotice(error ? null : message.string()) }),
    publish: (subject, payload) => link.connection.publish(subject, payload),
    onDisconnect: (listener) => link.disconnects.subscribe(listener),
  };
}

/**
 * A per-replica LoadingCache that every replica keeps in step: a change is broadcast on `subject`, naming the
 * key, and every replica (the one that made it too) drops that key. The TTL bounds how long a replica can
 * miss a notice it never received. `listen` starts hearing notices and `close` stops, on module destroy.
 */
export class BroadcastInvalidatedCache<K extends string, V extends CacheableValue> extends LoadingCache<K, V> {
  private readonly bus: NoticeBus;
  private readonly subject: string;
  private readonly codec: NoticeCodec<K>;
  private readonly forgetAllOnDisconnect: boolean;
  private subscriptions: Array<{ unsubscribe(): void }> = [];

  constructor(options: BroadcastInvalidatedCacheOptions<K>) {
    super(options);
    this.bus = options.bus;
    this.subject = options.subject;
    this.codec = options.codec ?? (KEY_AS_IS as unknown as NoticeCodec<K>);
    this.forgetAllOnDisconnect = options.forgetAllOnDisconnect ?? false;
  }

  listen(): void {
    if (this.subscriptions.length > 0) return;
    this.subscriptions.push(this.bus.subscribe(this.subject, (payload) => this.noticed(payload)));
    if (this.forgetAllOnDisconnect) this.subscriptions.push(this.bus.onDisconnect(() => this.forgetAll()));
  }

  close(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
  }

  /**
   * Called once a change to `key` has committed: drops it here at once and tells every replica. Throws when the
   * notice cannot be published; the other replicas then see the change when their entry expires.
   */
  invalidate(key: K): void {
    this.forget(key);
    this.bus.publish(this.subject, this.codec.encode(key));
  }

  private noticed(payload: string | null): void {
    const key = payload === null ? null : this.codec.decode(payload);
    if (key === null) this.forgetAll();
    else this.forget(key);
  }
}

import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Subscription } from 'nats';
import { Subscription as RxSubscription } from 'rxjs';
import { BROADCAST_SUBJECTS, ResolvedHook, SUBJECTS } from '@ds/contracts';
import { NatsLink, PLATFORM, publishBroadcast, RpcClient } from '@ds/platform';
import { sha256 } from '../auth/tokens';
import { GatewayConfig } from '../config';

export const HOOK_TOKEN_PATTERN = /^whk_[A-Za-z0-9]{32}$/;

/** A resolution is re-read after this long even if no change notice arrived. */
const KNOWN_TTL_MS = 30_000;
/** Unknown tokens are answered from memory this long, apart from the known ones (a flood evicts only misses). */
const UNKNOWN_TTL_MS = 5_000;
const CHANGED_SUBJECT = BROADCAST_SUBJECTS.gatewayHookChanged;
/** The longest a change waits for the server to hold its notices. */
const FLUSH_WAIT_MS = 2_000;

/**
 * Secret-URL tokens resolved by decision-runner, which owns them, and kept per gateway replica keyed by the
 * token's hash. Turning a URL off, rotating it or changing its secret is broadcast by the replica that
 * handled it once the runner has committed, and every replica drops the entry, so an old URL answers 404
 * everywhere at once. A resolution begun before a change is not kept; a replica that lost NATS (and so
 * perhaps a notice) forgets everything.
 */
@Injectable()
export class HookTokens implements OnModuleInit, OnModuleDestroy {
  private readonly known: LRUCache<string, ResolvedHook>;
  private readonly unknown: LRUCache<string, true>;
  private generation = 0;
  private subscription: Subscription | null = null;
  private disconnects: RxSubscription | null = null;

  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    @Inject(PLATFORM.config) config: GatewayConfig,
  ) {
    this.known = new LRUCache({ max: config.apiKeyCacheMax, ttl: KNOWN_TTL_MS });
    this.unknown = new LRUCache({ max: config.apiKeyCacheMax, ttl: UNKNOWN_TTL_MS });
  }

  onModuleInit(): void {
    this.subscription = this.nats.connection.subscribe(CHANGED_SUBJECT, { callback: (_error, message) => this.forget(message.string()) });
    this.disconnects = this.nats.disconnects.subscribe(() => this.forget(null));
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
    this.disconnects?.unsubscribe();
  }

  /** The URL's decision and secret, or null for a token that is malformed, unknown, rotated away or off. */
  async resolve(token: string, requestId: string): Promise<ResolvedHook | null> {
    if (!HOOK_TOKEN_PATTERN.test(token)) return null;
    const hash = sha256(token);
    const cached = this.known.get(hash);
    if (cached) return cached;
    if (this.unknown.has(hash)) return null;
    const generation = this.generation;
    const hook = await this.rpc.call(SUBJECTS.runner.resolveHook, { tokenHash: hash }, { requestId });
    if (generation === this.generation) {
      if (hook) this.known.set(hash, hook);
      else this.unknown.set(hash, true);
    }
    return hook;
  }

  /**
   * Called once the runner has committed a change: every replica, this one included, drops these tokens. Settles
   * once the NATS server holds the notices (a flush), so the change is answered only after the server has passed
   * them on to every replica, ahead of any request the caller sends next.
   */
  async changed(hashes: readonly string[]): Promise<void> {
    for (const hash of hashes) {
      this.forget(hash);
      publishBroadcast(this.nats, CHANGED_SUBJECT, hash);
    }
    if (hashes.length === 0) return;
    // While NATS is away every replica forgets everything on reconnecting, so waiting longer buys nothing.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.nats.connection.flush(), new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_WAIT_MS)))]).catch(() => undefined);
    clearTimeout(timer);
  }

  /** Drops one token's entry, or every entry when `hash` is null. */
  private forget(hash: string | null): void {
    this.generation += 1;
    if (hash === null) {
      this.known.clear();
      this.unknown.clear();
    } else {
      this.known.delete(hash);
      this.unknown.delete(hash);
    }
  }
}

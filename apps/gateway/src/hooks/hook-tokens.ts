import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { BROADCAST_SUBJECTS, ResolvedHook, SUBJECTS } from '@ds/contracts';
import { BroadcastInvalidatedCache, NatsLink, natsNotices, PLATFORM, RpcClient } from '@ds/platform';
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
  /** By token hash; unknown tokens are kept as misses. */
  private readonly resolutions: BroadcastInvalidatedCache<string, ResolvedHook>;

  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    @Inject(PLATFORM.config) config: GatewayConfig,
  ) {
    this.resolutions = new BroadcastInvalidatedCache({
      bus: natsNotices(nats),
      subject: CHANGED_SUBJECT,
      max: config.apiKeyCacheMax,
      ttlMs: KNOWN_TTL_MS,
      missTtlMs: UNKNOWN_TTL_MS,
      forgetAllOnDisconnect: true,
    });
  }

  onModuleInit(): void {
    this.resolutions.listen();
  }

  onModuleDestroy(): void {
    this.resolutions.close();
  }

  /** The URL's decision and secret, or null for a token that is malformed, unknown, rotated away or off. */
  async resolve(token: string, requestId: string): Promise<ResolvedHook | null> {
    if (!HOOK_TOKEN_PATTERN.test(token)) return null;
    const hash = sha256(token);
    return this.resolutions.get(hash, () => this.rpc.call(SUBJECTS.runner.resolveHook, { tokenHash: hash }, { requestId }));
  }

  /**
   * Called once the runner has committed a change: every replica, this one included, drops these tokens. Settles
   * once the NATS server holds the notices (a flush), so the change is answered only after the server has passed
   * them on to every replica, ahead of any request the caller sends next.
   */
  async changed(hashes: readonly string[]): Promise<void> {
    for (const hash of hashes) this.resolutions.invalidate(hash);
    if (hashes.length === 0) return;
    // While NATS is away every replica forgets everything on reconnecting, so waiting longer buys nothing.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.nats.connection.flush(), new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_WAIT_MS)))]).catch(() => undefined);
    clearTimeout(timer);
  }
}

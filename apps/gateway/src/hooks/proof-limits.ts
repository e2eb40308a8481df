import { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { Logger } from '@ds/platform';
import { rateLimited } from '../limits/credential-limits';

/** Wrong proofs one secret URL takes in a minute; the next is answered 429 and the URL rests for a minute. */
export const WRONG_PROOFS_PER_MINUTE = 30;
export const WRONG_PROOF_BLOCK_S = 60;
const WINDOW_MS = 60_000;
const BLOCKED_MAX = 100_000;
const NAME = 'hook-proofs';

/**
 * The secret URL's own budget of wrong signatures and secrets, counted per decision (so a rotation does not
 * reset it) in the shared rate-limit store. Past it the URL refuses every call for a minute before any proof
 * is looked at, so that the refusal tells a guesser nothing about a guess. The replica that saw the block
 * remembers it, so its refused calls cost no store round trip; the others read it from the store.
 */
export class HookProofLimits {
  private readonly blocked = new LRUCache<string, true>({ max: BLOCKED_MAX });

  constructor(
    private readonly storage: ThrottlerStorage,
    private readonly keyPrefix: string,
    private readonly logger: Logger,
    private readonly blockedMs?: (key: string, name: string) => Promise<number>,
  ) {}

  /** Refuses a URL blocked by this replica, or (asking the shared store) by another one. */
  async refuseIfBlocked(decisionId: string): Promise<void> {
    if (this.blocked.getRemainingTTL(decisionId) > 0) throw this.refusal();
    if (!this.blockedMs) return;
    let ms: number;
    try {
      ms = await this.blockedMs(this.key(decisionId), NAME);
    } catch (error) {
      // Without the store the call goes on to its proof; wrong ones are still refused with 401.
      this.logger.warn({ err: error }, 'could not read whether a secret URL is blocked');
      return;
    }
    if (ms <= 0) return;
    this.blocked.set(decisionId, true, { ttl: ms });
    throw this.refusal();
  }

  /** Counts a wrong proof; throws the 429 when it is one too many. */
  async wrongProof(decisionId: string): Promise<void> {
    let blocked: boolean;
    let seconds = WRONG_PROOF_BLOCK_S;
    try {
      const counted = await this.storage.increment(this.key(decisionId), WINDOW_MS, WRONG_PROOFS_PER_MINUTE, WINDOW_MS, NAME);
      blocked = counted.isBlocked;
      if (counted.timeToBlockExpire > 0) seconds = counted.timeToBlockExpire;
    } catch (error) {
      // The 401 stands even when the store is away; only the counting is lost.
      this.logger.warn({ err: error }, 'could not count a wrong secret-URL proof');
      return;
    }
    if (!blocked) return;
    this.blocked.set(decisionId, true, { ttl: seconds * 1000 });
    throw this.refusal();
  }

  private key(decisionId: string): string {
    return `${this.keyPrefix}:hook-proofs:${decisionId}`;
  }

  private refusal() {
    return rateLimited(`More than ${WRONG_PROOFS_PER_MINUTE} calls with a wrong signature or secret reached this URL within a minute`, WRONG_PROOF_BLOCK_S);
  }
}

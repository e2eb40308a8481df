import { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { Logger } from '@ds/platform';
import { rateLimited } from '../limits/credential-limits';

/** Wrong proofs one secret URL takes in a minute; the next is answered 429 and the URL rests for a minute. */
export const WRONG_PROOFS_PER_MINUTE = 30;
export const WRONG_PROOF_BLOCK_S = 60;
const WINDOW_MS = 60_000;
const BLOCKED_MAX = 100_000;

/**
 * The secret URL's own budget of wrong signatures and secrets, counted per decision (so a rotation does not
 * reset it) in the shared rate-limit store. Past it the URL refuses every call for a minute before any proof
 * is looked at, so that the refusal tells a guesser nothing about a guess; the block is remembered by the
 * replica that saw it, so refused calls cost no store round trip.
 */
export class HookProofLimits {
  private readonly blocked = new LRUCache<string, true>({ max: BLOCKED_MAX });

  constructor(
    private readonly storage: ThrottlerStorage,
    private readonly keyPrefix: string,
    private readonly logger: Logger,
  ) {}

  refuseIfBlocked(decisionId: string): void {
    if (this.blocked.getRemainingTTL(decisionId) > 0) throw this.refusal();
  }

  /** Counts a wrong proof; throws the 429 when it is one too many. */
  async wrongProof(decisionId: string): Promise<void> {
    let blocked: boolean;
    let seconds = WRONG_PROOF_BLOCK_S;
    try {
      const counted = await this.storage.increment(`${this.keyPrefix}:hook-proofs:${decisionId}`, WINDOW_MS, WRONG_PROOFS_PER_MINUTE, WINDOW_MS, 'hook-proofs');
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

  private refusal() {
    return rateLimited(`More than ${WRONG_PROOFS_PER_MINUTE} calls with a wrong signature or secret reached this URL within a minute`, WRONG_PROOF_BLOCK_S);
  }
}

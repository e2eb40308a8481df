import { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { ServiceError } from '@ds/contracts';
import { Logger } from '@ds/platform';
import { sha256 } from '../auth/tokens';
import { CredentialLimitsConfig } from '../config';

export type CountedWindow = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * Whole seconds to wait once a count has gone past its limit, or null while it is within. The store
 * blocks a key for a whole window from the first count past the limit, so the wait is the block's.
 */
export function secondsToWait(counted: CountedWindow, limit: number): number | null {
  if (!counted.isBlocked && counted.totalHits <= limit) return null;
  return Math.max(1, counted.isBlocked ? counted.timeToBlockExpire : counted.timeToExpire);
}

export function rateLimited(message: string, retryAfterSeconds: number): ServiceError {
  return new ServiceError('RATE_LIMITED', `${message}; retry after ${retryAfterSeconds} seconds.`, { retryAfter: retryAfterSeconds });
}

/** Addresses this replica refuses without asking the store; more than this many at once evict the oldest. */
const BLOCKED_ADDRESSES_MAX = 100_000;
const ACCOUNT_WINDOW_MS = 60_000;

type AddressCount = 'sign-ups' | 'sign-ins' | 'operator' | 'auth-failures';

/**
 * Ceilings on presenting credentials, checked before anything costly (a password hash, a token
 * comparison, a key lookup) happens. Counts live in the shared rate-limit store so that every replica
 * sees the same numbers. Wrong credentials are counted per address; an address past its ceiling is
 * remembered here for the rest of its block, so a flood of random keys from it costs neither a database
 * query nor a store round trip per request, and nothing per key.
 */
export class CredentialLimits {
  private readonly blocked = new LRUCache<string, true>({ max: BLOCKED_ADDRESSES_MAX });

  constructor(
    private readonly storage: ThrottlerStorage,
    private readonly limits: CredentialLimitsConfig,
    private readonly keyPrefix: string,
    private readonly logger: Logger,
  ) {}

  async beforeSignUp(address: string, email: unknown): Promise<void> {
    await this.countAddress(address, 'sign-ups', this.limits.signUpsPerAddress, 'Too many sign-ups from this address');
    await this.countAccount(email);
  }

  async beforeSignIn(address: string, email: unknown): Promise<void> {
    await this.countAddress(address, 'sign-ins', this.limits.signInsPerAddress, 'Too many sign-in attempts from this address');
    await this.countAccount(email);
  }

  async beforeOperatorRequest(address: string): Promise<void> {
    this.refuseIfBlocked(address);
    await this.countAddress(address, 'operator', this.limits.operatorRequestsPerAddress, 'Too many operator requests from this address');
  }

  /**
   * Runs `check` (a key lookup, a session lookup, a token comparison) unless the address is refused; a
   * credential that was sent and answered 401 counts against the address. Requests without any
   * credential cost nothing to refuse and are not counted.
   */
  async authenticate<T>(address: string, credential: string | null, check: () => Promise<T>): Promise<T> {
    if (credential === null) return check();
    this.refuseIfBlocked(address);
    try {
      return await check();
    } catch (error) {
      if (error instanceof ServiceError && error.status === 401) await this.countFailure(address);
      throw error;
    }
  }

  refuseIfBlocked(address: string): void {
    const msLeft = this.blocked.getRemainingTTL(address);
    if (msLeft > 0) throw rateLimited('Too many failed authentications from this address', Math.ceil(msLeft / 1000));
  }

  private async countFailure(address: string): Promise<void> {
    try {
      const counted = await this.count(`auth-failures:${address}`, 'auth-failures', this.limits.authFailuresPerAddress, this.windowMs);
      const wait = secondsToWait(counted, this.limits.authFailuresPerAddress);
      if (wait !== null) this.blocked.set(address, true, { ttl: wait * 1000 });
    } catch (error) {
      // The 401 stands even when the store is away; only the counting is lost.
      this.logger.warn({ err: error }, 'could not count a failed authentication');
    }
  }

  private async countAddress(address: string, kind: AddressCount, limit: number, refusal: string): Promise<void> {
    const counted = await this.count(`${kind}:${address}`, kind, limit, this.windowMs);
    const wait = secondsToWait(counted, limit);
    if (wait !== null) throw rateLimited(refusal, wait);
  }

  /** Keyed by a hash of the e-mail, so that the store never holds addresses of people. */
  private async countAccount(email: unknown): Promise<void> {
    if (typeof email !== 'string') return;
    const limit = this.limits.attemptsPerAccount;
    const counted = await this.count(`account:${sha256(email.toLowerCase())}`, 'account', limit, ACCOUNT_WINDOW_MS);
    const wait = secondsToWait(counted, limit);
    if (wait !== null) throw rateLimited('Too many sign-in attempts for this e-mail', wait);
  }

  private count(key: string, name: string, limit: number, windowMs: number): Promise<CountedWindow> {
    return this.storage.increment(`${this.keyPrefix}:credentials:${key}`, windowMs, limit, windowMs, name);
  }

  private get windowMs(): number {
    return this.limits.addressWindowSeconds * 1000;
  }
}

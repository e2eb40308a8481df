import { createHash, randomBytes } from 'node:crypto';
import { randomAlphanumeric } from '@ds/ids';

/** `whk_` + 32 letters and digits: about 190 bits, so the URL itself is the credential. */
export function newHookToken(): string {
  return `whk_${randomAlphanumeric(32)}`;
}

/**
 * `whsec_` + base64 of 32 random bytes: the form Standard Webhooks uses, so libraries that expect it can
 * verify with it; the HMAC key is the whole string, as Stripe's is.
 */
export function newHookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

import { createHash } from 'node:crypto';

/**
 * Shared-key slots: how many engine calls may be in flight at once on the service's own provider key,
 * counted across every engine-proxy replica. A slot is a lease that expires by itself, so the slots of a
 * replica that dies mid-call come back without anyone releasing them.
 */

/**
 * Added to a lease beyond the call's own deadline. The call gives its slot back in a `finally` right after
 * the deadline at the latest; the margin covers a busy event loop between the two, and only a crashed
 * replica ever waits it out.
 */
export const SLOT_LEASE_MARGIN_MS = 5_000;

/** Polling bounds while waiting for a slot; a release notice usually wakes the waiter sooner. */
export const SLOT_POLL_FIRST_MS = 10;
export const SLOT_POLL_MAX_MS = 200;

/** How long a slot taken now is held at most: until the call's deadline, plus the margin. */
export function slotLeaseMs(msLeft: number): number {
  return Math.max(0, Math.ceil(msLeft)) + SLOT_LEASE_MARGIN_MS;
}

/**
 * The wait before poll number `attempt` (0-based): doubling from 10 ms up to 200 ms with ±25 % jitter, so
 * replicas waiting on the same key do not poll in step; never past the time left.
 */
export function slotPollDelayMs(attempt: number, msLeft: number, random: () => number = Math.random): number {
  const base = Math.min(SLOT_POLL_MAX_MS, SLOT_POLL_FIRST_MS * 2 ** Math.min(attempt, 16));
  const jittered = base * (0.75 + random() * 0.5);
  return Math.max(0, Math.min(Math.round(jittered), Math.floor(msLeft)));
}

/**
 * Identifies the shared credential without revealing it: providers limit per key and per address, so two
 * deployments pointed at the same provider with the same key share one budget, and different keys (or a
 * test's own simulator) never share one.
 */
export function sharedKeyFingerprint(protocol: string, baseUrl: string, apiKey: string): string {
  return createHash('sha256')
    .update(`${protocol}\u0000${baseUrl.replace(/\/+$/, '')}\u0000${apiKey}`)
    .digest('hex')
    .slice(0, 24);
}

/** The Redis key of the sorted set of leases (member = lease id, score = expiry in ms of Redis time). */
export function slotSetKey(fingerprint: string): string {
  return `ds:engine-proxy:slots:${fingerprint}`;
}

/** The channel on which a release is announced, so waiters on every replica try again at once. */
export function slotFreedChannel(fingerprint: string): string {
  return `ds:engine-proxy:slots-freed:${fingerprint}`;
}

import { LedgerError, resolvePending, Transfer } from './ledger';

/**
 * Budget leases: the ledger holds N decisions of a period's included volume for a workspace at once (one durable
 * hold), and runs take them one by one from a counter in Redis, so step 6 costs the run path one Redis script
 * instead of a NATS hop and a PostgreSQL statement. The hold shrinks as settlements post against it; what no run
 * used is voided when the lease is reclaimed.
 */
export const LEASE_LIMITS = {
  /** A lease is sized to about this much of the workspace's recent rate. */
  windowMs: 1_000,
  /** Runs may take units for this long after the grant; the counter is then dead and its rest is reclaimed. */
  ttlMs: 2_000,
  /** Fewer units than this are not worth a lease: the last decisions before the edge go one at a time. */
  minUnits: 2,
  maxUnits: 5_000,
  /** A lease never takes more than this share of the room left, so that it shrinks as the edge nears. */
  roomShare: 0.5,
} as const;

/** Units per second the previous lease was used at: its units over the time until the next one was asked for. */
export function leaseRate(previous: { units: number; grantedAt: Date } | null, now: Date): number {
  if (!previous) return 0;
  const seconds = Math.max(now.getTime() - previous.grantedAt.getTime(), 1) / 1_000;
  return previous.units / seconds;
}

/**
 * How many decisions the next lease holds: about a window of the recent rate, at most half the room left in the
 * included volume, and none (0) when that is fewer than LEASE_LIMITS.minUnits. So leases shrink as the edge nears
 * and the last decisions before it are reserved one at a time, exactly as without leases. A workspace ramping up
 * reaches its rate at the second grant: its first small lease is used up within milliseconds, and that rate is
 * what the next one is sized by. One that went quiet gets a small lease again, so nothing idles in a lease.
 */
export function leaseSize(input: { ratePerSecond: number; room: number }): number {
  const byRate = Math.ceil((input.ratePerSecond * LEASE_LIMITS.windowMs) / 1_000);
  const wanted = Math.min(Math.max(byRate, LEASE_LIMITS.minUnits), LEASE_LIMITS.maxUnits);
  const size = Math.min(wanted, Math.floor(Math.max(input.room, 0) * LEASE_LIMITS.roomShare));
  return size >= LEASE_LIMITS.minUnits ? size : 0;
}

/**
 * The share of a lease still untaken when a runner asks for the next one: half, or more when grants are slow. A
 * lease holds about LEASE_LIMITS.windowMs of the workspace's rate, so what is left at the ask must last twice the
 * time a grant takes now (`grantMs`), else runs find the counter empty while the grant is on its way; with grants
 * as slow as half a window the next is asked for as soon as a lease starts to be used.
 */
export function refillShare(grantMs: number): number {
  return Math.min(1, Math.max(0.5, (2 * Math.max(grantMs, 0)) / LEASE_LIMITS.windowMs));
}

export interface LeaseAccounts {
  includedVolumeId: string;
  decisionsBilledId: string;
}

/** The lease's hold: its units taken from the included volume, caused by the lease id. `seq` numbers its successive holds. */
export function leaseHold(leaseId: string, seq: number, workspaceId: string, units: number, accounts: LeaseAccounts): Transfer {
  if (!Number.isInteger(units) || units <= 0) throw new LedgerError(`a lease holds a positive whole number of decisions, not ${units}`);
  return {
    id: `${leaseId}:hold:${seq}`,
    causeId: leaseId,
    workspaceId,
    ledger: 'decisions',
    debitAccountId: accounts.includedVolumeId,
    creditAccountId: accounts.decisionsBilledId,
    amount: BigInt(units),
    phase: 'pending',
    pendingId: null,
    code: 'included_decision',
  };
}

/**
 * Moves a lease's hold on: each billed execution gets its decision posted (a transfer caused by the execution, so
 * its billing record is found by its id as for any reservation, naming the decision that ran as `decisions` says), `freed` units go back to the budget, and what
 * is left stays held under the next hold. A hold is resolved once (void) and a smaller one takes its place, so
 * every entry stays a plain TigerBeetle transfer and the books replay from the entries alone.
 */
export function leaseSettlement(
  current: Transfer,
  billedExecutionIds: string[],
  freed: number,
  decisions: ReadonlyMap<string, string | null> = new Map(),
): { transfers: Transfer[]; next: Transfer | null } {
  const taken = BigInt(billedExecutionIds.length) + BigInt(freed);
  if (freed < 0 || taken > current.amount) throw new LedgerError(`lease hold ${current.id} holds ${current.amount}, not ${taken}`);
  if (taken === 0n) return { transfers: [], next: current };
  const transfers: Transfer[] = [resolvePending(current, 'void')];
  const rest = current.amount - taken;
  let next: Transfer | null = null;
  if (rest > 0n) {
    const seq = Number(current.id.slice(current.id.lastIndexOf(':') + 1)) + 1;
    next = { ...current, id: `${current.causeId}:hold:${seq}`, amount: rest };
    transfers.push(next);
  }
  for (const executionId of billedExecutionIds) {
    transfers.push({
      ...current,
      id: `${executionId}:lease`,
      causeId: executionId,
      amount: 1n,
      phase: 'single',
      pendingId: null,
      decisionId: decisions.get(executionId) ?? null,
    });
  }
  return { transfers, next };
}

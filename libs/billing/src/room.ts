import { CreditSource, totalAvailable } from './consumption';
import { centsToMicros } from './units';

/**
 * How many decisions step 6 still lets through in a period, written once for the one-decision verdict
 * (reservation-verdict.ts), the lease grant (lease-rules.ts) and the one-statement reserve of the ledger, which
 * takes what it computed only while the two numbers are still the ones it read.
 */

/** Decisions of the included volume not yet taken (held ones count as taken); 0 or less means none. */
export function includedRoom(includedDecisions: number, used: number): number {
  return includedDecisions - used;
}

export interface OverageRoomInput {
  unitPriceMicros: bigint;
  /** Usable sources (see consumptionOrder). */
  sources: CreditSource[];
  /** Paid in the period from credits or balance, held amounts included. */
  spentMicros: bigint;
  spendCapCents: number | null;
}

/**
 * Decisions past the included volume, by each of the two limits step 6 checks in the spec's order: what the
 * credits pay for, then what fits under the spend cap with what is spent and held. A price of 0 takes no credits,
 * so only a cap already passed stops it. `Infinity` where a limit does not limit; otherwise at most
 * Number.MAX_SAFE_INTEGER.
 */
export function overageRoom(input: OverageRoomInput): { credits: number; underCap: number } {
  const price = input.unitPriceMicros;
  const cap = input.spendCapCents === null ? null : centsToMicros(input.spendCapCents);
  if (price === 0n) return { credits: Infinity, underCap: cap !== null && input.spentMicros > cap ? 0 : Infinity };
  return {
    credits: safeCount(totalAvailable(input.sources) / price),
    underCap: cap === null ? Infinity : safeCount(cap > input.spentMicros ? (cap - input.spentMicros) / price : 0n),
  };
}

function safeCount(count: bigint): number {
  return Number(count > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : count);
}

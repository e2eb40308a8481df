/**
 * Money is kept in micro-cents (10⁻⁶ cent) as bigint. A price per million decisions in cents is then, unchanged,
 * the exact price of one decision in micro-cents, so no amount is ever rounded inside the ledger.
 */
export const MICROS_PER_CENT = 1_000_000n;

export function centsToMicros(cents: number): bigint {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`cents must be a safe integer (got ${cents})`);
  return BigInt(cents) * MICROS_PER_CENT;
}

/** The API reports whole cents rounded down, so it never shows money that is not there. */
export function microsToCents(micros: bigint): number {
  const quotient = micros / MICROS_PER_CENT;
  // BigInt division truncates toward zero; below zero, rounding down is one less.
  return Number(micros % MICROS_PER_CENT < 0n ? quotient - 1n : quotient);
}

export function decisionPriceMicros(pricePerMillionCents: number): bigint {
  if (!Number.isSafeInteger(pricePerMillionCents) || pricePerMillionCents < 0) {
    throw new RangeError(`a price per million decisions must be a non-negative integer of cents (got ${pricePerMillionCents})`);
  }
  return BigInt(pricePerMillionCents);
}

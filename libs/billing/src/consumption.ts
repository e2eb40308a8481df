/** Money a workspace can spend: one promotional grant, or the paid balance. */
export interface CreditSource {
  accountId: string;
  kind: 'promotional' | 'paid';
  grantId: string | null;
  expiresAt: Date | null;
  grantedAt: Date;
  availableMicros: bigint;
}

export interface Allocation {
  source: CreditSource;
  amountMicros: bigint;
}

/**
 * The spec's order: promotional credits soonest-expiring first (those without an expiry after every dated one,
 * oldest grant first on a tie), then the paid balance. Expired and empty sources are left out.
 */
export function consumptionOrder(sources: CreditSource[], now: Date): CreditSource[] {
  const usable = sources.filter((source) => source.availableMicros > 0n && (source.expiresAt === null || source.expiresAt > now));
  const rank = (source: CreditSource) => (source.kind === 'paid' ? 2 : source.expiresAt === null ? 1 : 0);
  return usable.sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (a.expiresAt?.getTime() ?? 0) - (b.expiresAt?.getTime() ?? 0) ||
      a.grantedAt.getTime() - b.grantedAt.getTime() ||
      (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0),
  );
}

export function totalAvailable(sources: CreditSource[]): bigint {
  return sources.reduce((sum, source) => sum + source.availableMicros, 0n);
}

/** Takes `costMicros` from the sources in the order given, splitting across them; null when they do not cover it. */
export function allocate(ordered: CreditSource[], costMicros: bigint): Allocation[] | null {
  const allocations: Allocation[] = [];
  let remaining = costMicros;
  for (const source of ordered) {
    if (remaining === 0n) break;
    const amountMicros = source.availableMicros < remaining ? source.availableMicros : remaining;
    if (amountMicros <= 0n) continue;
    allocations.push({ source, amountMicros });
    remaining -= amountMicros;
  }
  return remaining === 0n ? allocations : null;
}

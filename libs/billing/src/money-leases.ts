import { Charge } from './holds';
import { allocate, CreditSource } from './consumption';
import { LedgerError, resolvePending, Transfer } from './ledger';
import { LEASE_LIMITS } from './leases';
import { overageRoom, OverageRoomInput } from './room';

/**
 * Money leases: past the included volume, a lease holds N overage decisions and the money for them, taken from
 * the credit sources in consumption order, as one set of holds. Each billed execution is then posted exactly as
 * a reservation of its own would have been: one overage decision and the charges for its price from the front
 * of what the lease holds (the earliest sources first), naming its decision. Units freed (handed back, reclaimed,
 * closed) give back their money from the rear, so what stays held is always what the next billed runs would pay
 * from, in consumption order.
 */

/** What a money lease still holds of one credit source; `heldMicros` 0 once billed runs used it up. */
export interface LeaseSource {
  accountId: string;
  kind: 'promotional' | 'paid';
  grantId: string | null;
  heldMicros: bigint;
}

export interface MoneyLeaseAccounts {
  overageVolumeId: string;
  decisionsBilledId: string;
  spendId: string;
}

/** A money lease's holds as its row records them: `held` decisions and the money for them, per source. */
export interface MoneyLease {
  id: string;
  workspaceId: string;
  currency: Transfer['ledger'];
  /** The number of the lease's current holds. */
  seq: number;
  held: number;
  unitPriceMicros: bigint;
  sources: LeaseSource[];
  accounts: MoneyLeaseAccounts;
}

/**
 * How many decisions past the included volume a money lease may hold: as many as step 6 would let through one by
 * one (credits first, then the cap), the smaller of the two limits of overageRoom. `Infinity` when nothing
 * limits the count.
 */
export function moneyLeaseRoom(input: OverageRoomInput): number {
  const room = overageRoom(input);
  return Math.min(room.credits, room.underCap);
}

/** The money for `units` decisions taken from the sources in the order given; null when they do not cover it. */
export function moneyLeaseSources(ordered: CreditSource[], unitPriceMicros: bigint, units: number): LeaseSource[] | null {
  if (!Number.isInteger(units) || units <= 0) throw new LedgerError(`a lease holds a positive whole number of decisions, not ${units}`);
  const allocations = allocate(ordered, unitPriceMicros * BigInt(units));
  return (
    allocations?.map(({ source, amountMicros }) => ({ accountId: source.accountId, kind: source.kind, grantId: source.grantId, heldMicros: amountMicros })) ??
    null
  );
}

/** The lease's current holds: its decisions on the overage volume, and one per source that still holds money. */
export function moneyLeaseHolds(lease: MoneyLease): Transfer[] {
  if (lease.held === 0) return [];
  const base = { causeId: lease.id, workspaceId: lease.workspaceId, phase: 'pending' as const, pendingId: null };
  return [
    {
      ...base,
      id: `${lease.id}:hold:${lease.seq}`,
      ledger: 'decisions',
      debitAccountId: lease.accounts.overageVolumeId,
      creditAccountId: lease.accounts.decisionsBilledId,
      amount: BigInt(lease.held),
      code: 'overage_decision',
    },
    ...lease.sources.flatMap((source, index): Transfer[] =>
      source.heldMicros > 0n
        ? [
            {
              ...base,
              id: `${lease.id}:hold:${lease.seq}:${index}`,
              ledger: lease.currency,
              debitAccountId: source.accountId,
              creditAccountId: lease.accounts.spendId,
              amount: source.heldMicros,
              code: 'decision_charge',
            },
          ]
        : [],
    ),
  ];
}

export interface LeaseCharge {
  source: LeaseSource;
  amountMicros: bigint;
}

/**
 * What the `index`-th execution billed against the lease (0 the first) pays, from the front of what it holds: the
 * executions before it took `index` prices from the front, and freed units only ever come from the rear.
 */
export function leaseChargeAt(lease: Pick<MoneyLease, 'sources' | 'unitPriceMicros' | 'held'>, index: number): LeaseCharge[] {
  if (!Number.isInteger(index) || index < 0 || index >= lease.held) throw new LedgerError(`a lease holding ${lease.held} decisions has no decision ${index}`);
  let skip = lease.unitPriceMicros * BigInt(index);
  let remaining = lease.unitPriceMicros;
  const charges: LeaseCharge[] = [];
  for (const source of lease.sources) {
    if (remaining === 0n) break;
    const skipped = source.heldMicros < skip ? source.heldMicros : skip;
    skip -= skipped;
    const left = source.heldMicros - skipped;
    const amountMicros = left < remaining ? left : remaining;
    if (amountMicros > 0n) charges.push({ source, amountMicros });
    remaining -= amountMicros;
  }
  if (remaining !== 0n) throw new LedgerError(`the lease does not hold the price of decision ${index}`);
  return charges;
}

/** A billed execution's record, as a reservation paid from credits answers it. */
export function leaseChargesPaidBy(charges: LeaseCharge[]): Charge[] {
  return charges.map(({ source, amountMicros }): Charge => {
    const amount_microcents = Number(amountMicros);
    if (source.kind === 'promotional') {
      if (source.grantId === null) throw new LedgerError(`promotional source ${source.accountId} has no grant`);
      return { source: 'promotional', grant_id: source.grantId, amount_microcents };
    }
    return { source: 'paid', amount_microcents };
  });
}

/** Takes `micros` off the sources, from the front (what billed runs pay) or from the rear (what freed units give back). */
function takeMicros(sources: LeaseSource[], micros: bigint, from: 'front' | 'rear'): LeaseSource[] {
  let remaining = micros;
  const next = sources.map((source) => ({ ...source }));
  const order = from === 'front' ? next : [...next].reverse();
  for (const source of order) {
    if (remaining === 0n) break;
    const taken = source.heldMicros < remaining ? source.heldMicros : remaining;
    source.heldMicros -= taken;
    remaining -= taken;
  }
  if (remaining !== 0n) throw new LedgerError('a lease cannot give more money than it holds');
  return next;
}

/**
 * Moves a money lease on: each billed execution gets its overage decision (`<execution>:lease`) and its charges
 * (`<execution>:lease:<n>`) posted, caused by the execution and naming its decision, exactly what a reservation of
 * its own would post; `freed` units give their money back; every current hold is voided and what is left is held
 * again under the next number. Answers the entries, the lease as it is after them, and each execution's charges.
 */
export function moneyLeaseSettlement(
  lease: MoneyLease,
  billedExecutionIds: string[],
  freed: number,
  decisions: ReadonlyMap<string, string | null> = new Map(),
): { transfers: Transfer[]; next: MoneyLease; charges: Map<string, LeaseCharge[]> } {
  const taken = billedExecutionIds.length + freed;
  if (!Number.isInteger(freed) || freed < 0 || taken > lease.held) throw new LedgerError(`lease ${lease.id} holds ${lease.held} decisions, not ${taken}`);
  if (new Set(billedExecutionIds).size !== billedExecutionIds.length) throw new LedgerError(`an execution is billed twice against lease ${lease.id}`);
  const charges = new Map<string, LeaseCharge[]>();
  if (taken === 0) return { transfers: [], next: lease, charges };
  const transfers: Transfer[] = moneyLeaseHolds(lease).map((hold) => resolvePending(hold, 'void'));
  billedExecutionIds.forEach((executionId, index) => charges.set(executionId, leaseChargeAt(lease, index)));
  const billed = takeMicros(lease.sources, lease.unitPriceMicros * BigInt(billedExecutionIds.length), 'front');
  const sources = takeMicros(billed, lease.unitPriceMicros * BigInt(freed), 'rear');
  const next: MoneyLease = { ...lease, held: lease.held - taken, seq: lease.held - taken > 0 ? lease.seq + 1 : lease.seq, sources };
  transfers.push(...moneyLeaseHolds(next));
  for (const executionId of billedExecutionIds) {
    const decisionId = decisions.get(executionId) ?? null;
    const entry = { causeId: executionId, workspaceId: lease.workspaceId, phase: 'single' as const, pendingId: null, decisionId };
    transfers.push({
      ...entry,
      id: `${executionId}:lease`,
      ledger: 'decisions',
      debitAccountId: lease.accounts.overageVolumeId,
      creditAccountId: lease.accounts.decisionsBilledId,
      amount: 1n,
      code: 'overage_decision',
    });
    charges.get(executionId)!.forEach((charge, index) =>
      transfers.push({
        ...entry,
        id: `${executionId}:lease:${index}`,
        ledger: lease.currency,
        debitAccountId: charge.source.accountId,
        creditAccountId: lease.accounts.spendId,
        amount: charge.amountMicros,
        code: 'decision_charge',
      }),
    );
  }
  return { transfers, next, charges };
}

/**
 * Holds a money lease's money again from the front of the consumption order: `ordered` are the workspace's usable
 * sources in that order, their availability counting what this lease holds of them. Money that came back to an
 * earlier source after the lease was granted (the untaken rest of the lease it replaced) is then what its next
 * runs pay from, as runs reserving one at a time would. Unchanged (no entries) when it already holds the front.
 */
export function moneyLeaseRehold(lease: MoneyLease, ordered: CreditSource[]): { transfers: Transfer[]; next: MoneyLease } {
  if (lease.held === 0) return { transfers: [], next: lease };
  const sources = moneyLeaseSources(ordered, lease.unitPriceMicros, lease.held);
  if (sources === null) throw new LedgerError(`the sources no longer cover what lease ${lease.id} holds`);
  const current = lease.sources.filter((source) => source.heldMicros > 0n);
  const same =
    current.length === sources.length &&
    current.every((source, index) => source.accountId === sources[index]!.accountId && source.heldMicros === sources[index]!.heldMicros);
  if (same) return { transfers: [], next: lease };
  const next: MoneyLease = { ...lease, seq: lease.seq + 1, sources };
  return { transfers: [...moneyLeaseHolds(lease).map((hold) => resolvePending(hold, 'void')), ...moneyLeaseHolds(next)], next };
}

/**
 * When a money lease stops giving units: at most LEASE_LIMITS.ttlMs after its grant, and never past the end of
 * its period or the expiry of a promotional grant it holds money from, so that no run takes a unit a reservation
 * of its own at that moment would have been paid otherwise.
 */
export function leaseTakesUntil(grantedAt: Date, periodEnd: Date, sources: Array<{ expiresAt: Date | null }> = []): Date {
  const times = [
    grantedAt.getTime() + LEASE_LIMITS.ttlMs,
    periodEnd.getTime(),
    ...sources.flatMap((source) => (source.expiresAt ? [source.expiresAt.getTime()] : [])),
  ];
  return new Date(Math.min(...times));
}

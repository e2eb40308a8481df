import fc from 'fast-check';
import { chart } from './chart';
import { allocate, CreditSource } from './consumption';
import { holdTransfers, settlementTransfers } from './holds';
import { Balances, LedgerError, replayEntries, Transfer, unbalancedLedgers, ZERO_BALANCES } from './ledger';
import { LEASE_LIMITS } from './leases';
import {
  leaseChargeAt,
  leaseChargesPaidBy,
  leaseTakesUntil,
  MoneyLease,
  moneyLeaseHolds,
  moneyLeaseRehold,
  moneyLeaseRoom,
  moneyLeaseSettlement,
  moneyLeaseSources,
} from './money-leases';

const WS = '8f9f2c1e-0000-4000-8000-000000000002';
const PERIOD = new Date('2026-11-01T00:00:00Z');
const accounts = {
  overageVolumeId: chart.overageVolume(WS, PERIOD).id,
  decisionsBilledId: chart.decisionsBilled(WS).id,
  spendId: chart.spend(WS, 'usd', PERIOD).id,
};
const periodAccounts = {
  includedVolume: chart.includedVolume(WS, PERIOD),
  overageVolume: chart.overageVolume(WS, PERIOD),
  decisionsBilled: chart.decisionsBilled(WS),
  spend: chart.spend(WS, 'usd', PERIOD),
};

const source = (accountId: string, availableMicros: bigint, fields: Partial<CreditSource> = {}): CreditSource => ({
  accountId,
  kind: 'promotional',
  grantId: `grant_${accountId}`,
  expiresAt: null,
  grantedAt: new Date('2026-10-01T00:00:00Z'),
  availableMicros,
  ...fields,
});

function lease(sources: CreditSource[], price: bigint, units: number): MoneyLease {
  return {
    id: 'lease_1',
    workspaceId: WS,
    currency: 'usd',
    seq: 0,
    held: units,
    unitPriceMicros: price,
    sources: moneyLeaseSources(sources, price, units)!,
    accounts,
  };
}

/** The entries a workspace's sources start with: each credited with what it can give. */
function funded(sources: CreditSource[]): Transfer[] {
  return sources.map((s) => ({
    id: `fund:${s.accountId}`,
    causeId: s.accountId,
    workspaceId: WS,
    ledger: 'usd',
    debitAccountId: 'issuer',
    creditAccountId: s.accountId,
    amount: s.availableMicros,
    phase: 'single',
    pendingId: null,
    code: 'grant',
  }));
}

describe('moneyLeaseRoom', () => {
  const sources = [source('a', 250n), source('b', 100n)];

  it('is what the credits pay for, rounded down', () => {
    expect(moneyLeaseRoom({ unitPriceMicros: 50n, sources, spentMicros: 0n, spendCapCents: null })).toBe(7);
    expect(moneyLeaseRoom({ unitPriceMicros: 351n, sources, spentMicros: 0n, spendCapCents: null })).toBe(0);
    expect(moneyLeaseRoom({ unitPriceMicros: 50n, sources: [], spentMicros: 0n, spendCapCents: null })).toBe(0);
  });

  it('is at most what fits under the spend cap with what is spent and held', () => {
    const rich = [source('a', 10_000_000n)];
    // A cap of 1 cent is 1,000,000 micro-cents: 999,900 left at 100 each.
    expect(moneyLeaseRoom({ unitPriceMicros: 100n, sources: rich, spentMicros: 100n, spendCapCents: 1 })).toBe(9_999);
    expect(moneyLeaseRoom({ unitPriceMicros: 100n, sources: rich, spentMicros: 999_901n, spendCapCents: 1 })).toBe(0);
    expect(moneyLeaseRoom({ unitPriceMicros: 100n, sources: rich, spentMicros: 1_000_000n, spendCapCents: 1 })).toBe(0);
    // A cap lowered below what is already spent leaves no room, never a negative one.
    expect(moneyLeaseRoom({ unitPriceMicros: 100n, sources: rich, spentMicros: 5_000_000n, spendCapCents: 1 })).toBe(0);
    expect(moneyLeaseRoom({ unitPriceMicros: 100n, sources: rich, spentMicros: 0n, spendCapCents: 0 })).toBe(0);
  });

  it('lets a price of 0 through without credits, unless the cap is already passed', () => {
    expect(moneyLeaseRoom({ unitPriceMicros: 0n, sources: [], spentMicros: 0n, spendCapCents: null })).toBe(Infinity);
    expect(moneyLeaseRoom({ unitPriceMicros: 0n, sources: [], spentMicros: 1_000_000n, spendCapCents: 1 })).toBe(Infinity);
    expect(moneyLeaseRoom({ unitPriceMicros: 0n, sources: [], spentMicros: 1_000_001n, spendCapCents: 1 })).toBe(0);
  });

  it('is exactly the number of one-by-one reservations step 6 would let through', () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 0n, max: 2_000n }), { maxLength: 4 }),
        fc.bigInt({ min: 1n, max: 300n }),
        fc.bigInt({ min: 0n, max: 3_000_000n }),
        fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
        (amounts, price, spent, cap) => {
          const sources = amounts.map((amount, i) => source(`s${i}`, amount));
          const room = moneyLeaseRoom({ unitPriceMicros: price, sources, spentMicros: spent, spendCapCents: cap });
          // One at a time: credits cover the price, then spent + price stays within the cap.
          let n = 0;
          let available = amounts.reduce((sum, amount) => sum + amount, 0n);
          let spentNow = spent;
          while (available >= price && (cap === null || spentNow + price <= BigInt(cap) * 1_000_000n)) {
            available -= price;
            spentNow += price;
            n++;
          }
          expect(room).toBe(n);
        },
      ),
    );
  });
});

describe('moneyLeaseSources', () => {
  it('takes the money for the units from the sources in the order given, splitting across them', () => {
    const held = moneyLeaseSources([source('a', 120n), source('b', 1_000n, { kind: 'paid', grantId: null })], 50n, 4);
    expect(held).toEqual([
      { accountId: 'a', kind: 'promotional', grantId: 'grant_a', heldMicros: 120n },
      { accountId: 'b', kind: 'paid', grantId: null, heldMicros: 80n },
    ]);
  });

  it('holds nothing from any source at a price of 0, refuses what the sources cannot cover, and whole units only', () => {
    expect(moneyLeaseSources([source('a', 120n)], 0n, 5)).toEqual([]);
    expect(moneyLeaseSources([source('a', 120n)], 50n, 3)).toBeNull();
    expect(() => moneyLeaseSources([source('a', 120n)], 50n, 0)).toThrow(LedgerError);
    expect(() => moneyLeaseSources([source('a', 120n)], 50n, 1.5)).toThrow(LedgerError);
  });
});

describe('money lease holds', () => {
  it('holds the overage decisions and, per source, its money, caused by the lease', () => {
    const holds = moneyLeaseHolds(lease([source('a', 120n), source('b', 1_000n)], 50n, 4));
    expect(holds.map((hold) => [hold.id, hold.ledger, hold.debitAccountId, hold.creditAccountId, hold.amount, hold.code, hold.phase, hold.causeId])).toEqual([
      ['lease_1:hold:0', 'decisions', accounts.overageVolumeId, accounts.decisionsBilledId, 4n, 'overage_decision', 'pending', 'lease_1'],
      ['lease_1:hold:0:0', 'usd', 'a', accounts.spendId, 120n, 'decision_charge', 'pending', 'lease_1'],
      ['lease_1:hold:0:1', 'usd', 'b', accounts.spendId, 80n, 'decision_charge', 'pending', 'lease_1'],
    ]);
    expect(moneyLeaseHolds({ ...lease([source('a', 120n)], 50n, 2), held: 0 })).toEqual([]);
  });
});

describe('leaseChargeAt', () => {
  const held = lease([source('a', 120n), source('b', 1_000n, { kind: 'paid', grantId: null })], 50n, 4);

  it('charges each billed decision its price from the front of what the lease holds', () => {
    const amounts = [0, 1, 2, 3].map((index) => leaseChargeAt(held, index).map((charge) => [charge.source.accountId, charge.amountMicros]));
    expect(amounts).toEqual([
      [['a', 50n]],
      [['a', 50n]],
      [
        ['a', 20n],
        ['b', 30n],
      ],
      [['b', 50n]],
    ]);
    expect(() => leaseChargeAt(held, 4)).toThrow(LedgerError);
    expect(() => leaseChargeAt(held, -1)).toThrow(LedgerError);
  });

  it('answers the charges as a reservation paid from credits does', () => {
    expect(leaseChargesPaidBy(leaseChargeAt(held, 2))).toEqual([
      { source: 'promotional', grant_id: 'grant_a', amount_microcents: 20 },
      { source: 'paid', amount_microcents: 30 },
    ]);
    const broken = { ...held, sources: [{ ...held.sources[0]!, grantId: null }] };
    expect(() => leaseChargesPaidBy(leaseChargeAt(broken, 0))).toThrow(LedgerError);
  });
});

describe('moneyLeaseSettlement', () => {
  const sources = [source('a', 120n), source('b', 1_000n, { kind: 'paid', grantId: null })];

  it('posts per execution what a reservation of its own posts, frees from the rear and holds the rest again', () => {
    const held = lease(sources, 50n, 4);
    const { transfers, next, charges } = moneyLeaseSettlement(held, ['exec_x', 'exec_y'], 1, new Map([['exec_x', 'dec_x']]));
    expect(next).toMatchObject({ seq: 1, held: 1 });
    // Two billed took 100 from the front (all from a), one freed gave back 50 from the rear (b): 20 of a and 30 of b stay.
    expect(next.sources.map((s) => s.heldMicros)).toEqual([20n, 30n]);
    expect([...charges.keys()]).toEqual(['exec_x', 'exec_y']);
    expect(transfers.map((t) => [t.id, t.phase, t.amount, t.causeId, t.decisionId ?? null, t.code])).toEqual([
      ['lease_1:hold:0:void', 'void', 4n, 'lease_1', null, 'overage_decision'],
      ['lease_1:hold:0:0:void', 'void', 120n, 'lease_1', null, 'decision_charge'],
      ['lease_1:hold:0:1:void', 'void', 80n, 'lease_1', null, 'decision_charge'],
      ['lease_1:hold:1', 'pending', 1n, 'lease_1', null, 'overage_decision'],
      ['lease_1:hold:1:0', 'pending', 20n, 'lease_1', null, 'decision_charge'],
      ['lease_1:hold:1:1', 'pending', 30n, 'lease_1', null, 'decision_charge'],
      ['exec_x:lease', 'single', 1n, 'exec_x', 'dec_x', 'overage_decision'],
      ['exec_x:lease:0', 'single', 50n, 'exec_x', 'dec_x', 'decision_charge'],
      ['exec_y:lease', 'single', 1n, 'exec_y', null, 'overage_decision'],
      ['exec_y:lease:0', 'single', 50n, 'exec_y', null, 'decision_charge'],
    ]);
  });

  it('resolves every hold when nothing is left, changes nothing when nothing is settled, and refuses too much', () => {
    const held = lease(sources, 50n, 2);
    const done = moneyLeaseSettlement(held, ['exec_x'], 1);
    expect(done.next).toMatchObject({ held: 0, seq: 0 });
    expect(done.next.sources.every((s) => s.heldMicros === 0n)).toBe(true);
    expect(done.transfers.filter((t) => t.phase === 'pending')).toEqual([]);
    expect(moneyLeaseSettlement(held, [], 0)).toEqual({ transfers: [], next: held, charges: new Map() });
    expect(() => moneyLeaseSettlement(held, ['a', 'b'], 1)).toThrow(LedgerError);
    expect(() => moneyLeaseSettlement(held, [], -1)).toThrow(LedgerError);
    expect(() => moneyLeaseSettlement(held, [], 0.5)).toThrow(LedgerError);
    expect(() => moneyLeaseSettlement(held, ['a', 'a'], 0)).toThrow(LedgerError);
  });

  it('at a price of 0 bills overage decisions and no money', () => {
    const free = lease([], 0n, 3);
    const { transfers, next } = moneyLeaseSettlement(free, ['exec_x'], 1);
    expect(transfers.map((t) => t.id)).toEqual(['lease_1:hold:0:void', 'lease_1:hold:1', 'exec_x:lease']);
    expect(next.held).toBe(1);
  });

  it('over any settlements, bills each run what a reservation of its own would have, and the books replay to the same balances', () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 1n, max: 400n }), { minLength: 1, maxLength: 4 }),
        fc.bigInt({ min: 0n, max: 90n }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 3 })), { maxLength: 8 }),
        (amounts, price, wanted, steps) => {
          const sources = amounts.map((amount, i) => source(`s${i}`, amount, i === amounts.length - 1 ? { kind: 'paid', grantId: null } : {}));
          const total = amounts.reduce((sum, amount) => sum + amount, 0n);
          const units = price === 0n ? wanted : Math.min(wanted, Number(total / price));
          fc.pre(units > 0);
          let current = lease(sources, price, units);
          const entries: Transfer[] = [...funded(sources), ...moneyLeaseHolds(current)];
          // What runs reserving one at a time would be charged, in order, from the same sources.
          const perRun: Transfer[][] = [];
          let remaining = sources.map((s) => ({ ...s }));
          for (let i = 0; i < units; i++) {
            const allocations = allocate(remaining, price)!;
            perRun.push(holdTransfers(`run_${i}`, WS, 'usd', { kind: 'credits', allocations }, periodAccounts).map((h) => settlementTransfers([h], true)[0]!));
            remaining = remaining.map((s) => ({
              ...s,
              availableMicros: s.availableMicros - (allocations.find((a) => a.source.accountId === s.accountId)?.amountMicros ?? 0n),
            }));
          }
          let billedSoFar = 0;
          let freedSoFar = 0;
          for (const [billedCount, freedCount] of steps) {
            const billed = Math.min(billedCount, current.held);
            const freed = Math.min(freedCount, current.held - billed);
            const ids = Array.from({ length: billed }, (_, i) => `exec_${billedSoFar + i}`);
            const moved = moneyLeaseSettlement(current, ids, freed);
            ids.forEach((id, i) => {
              const mine = moved.transfers.filter((t) => t.causeId === id && t.code === 'decision_charge');
              const theirs = perRun[billedSoFar + i]!.filter((t) => t.code === 'decision_charge');
              expect(mine.map((t) => [t.debitAccountId, t.creditAccountId, t.amount])).toEqual(
                theirs.map((t) => [t.debitAccountId, t.creditAccountId, t.amount]),
              );
            });
            entries.push(...moved.transfers);
            current = moved.next;
            billedSoFar += billed;
            freedSoFar += freed;
            // What the lease holds is always the price of what it holds.
            expect(current.sources.reduce((sum, s) => sum + s.heldMicros, 0n)).toBe(price * BigInt(current.held));
          }
          // Close: what is left is freed.
          const closed = moneyLeaseSettlement(current, [], current.held);
          entries.push(...closed.transfers);
          const balances = replayEntries(entries);
          const of = (id: string): Balances => balances.get(id) ?? ZERO_BALANCES;
          expect(of(accounts.overageVolumeId)).toEqual({ ...ZERO_BALANCES, debitsPosted: BigInt(billedSoFar) });
          expect(of(accounts.spendId)).toEqual({ ...ZERO_BALANCES, creditsPosted: price * BigInt(billedSoFar) });
          for (const s of sources) expect(of(s.accountId).debitsPending).toBe(0n);
          expect(unbalancedLedgers([...balances].map(([id, b]) => ({ ledger: id.includes(':decisions:') ? 'decisions' : 'usd', balances: b })))).toEqual([]);
          expect(billedSoFar + freedSoFar).toBeLessThanOrEqual(units);
        },
      ),
    );
  });
});

describe('leaseTakesUntil', () => {
  const granted = new Date('2026-11-26T10:00:00.000Z');

  it('gives units for the lease time, never past the period or a source’s expiry', () => {
    expect(leaseTakesUntil(granted, new Date('2026-12-01T00:00:00Z'))).toEqual(new Date(granted.getTime() + LEASE_LIMITS.ttlMs));
    expect(leaseTakesUntil(granted, new Date(granted.getTime() + 500))).toEqual(new Date(granted.getTime() + 500));
    expect(leaseTakesUntil(granted, new Date('2026-12-01T00:00:00Z'), [{ expiresAt: null }, { expiresAt: new Date(granted.getTime() + 700) }])).toEqual(
      new Date(granted.getTime() + 700),
    );
  });
});

describe('moneyLeaseRehold', () => {
  it('holds the money again from the front when an earlier source has money back, and changes nothing otherwise', () => {
    const early = source('early', 100n);
    const late = source('late', 1_000n, { kind: 'paid', grantId: null });
    // Granted while the early source was held by the lease it replaced: all from the late one.
    const held = lease([late], 50n, 3);
    // The replaced lease's rest came back: the early source has 100 available, the late one 850 plus the lease's 150.
    const ordered = [early, { ...late, availableMicros: 1_000n }];
    const { transfers, next } = moneyLeaseRehold(held, ordered);
    expect(next.seq).toBe(1);
    expect(next.sources.map((s) => [s.accountId, s.heldMicros])).toEqual([
      ['early', 100n],
      ['late', 50n],
    ]);
    expect(transfers.map((t) => [t.id, t.phase, t.amount])).toEqual([
      ['lease_1:hold:0:void', 'void', 3n],
      ['lease_1:hold:0:0:void', 'void', 150n],
      ['lease_1:hold:1', 'pending', 3n],
      ['lease_1:hold:1:0', 'pending', 100n],
      ['lease_1:hold:1:1', 'pending', 50n],
    ]);
    const entries = [...funded([early, late]), ...moneyLeaseHolds(held), ...transfers];
    expect(replayEntries(entries).get('early')).toEqual({ ...ZERO_BALANCES, debitsPending: 100n, creditsPosted: 100n });
    expect(replayEntries(entries).get('late')).toEqual({ ...ZERO_BALANCES, debitsPending: 50n, creditsPosted: 1_000n });
    expect(moneyLeaseRehold(next, ordered)).toEqual({ transfers: [], next });
    expect(moneyLeaseRehold({ ...held, held: 0, sources: [] }, ordered).transfers).toEqual([]);
    expect(() => moneyLeaseRehold(held, [early])).toThrow(LedgerError);
  });
});

import fc from 'fast-check';
import { allocate, CreditSource } from './consumption';
import { decideReservation } from './reservation-verdict';
import { includedRoom, overageRoom } from './room';
import { centsToMicros } from './units';

const paid = (availableMicros: bigint): CreditSource => ({
  accountId: 'paid',
  kind: 'paid',
  grantId: null,
  expiresAt: null,
  grantedAt: new Date(0),
  availableMicros,
});

describe('includedRoom', () => {
  it('is the included decisions not taken, held ones counted as taken', () => {
    expect(includedRoom(10, 0)).toBe(10);
    expect(includedRoom(10, 9)).toBe(1);
    expect(includedRoom(10, 10)).toBe(0);
    // Decisions taken past a plan lowered in the period leave no room, never a negative lease.
    expect(includedRoom(10, 12)).toBe(-2);
    expect(includedRoom(0, 0)).toBe(0);
  });
});

describe('overageRoom', () => {
  it('counts what the credits pay for, rounded down, whatever the cap', () => {
    expect(overageRoom({ unitPriceMicros: 100n, sources: [paid(1_000n)], spentMicros: 0n, spendCapCents: null })).toEqual({ credits: 10, underCap: Infinity });
    expect(overageRoom({ unitPriceMicros: 100n, sources: [paid(999n)], spentMicros: 0n, spendCapCents: null }).credits).toBe(9);
    expect(overageRoom({ unitPriceMicros: 100n, sources: [paid(99n)], spentMicros: 0n, spendCapCents: null }).credits).toBe(0);
    expect(overageRoom({ unitPriceMicros: 100n, sources: [], spentMicros: 0n, spendCapCents: null }).credits).toBe(0);
    expect(
      overageRoom({
        unitPriceMicros: 100n,
        sources: [paid(60n), { ...paid(40n), accountId: 'promo', kind: 'promotional', grantId: 'g' }],
        spentMicros: 0n,
        spendCapCents: null,
      }).credits,
    ).toBe(1);
  });

  it('counts what fits under the cap with what is spent and held, to the micro-cent', () => {
    const cap = centsToMicros(1); // 1_000_000 micro-cents
    const room = (spentMicros: bigint) => overageRoom({ unitPriceMicros: 100n, sources: [], spentMicros, spendCapCents: 1 }).underCap;
    expect(room(0n)).toBe(10_000);
    expect(room(cap - 100n)).toBe(1);
    expect(room(cap - 99n)).toBe(0);
    expect(room(cap)).toBe(0);
    expect(room(cap + 1n)).toBe(0);
    expect(overageRoom({ unitPriceMicros: 100n, sources: [], spentMicros: 0n, spendCapCents: 0 }).underCap).toBe(0);
  });

  it('lets a price of 0 through until a cap is passed, and only then stops it', () => {
    const cap = centsToMicros(1);
    expect(overageRoom({ unitPriceMicros: 0n, sources: [], spentMicros: 0n, spendCapCents: null })).toEqual({ credits: Infinity, underCap: Infinity });
    expect(overageRoom({ unitPriceMicros: 0n, sources: [], spentMicros: cap, spendCapCents: 1 })).toEqual({ credits: Infinity, underCap: Infinity });
    expect(overageRoom({ unitPriceMicros: 0n, sources: [], spentMicros: cap + 1n, spendCapCents: 1 })).toEqual({ credits: Infinity, underCap: 0 });
  });

  it('never answers more than a safe integer', () => {
    const room = overageRoom({ unitPriceMicros: 1n, sources: [paid(2n ** 80n)], spentMicros: 0n, spendCapCents: Number.MAX_SAFE_INTEGER });
    expect(room).toEqual({ credits: Number.MAX_SAFE_INTEGER, underCap: Number.MAX_SAFE_INTEGER });
  });

  it('agrees with step 6 one decision at a time: room for one exactly when the verdict pays for it', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2_000n }),
        fc.array(fc.bigInt({ min: 1n, max: 1_000n }), { maxLength: 3 }),
        fc.bigInt({ min: 0n, max: 20_000n }),
        fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }),
        (price, amounts, spentMicros, spendCapCents) => {
          const sources = amounts.map((amount, index) => ({ ...paid(amount), accountId: `s${index}` }));
          const room = overageRoom({ unitPriceMicros: price, sources, spentMicros, spendCapCents });
          const paysOne = allocate(sources, price) !== null && (spendCapCents === null || spentMicros + price <= centsToMicros(spendCapCents));
          expect(Math.min(room.credits, room.underCap) >= 1).toBe(paysOne);
        },
      ),
    );
  });

  it('is what orders the verdict’s refusals: credits first, then the cap', () => {
    const base = {
      plan: { included_decisions: 1, hard_cap: false, price_per_million_cents: 100_000 },
      includedUsed: 1,
      overageUsed: 0,
      spentMicros: 0n,
      currency: 'usd' as const,
      periodEnd: new Date('2026-12-01T00:00:00Z'),
      billingUrl: 'b',
      upgradeUrl: 'u',
    };
    // Price 100_000 cents per million decisions: 100_000 micro-cents each.
    expect(decideReservation({ ...base, sources: [], spendCapCents: 0 })).toMatchObject({ code: 'CREDITS_EXHAUSTED' });
    expect(decideReservation({ ...base, sources: [paid(100_000n)], spendCapCents: 0 })).toMatchObject({ code: 'SPEND_CAP_REACHED' });
    expect(decideReservation({ ...base, sources: [paid(100_000n)], spendCapCents: null })).toMatchObject({ kind: 'credits' });
    expect(decideReservation({ ...base, includedUsed: 0, sources: [], spendCapCents: 0 })).toEqual({ kind: 'included' });
  });
});

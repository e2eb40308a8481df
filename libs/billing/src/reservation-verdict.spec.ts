import fc from 'fast-check';
import { CreditSource } from './consumption';
import { decideReservation, ReservationContext } from './reservation-verdict';

const periodEnd = new Date('2026-04-01T00:00:00Z');
const paid = (availableMicros: bigint): CreditSource => ({
  accountId: 'paid',
  kind: 'paid',
  grantId: null,
  expiresAt: null,
  grantedAt: new Date(0),
  availableMicros,
});
const context = (fields: Partial<ReservationContext> = {}): ReservationContext => ({
  plan: { included_decisions: 10, hard_cap: false, price_per_million_cents: 50_000 },
  includedUsed: 10,
  overageUsed: 2,
  sources: [],
  spentMicros: 0n,
  spendCapCents: null,
  currency: 'usd',
  periodEnd,
  billingUrl: 'http://app/app/billing',
  upgradeUrl: 'http://app/app/billing/plans',
  ...fields,
});

describe('decideReservation (step 6)', () => {
  it('takes the included volume first, whatever the credits, cap or hard cap', () => {
    expect(
      decideReservation(context({ includedUsed: 9, spendCapCents: 0, plan: { included_decisions: 10, hard_cap: true, price_per_million_cents: null } })),
    ).toEqual({ kind: 'included' });
  });

  it('pays past the included volume from credits at the price of one decision', () => {
    const verdict = decideReservation(context({ sources: [paid(60_000n)] }));
    expect(verdict).toEqual({ kind: 'credits', allocations: [{ source: paid(60_000n), amountMicros: 50_000n }] });
  });

  it('answers CREDITS_EXHAUSTED with used, included, available cents rounded down, currency and billing URL', () => {
    expect(
      decideReservation(
        context({ sources: [paid(1_049_999n)], plan: { included_decisions: 10, hard_cap: false, price_per_million_cents: 1_050_000 }, currency: 'brl' }),
      ),
    ).toEqual({
      kind: 'refused',
      code: 'CREDITS_EXHAUSTED',
      message: expect.any(String),
      details: { used: 12, included: 10, availableCents: 1, currency: 'brl', billingUrl: 'http://app/app/billing' },
    });
  });

  it('answers SPEND_CAP_REACHED when one more decision would pass the cap', () => {
    const atCap = context({ sources: [paid(10_000_000n)], spendCapCents: 1, spentMicros: 960_000n });
    expect(decideReservation(atCap)).toEqual({
      kind: 'refused',
      code: 'SPEND_CAP_REACHED',
      message: expect.any(String),
      details: { spendCapCents: 1, spentCents: 0, currency: 'usd', periodEnd: '2026-04-01T00:00:00.000Z', billingUrl: 'http://app/app/billing' },
    });
    expect(decideReservation({ ...atCap, spentMicros: 950_000n }).kind).toBe('credits');
    expect(decideReservation({ ...atCap, spendCapCents: 0, spentMicros: 0n })).toMatchObject({ code: 'SPEND_CAP_REACHED' });
  });

  it('checks credits before the spend cap', () => {
    expect(decideReservation(context({ spendCapCents: 0 }))).toMatchObject({ code: 'CREDITS_EXHAUSTED' });
  });

  it('answers QUOTA_EXCEEDED on a hard-cap plan or a plan without a price, whatever credits remain', () => {
    const expected = {
      kind: 'refused',
      code: 'QUOTA_EXCEEDED',
      message: expect.any(String),
      details: { used: 12, included: 10, periodEnd: '2026-04-01T00:00:00.000Z', upgradeUrl: 'http://app/app/billing/plans' },
    };
    expect(
      decideReservation(context({ sources: [paid(10n ** 12n)], plan: { included_decisions: 10, hard_cap: true, price_per_million_cents: 50_000 } })),
    ).toEqual(expected);
    expect(
      decideReservation(
        context({ sources: [paid(10n ** 12n)], spendCapCents: 0, plan: { included_decisions: 10, hard_cap: false, price_per_million_cents: null } }),
      ),
    ).toEqual(expected);
  });

  it('lets a free overage through without taking credits', () => {
    expect(decideReservation(context({ plan: { included_decisions: 0, hard_cap: false, price_per_million_cents: 0 }, spendCapCents: 0 }))).toEqual({
      kind: 'credits',
      allocations: [],
    });
  });

  it('never spends more than remains nor passes the cap, decision after decision', () => {
    fc.assert(
      fc.property(
        fc.nat(5),
        fc.bigInt({ min: 0n, max: 500_000n }),
        fc.option(fc.nat(1), { nil: null }),
        fc.integer({ min: 0, max: 200_000 }),
        (included, balance, capCents, price) => {
          let available = balance;
          let spent = 0n;
          let includedUsed = 0;
          for (let i = 0; i < 30; i++) {
            const verdict = decideReservation(
              context({
                plan: { included_decisions: included, hard_cap: false, price_per_million_cents: price },
                includedUsed,
                overageUsed: 0,
                sources: available > 0n ? [paid(available)] : [],
                spentMicros: spent,
                spendCapCents: capCents,
              }),
            );
            if (verdict.kind === 'included') includedUsed++;
            if (verdict.kind === 'credits') {
              const taken = verdict.allocations.reduce((sum, a) => sum + a.amountMicros, 0n);
              available -= taken;
              spent += taken;
            }
          }
          return includedUsed <= included && available >= 0n && (capCents === null || spent <= BigInt(capCents) * 1_000_000n);
        },
      ),
    );
  });
});

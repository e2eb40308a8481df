import { PlanView } from '@ds/contracts';
import { ZERO_BALANCES } from './ledger';
import { accountView } from './usage';

const plan: PlanView = {
  name: 'genesis',
  rate_limit_per_minute: 60,
  hard_cap: false,
  included_decisions: 1_000_000,
  max_decisions: 2,
  price_per_million_cents: 50_000,
  retention_days: 7,
};

describe('accountView', () => {
  it('shows usage, balances in cents rounded down, credits in consumption order and the cap', () => {
    const expiresAt = new Date('2026-04-01T00:00:00Z');
    const view = accountView({
      plan,
      period: { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-04-01T00:00:00Z') },
      currency: 'usd',
      spendCapCents: 500,
      includedVolume: { ...ZERO_BALANCES, debitsPosted: 1_000_000n, debitsPending: 0n },
      overageVolume: { ...ZERO_BALANCES, debitsPosted: 7n, debitsPending: 2n },
      spend: { ...ZERO_BALANCES, creditsPosted: 350_000n, creditsPending: 100_000n },
      sources: [
        { accountId: 'a', kind: 'promotional', grantId: 'promo', expiresAt, grantedAt: new Date(0), availableMicros: 1_500_000n },
        { accountId: 'b', kind: 'paid', grantId: null, expiresAt: null, grantedAt: new Date(0), availableMicros: 2_700_000n },
      ],
    });
    expect(view).toEqual({
      plan,
      usage: { period_start: '2026-03-01T00:00:00.000Z', period_end: '2026-04-01T00:00:00.000Z', used: 1_000_007, included: 1_000_000, reserved: 2 },
      balance: {
        currency: 'usd',
        available_cents: 4,
        promotional_cents: 1,
        paid_cents: 2,
        credits: [
          { id: 'promo', kind: 'promotional', remaining_cents: 1, currency: 'usd', expires_at: '2026-04-01T00:00:00.000Z' },
          { id: 'paid_balance', kind: 'paid', remaining_cents: 2, currency: 'usd', expires_at: null },
        ],
      },
      spend_cap: { spend_cap_cents: 500, spent_cents: 0, currency: 'usd' },
    });
  });

  it('counts neither used nor reserved the decisions a budget lease holds', () => {
    const view = accountView({
      plan,
      period: { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-04-01T00:00:00Z') },
      currency: 'usd',
      spendCapCents: null,
      includedVolume: { ...ZERO_BALANCES, debitsPosted: 40n, debitsPending: 103n },
      overageVolume: ZERO_BALANCES,
      spend: ZERO_BALANCES,
      sources: [],
      leasedUnits: 100,
    });
    expect(view.usage).toMatchObject({ used: 40, reserved: 3 });
  });
});

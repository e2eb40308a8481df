import { PlanView } from '@ds/contracts';
import { ZERO_BALANCES } from './ledger';
import { accountView, usageByDecision, withLeasedMoney } from './usage';

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

  it('counts as neither spent nor gone the money a budget lease holds', () => {
    const leased = new Map([['a', 1_500_000n]]);
    const sources = withLeasedMoney(
      [
        { accountId: 'a', kind: 'promotional', grantId: 'promo', expiresAt: null, grantedAt: new Date(0), availableMicros: 0n },
        { accountId: 'b', kind: 'paid', grantId: null, expiresAt: null, grantedAt: new Date(0), availableMicros: 2_000_000n },
      ],
      leased,
    );
    expect(sources.map((source) => source.availableMicros)).toEqual([1_500_000n, 2_000_000n]);
    const view = accountView({
      plan,
      period: { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-04-01T00:00:00Z') },
      currency: 'usd',
      spendCapCents: 10,
      includedVolume: { ...ZERO_BALANCES, debitsPosted: 1_000_000n },
      // 30 leased decisions at 50,000 each hold 1,500,000; 4 billed and 1 in flight on its own.
      overageVolume: { ...ZERO_BALANCES, debitsPosted: 4n, debitsPending: 31n },
      spend: { ...ZERO_BALANCES, creditsPosted: 200_000n, creditsPending: 1_550_000n },
      sources,
      leasedUnits: 30,
      leasedMicros: 1_500_000n,
    });
    expect(view.usage).toMatchObject({ used: 1_000_004, reserved: 1 });
    expect(view.spend_cap).toEqual({ spend_cap_cents: 10, spent_cents: 0, currency: 'usd' });
    expect(view.balance).toMatchObject({ available_cents: 3, promotional_cents: 1, paid_cents: 2 });
    // The same held money held for runs in flight (no lease) counts as spent.
    const snapshot = { plan, period: { start: new Date(0), end: new Date(1) }, currency: 'usd' as const, spendCapCents: 10, includedVolume: ZERO_BALANCES };
    const inFlight = {
      ...snapshot,
      overageVolume: ZERO_BALANCES,
      spend: { ...ZERO_BALANCES, creditsPosted: 200_000n, creditsPending: 1_550_000n },
      sources: [],
    };
    expect(accountView(inFlight).spend_cap.spent_cents).toBe(1);
  });
});

describe('usageByDecision', () => {
  it('joins billed decisions and credits per decision, most billed first, the unnamed last, adding up to what was summed', () => {
    const billed = [
      { decisionId: 'dec_b', amount: '3' },
      { decisionId: null, amount: '2' },
      { decisionId: 'dec_a', amount: '7' },
      { decisionId: 'dec_c', amount: 3n },
    ];
    const charged = [
      { decisionId: 'dec_c', amount: '1500000' },
      { decisionId: 'dec_a', amount: 250 },
    ];
    const rows = usageByDecision(billed, charged);
    expect(rows).toEqual([
      { decision_id: 'dec_a', billed: 7, credits_microcents: 250 },
      { decision_id: 'dec_c', billed: 3, credits_microcents: 1_500_000 },
      { decision_id: 'dec_b', billed: 3, credits_microcents: 0 },
      { decision_id: null, billed: 2, credits_microcents: 0 },
    ]);
    expect(rows.reduce((sum, row) => sum + row.billed, 0)).toBe(15);
  });

  it('answers no rows when nothing was billed, and keeps a decision with credits but no decision posted', () => {
    expect(usageByDecision([], [])).toEqual([]);
    expect(usageByDecision([{ decisionId: 'dec_a', amount: '0' }], [{ decisionId: 'dec_b', amount: '5' }])).toEqual([
      { decision_id: 'dec_b', billed: 0, credits_microcents: 5 },
    ]);
  });

  it('orders ties by id and puts the decisions booked under none after a named one with the same figures', () => {
    const rows = usageByDecision(
      [
        { decisionId: null, amount: '1' },
        { decisionId: 'dec_z', amount: '1' },
        { decisionId: 'dec_y', amount: '1' },
      ],
      [],
    );
    expect(rows.map((row) => row.decision_id)).toEqual(['dec_y', 'dec_z', null]);
  });
});

import { expiryEntries, grantEntries } from './grants';
import { ZERO_BALANCES } from './ledger';

describe('grantEntries', () => {
  it('gives each promotional grant an account of its own that cannot be overdrawn', () => {
    const expiresAt = new Date('2026-06-01T00:00:00Z');
    const { accounts, transfer } = grantEntries('ws1', 'promo-1', { kind: 'promotional', amountCents: 250, currency: 'usd', expiresAt });
    expect(accounts.map((a) => [a.id, a.noOverdraw, a.expiresAt])).toEqual([
      ['ws1:usd:promotions_issued', false, null],
      ['ws1:usd:promotional_grant:promo-1', true, expiresAt],
    ]);
    expect(transfer).toEqual({
      id: 'ws1:grant:promo-1',
      causeId: 'promo-1',
      workspaceId: 'ws1',
      ledger: 'usd',
      debitAccountId: 'ws1:usd:promotions_issued',
      creditAccountId: 'ws1:usd:promotional_grant:promo-1',
      amount: 250_000_000n,
      phase: 'single',
      pendingId: null,
      code: 'grant',
    });
  });

  it('pools paid grants into the paid balance', () => {
    const { accounts, transfer } = grantEntries('ws1', 'pay-1', { kind: 'paid', amountCents: 1, currency: 'brl', expiresAt: null });
    expect(accounts.map((a) => a.id)).toEqual(['ws1:brl:payments_received', 'ws1:brl:paid_balance']);
    expect(transfer).toMatchObject({ ledger: 'brl', creditAccountId: 'ws1:brl:paid_balance', amount: 1_000_000n });
  });
});

describe('expiryEntries', () => {
  const grant = { id: 'ws1:usd:promotional_grant:g', workspaceId: 'ws1', ledger: 'usd' as const, grantId: 'g' };

  it('moves what is neither spent nor held to the expired account', () => {
    const entries = expiryEntries(grant, { ...ZERO_BALANCES, creditsPosted: 100n, debitsPosted: 30n, debitsPending: 20n });
    expect(entries?.accounts.map((a) => a.id)).toEqual(['ws1:usd:expired']);
    expect(entries?.transfer).toMatchObject({
      id: `${grant.id}:expiry:30`,
      causeId: 'g',
      debitAccountId: grant.id,
      creditAccountId: 'ws1:usd:expired',
      amount: 50n,
      phase: 'single',
      code: 'expiry',
    });
  });

  it('has nothing to do when nothing remains', () => {
    expect(expiryEntries(grant, { ...ZERO_BALANCES, creditsPosted: 100n, debitsPosted: 100n })).toBeNull();
    expect(expiryEntries({ ...grant, grantId: null }, { ...ZERO_BALANCES, creditsPosted: 1n })).toBeNull();
  });
});

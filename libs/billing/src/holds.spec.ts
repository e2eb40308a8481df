import { chart, periodAccounts } from './chart';
import { CreditSource } from './consumption';
import { holdTransfers, paidBy, settlementTransfers } from './holds';
import { replayEntries, unbalancedLedgers } from './ledger';

const start = new Date('2026-03-01T00:00:00Z');
const accounts = periodAccounts('ws1', 'usd', start);
const promo = chart.promotionalGrant('ws1', 'usd', 'g1', new Date('2026-05-01T00:00:00Z'));
const paid = chart.paidBalance('ws1', 'usd');
const source = (id: string, kind: 'promotional' | 'paid'): CreditSource => ({
  accountId: id,
  kind,
  grantId: kind === 'promotional' ? 'g1' : null,
  expiresAt: null,
  grantedAt: start,
  availableMicros: 10n,
});

describe('chart of accounts', () => {
  it('names every account after its workspace, ledger, kind and period or grant', () => {
    expect(accounts.includedVolume.id).toBe('ws1:decisions:included_volume:2026-03-01T00:00:00.000Z');
    expect(accounts.spend.id).toBe('ws1:usd:spend:2026-03-01T00:00:00.000Z');
    expect(accounts.decisionsBilled.id).toBe('ws1:decisions:decisions_billed');
    expect(promo).toMatchObject({ id: 'ws1:usd:promotional_grant:g1', grantId: 'g1', noOverdraw: true });
    expect(paid).toMatchObject({ id: 'ws1:usd:paid_balance', noOverdraw: true });
    expect(chart.issuer('ws1', 'brl', 'paid').id).toBe('ws1:brl:payments_received');
    expect(chart.expired('ws1', 'usd').noOverdraw).toBe(false);
  });
});

describe('holds', () => {
  it('holds one included decision', () => {
    expect(holdTransfers('exec_1', 'ws1', 'usd', { kind: 'included' }, accounts)).toEqual([
      {
        id: 'exec_1:hold:0',
        causeId: 'exec_1',
        workspaceId: 'ws1',
        ledger: 'decisions',
        debitAccountId: accounts.includedVolume.id,
        creditAccountId: accounts.decisionsBilled.id,
        amount: 1n,
        phase: 'pending',
        pendingId: null,
        code: 'included_decision',
      },
    ]);
  });

  it('holds one overage decision and one charge per paying source', () => {
    const holds = holdTransfers(
      'exec_2',
      'ws1',
      'usd',
      {
        kind: 'credits',
        allocations: [
          { source: source(promo.id, 'promotional'), amountMicros: 4n },
          { source: source(paid.id, 'paid'), amountMicros: 6n },
        ],
      },
      accounts,
    );
    expect(holds.map((h) => [h.id, h.ledger, h.debitAccountId, h.creditAccountId, h.amount, h.code])).toEqual([
      ['exec_2:hold:0', 'decisions', accounts.overageVolume.id, accounts.decisionsBilled.id, 1n, 'overage_decision'],
      ['exec_2:hold:1', 'usd', promo.id, accounts.spend.id, 4n, 'decision_charge'],
      ['exec_2:hold:2', 'usd', paid.id, accounts.spend.id, 6n, 'decision_charge'],
    ]);
    const kinds = new Map([
      [promo.id, { kind: promo.kind, grantId: promo.grantId }],
      [paid.id, { kind: paid.kind, grantId: null }],
    ]);
    expect(paidBy(holds, kinds)).toEqual({
      funding: 'credits',
      charges: [
        { source: 'promotional', grant_id: 'g1', amount_microcents: 4 },
        { source: 'paid', amount_microcents: 6 },
      ],
    });
    expect(() => paidBy(holds, new Map())).toThrow('not paid from a credit account');
  });

  it('says an included decision was paid by the included volume', () => {
    expect(paidBy(holdTransfers('e', 'ws1', 'usd', { kind: 'included' }, accounts), new Map())).toEqual({ funding: 'included', charges: [] });
  });

  it('commits or releases every hold, and either way the books balance', () => {
    const holds = holdTransfers('exec_3', 'ws1', 'usd', { kind: 'credits', allocations: [{ source: source(paid.id, 'paid'), amountMicros: 6n }] }, accounts);
    for (const billable of [true, false]) {
      const settled = settlementTransfers(holds, billable, 'dec_3');
      expect(settled.map((t) => t.id)).toEqual(billable ? ['exec_3:hold:0:post', 'exec_3:hold:1:post'] : ['exec_3:hold:0:void', 'exec_3:hold:1:void']);
      // The decision and its charges are booked under the decision that ran; a release bills nothing to name.
      expect(settled.map((t) => t.decisionId ?? null)).toEqual(billable ? ['dec_3', 'dec_3'] : [null, null]);
      const balances = replayEntries([...holds, ...settled]);
      const ledgerOf = (id: string) => (id.includes(':decisions:') ? 'decisions' : 'usd');
      expect(unbalancedLedgers([...balances].map(([id, b]) => ({ ledger: ledgerOf(id), balances: b })))).toEqual([]);
      expect(balances.get(paid.id)?.debitsPosted).toBe(billable ? 6n : 0n);
      expect(balances.get(paid.id)?.debitsPending).toBe(0n);
    }
  });
});

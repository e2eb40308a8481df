import { decisionUsageRows } from './usage';

describe('decisionUsageRows', () => {
  const decisions = [
    { id: 'dec_a', slug: 'triage', name: 'Support triage' },
    { id: 'dec_b', slug: 'refunds', name: 'Refunds' },
  ];

  it('names the ledger’s decisions from the list, shows a deleted one by id and the unrecorded apart, in the ledger’s order', () => {
    const rows = decisionUsageRows(
      [
        { decision_id: 'dec_a', billed: 6, credits_microcents: 1_500_000 },
        { decision_id: 'dec_gone', billed: 3, credits_microcents: 0 },
        { decision_id: null, billed: 1, credits_microcents: 0 },
      ],
      decisions,
      10,
    );
    expect(rows).toEqual([
      { key: 'dec_a', kind: 'known', label: 'Support triage', slug: 'triage', billed: 6, share: 0.6, creditsMicrocents: 1_500_000 },
      { key: 'dec_gone', kind: 'deleted', label: 'dec_gone', slug: null, billed: 3, share: 0.3, creditsMicrocents: 0 },
      { key: '-', kind: 'unrecorded', label: '', slug: null, billed: 1, share: 0.1, creditsMicrocents: 0 },
    ]);
    expect(rows.reduce((sum, row) => sum + row.billed, 0)).toBe(10);
  });

  it('answers shares of 0 when nothing was billed, and no rows when the ledger has none', () => {
    expect(decisionUsageRows([{ decision_id: 'dec_b', billed: 0, credits_microcents: 5 }], decisions, 0)[0]).toMatchObject({ share: 0, label: 'Refunds' });
    expect(decisionUsageRows([], decisions, 0)).toEqual([]);
  });
});

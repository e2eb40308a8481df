import fc from 'fast-check';
import {
  availableOf,
  balanceChanges,
  compareWithExisting,
  LedgerError,
  netChanges,
  replayEntries,
  resolvePending,
  Transfer,
  transferProblems,
  unbalancedLedgers,
  ZERO_BALANCES,
} from './ledger';

const transfer = (fields: Partial<Transfer> = {}): Transfer => ({
  id: 't1',
  causeId: 'exec_1',
  workspaceId: 'ws',
  ledger: 'usd',
  debitAccountId: 'grant',
  creditAccountId: 'spend',
  amount: 5n,
  phase: 'single',
  pendingId: null,
  code: 'decision_charge',
  ...fields,
});

describe('transfers', () => {
  it('reports malformed transfers', () => {
    expect(transferProblems(transfer())).toEqual([]);
    expect(transferProblems(transfer({ amount: 0n, creditAccountId: 'grant', phase: 'post' }))).toEqual([
      'amount must be positive',
      'debit and credit accounts must differ',
      'exactly the post and void transfers name a pending transfer',
    ]);
    expect(transferProblems(transfer({ pendingId: 'x' }))).toEqual(['exactly the post and void transfers name a pending transfer']);
  });

  it('resolves a hold with the same accounts and amount, under an id derived from the hold', () => {
    const hold = transfer({ id: 'exec_1:hold:0', phase: 'pending' });
    expect(resolvePending(hold, 'post')).toEqual({ ...hold, id: 'exec_1:hold:0:post', phase: 'post', pendingId: 'exec_1:hold:0' });
    expect(resolvePending(hold, 'void')).toMatchObject({ id: 'exec_1:hold:0:void', phase: 'void', amount: 5n });
    expect(() => resolvePending(transfer(), 'post')).toThrow(LedgerError);
  });

  it('recognises the same id twice as a duplicate and a different amount as a conflict', () => {
    expect(compareWithExisting(transfer(), transfer())).toBe('duplicate');
    expect(compareWithExisting(transfer(), transfer({ amount: 6n }))).toBe('conflict');
    expect(compareWithExisting(transfer(), transfer({ creditAccountId: 'other' }))).toBe('conflict');
    expect(compareWithExisting(transfer(), transfer({ phase: 'pending' }))).toBe('conflict');
  });

  it('moves balances by phase', () => {
    const by = (t: Transfer) => Object.fromEntries(balanceChanges(t));
    expect(by(transfer())).toEqual({ grant: { ...ZERO_BALANCES, debitsPosted: 5n }, spend: { ...ZERO_BALANCES, creditsPosted: 5n } });
    expect(by(transfer({ phase: 'pending' }))).toEqual({ grant: { ...ZERO_BALANCES, debitsPending: 5n }, spend: { ...ZERO_BALANCES, creditsPending: 5n } });
    expect(by(transfer({ phase: 'post', pendingId: 'h' }))).toEqual({
      grant: { ...ZERO_BALANCES, debitsPending: -5n, debitsPosted: 5n },
      spend: { ...ZERO_BALANCES, creditsPending: -5n, creditsPosted: 5n },
    });
    expect(by(transfer({ phase: 'void', pendingId: 'h' }))).toEqual({
      grant: { ...ZERO_BALANCES, debitsPending: -5n },
      spend: { ...ZERO_BALANCES, creditsPending: -5n },
    });
  });

  it('sums the changes of a batch per account', () => {
    const net = netChanges([
      transfer({ id: 'a' }),
      transfer({ id: 'b', amount: 7n }),
      transfer({ id: 'c', debitAccountId: 'spend', creditAccountId: 'x', amount: 2n }),
    ]);
    expect(net.get('grant')).toEqual({ ...ZERO_BALANCES, debitsPosted: 12n });
    expect(net.get('spend')).toEqual({ ...ZERO_BALANCES, creditsPosted: 12n, debitsPosted: 2n });
    expect(net.get('x')).toEqual({ ...ZERO_BALANCES, creditsPosted: 2n });
  });
});

describe('replayEntries', () => {
  const hold = transfer({ id: 'h', phase: 'pending' });

  it('refuses entries that do not resolve exactly one earlier matching hold', () => {
    expect(() => replayEntries([resolvePending(hold, 'post')])).toThrow('no earlier hold');
    expect(() => replayEntries([hold, resolvePending(hold, 'post'), { ...resolvePending(hold, 'void') }])).toThrow('resolved twice');
    expect(() => replayEntries([hold, { ...resolvePending(hold, 'post'), amount: 4n }])).toThrow('does not match');
    expect(() => replayEntries([hold, hold])).toThrow('appears twice');
    expect(() => replayEntries([transfer({ amount: -1n })])).toThrow('amount must be positive');
  });

  it('rebuilds balances from the entries', () => {
    const balances = replayEntries([
      transfer({ id: 'g', debitAccountId: 'issuer', creditAccountId: 'grant', amount: 10n }),
      hold,
      resolvePending(hold, 'post'),
    ]);
    expect(balances.get('grant')).toEqual({ ...ZERO_BALANCES, creditsPosted: 10n, debitsPosted: 5n });
    expect(availableOf(balances.get('grant')!)).toBe(5n);
    expect(unbalancedLedgers([...balances].map(([, b]) => ({ ledger: 'usd', balances: b })))).toEqual([]);
  });

  it('names the ledgers that do not balance', () => {
    expect(
      unbalancedLedgers([
        { ledger: 'usd', balances: { ...ZERO_BALANCES, creditsPosted: 1n } },
        { ledger: 'decisions', balances: ZERO_BALANCES },
      ]),
    ).toEqual(['usd']);
    expect(unbalancedLedgers([{ ledger: 'brl', balances: { ...ZERO_BALANCES, debitsPending: 1n } }])).toEqual(['brl']);
  });

  type Op = { kind: 'grant'; amount: bigint } | { kind: 'hold'; amount: bigint; grant: number } | { kind: 'settle'; which: number; post: boolean };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('grant' as const), amount: fc.bigInt({ min: 1n, max: 1_000n }) }),
    fc.record({ kind: fc.constant('hold' as const), amount: fc.bigInt({ min: 1n, max: 300n }), grant: fc.nat(3) }),
    fc.record({ kind: fc.constant('settle' as const), which: fc.nat(50), post: fc.boolean() }),
  );

  it('keeps every ledger balanced and no guarded account overdrawn, whatever the sequence', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const entries: Transfer[] = [];
        const open: Transfer[] = [];
        let n = 0;
        for (const step of ops) {
          const balances = netChanges(entries);
          if (step.kind === 'grant') {
            entries.push(transfer({ id: `t${n++}`, debitAccountId: 'issuer', creditAccountId: `grant${n % 4}`, amount: step.amount, code: 'grant' }));
          } else if (step.kind === 'hold') {
            const source = `grant${step.grant}`;
            // A hold is only taken from what remains, as the service does under its lock.
            if (availableOf(balances.get(source) ?? ZERO_BALANCES) < step.amount) continue;
            const held = transfer({ id: `t${n++}`, debitAccountId: source, creditAccountId: 'spend', amount: step.amount, phase: 'pending' });
            entries.push(held);
            open.push(held);
          } else if (open.length > 0) {
            // open is not empty (just checked), so splicing one element returns one.
            const held = open.splice(step.which % open.length, 1)[0]!;
            entries.push(resolvePending(held, step.post ? 'post' : 'void'));
          }
        }
        const replayed = replayEntries(entries);
        const guarded = [...replayed].filter(([id]) => id.startsWith('grant'));
        return (
          unbalancedLedgers([...replayed].map(([, balances]) => ({ ledger: 'usd', balances }))).length === 0 &&
          guarded.every(([, balances]) => availableOf(balances) >= 0n)
        );
      }),
    );
  });
});

import { Currency } from '@ds/contracts';
import { PeriodAccounts } from './chart';
import { Allocation } from './consumption';
import { LedgerError, resolvePending, Transfer } from './ledger';

export type Funding = { kind: 'included' } | { kind: 'credits'; allocations: Allocation[] };

/**
 * The holds of one reservation, all caused by the execution id: one decision on the decisions ledger (from the
 * included volume or past it) and, past it, one charge per credit source that pays a part of the price.
 */
export function holdTransfers(executionId: string, workspaceId: string, currency: Currency, funding: Funding, accounts: PeriodAccounts): Transfer[] {
  const hold = (n: number, fields: Pick<Transfer, 'ledger' | 'debitAccountId' | 'creditAccountId' | 'amount' | 'code'>): Transfer => ({
    id: `${executionId}:hold:${n}`,
    causeId: executionId,
    workspaceId,
    phase: 'pending',
    pendingId: null,
    ...fields,
  });
  if (funding.kind === 'included') {
    return [
      hold(0, {
        ledger: 'decisions',
        debitAccountId: accounts.includedVolume.id,
        creditAccountId: accounts.decisionsBilled.id,
        amount: 1n,
        code: 'included_decision',
      }),
    ];
  }
  return [
    hold(0, {
      ledger: 'decisions',
      debitAccountId: accounts.overageVolume.id,
      creditAccountId: accounts.decisionsBilled.id,
      amount: 1n,
      code: 'overage_decision',
    }),
    ...funding.allocations.map((allocation, index) =>
      hold(index + 1, {
        ledger: currency,
        debitAccountId: allocation.source.accountId,
        creditAccountId: accounts.spend.id,
        amount: allocation.amountMicros,
        code: 'decision_charge',
      }),
    ),
  ];
}

/** Commits (posts) or releases (voids) every hold of a reservation; a commit's entries name the decision that ran. */
export function settlementTransfers(holds: Transfer[], billable: boolean, decisionId: string | null = null): Transfer[] {
  return holds.map((hold) => (billable ? { ...resolvePending(hold, 'post'), decisionId } : resolvePending(hold, 'void')));
}

export type Charge = { source: 'promotional'; grant_id: string; amount_microcents: number } | { source: 'paid'; amount_microcents: number };

/** What paid for one execution: the included volume, or the credit sources and how much each gave. */
export interface PaidBy {
  funding: 'included' | 'credits';
  charges: Charge[];
}

export interface ChargedAccount {
  kind: string;
  grantId: string | null;
}

export function paidBy(holds: Transfer[], accounts: Map<string, ChargedAccount>): PaidBy {
  const funding = holds.some((hold) => hold.code === 'included_decision') ? 'included' : 'credits';
  const charges = holds
    .filter((hold) => hold.code === 'decision_charge')
    .map((hold): Charge => {
      const account = accounts.get(hold.debitAccountId);
      const amount_microcents = Number(hold.amount);
      if (account?.kind === 'promotional_grant' && account.grantId !== null) return { source: 'promotional', grant_id: account.grantId, amount_microcents };
      if (account?.kind === 'paid_balance') return { source: 'paid', amount_microcents };
      throw new LedgerError(`charge ${hold.id} is not paid from a credit account`);
    });
  return { funding, charges };
}

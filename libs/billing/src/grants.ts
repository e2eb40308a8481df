import { chart, LedgerAccountSpec } from './chart';
import { availableOf, Balances, LedgerName, Transfer } from './ledger';
import { CreditGrant } from './billing-inputs';
import { centsToMicros } from './units';

export interface Entries {
  accounts: LedgerAccountSpec[];
  transfer: Transfer;
}

/**
 * A grant moves money from the workspace's issuing account (promotions, or payments received) to one account per
 * promotional grant, or to the single paid balance. Grant ids are the operator's, unique per workspace.
 */
export function grantEntries(workspaceId: string, grantId: string, grant: CreditGrant): Entries {
  const issuer = chart.issuer(workspaceId, grant.currency, grant.kind);
  const target =
    grant.kind === 'promotional'
      ? chart.promotionalGrant(workspaceId, grant.currency, grantId, grant.expiresAt)
      : chart.paidBalance(workspaceId, grant.currency);
  return {
    accounts: [issuer, target],
    transfer: {
      id: `${workspaceId}:grant:${grantId}`,
      causeId: grantId,
      workspaceId,
      ledger: grant.currency,
      debitAccountId: issuer.id,
      creditAccountId: target.id,
      amount: centsToMicros(grant.amountCents),
      phase: 'single',
      pendingId: null,
      code: 'grant',
    },
  };
}

export interface ExpiringGrant {
  id: string;
  workspaceId: string;
  ledger: LedgerName;
  grantId: string | null;
}

/**
 * What was left of an expired promotional grant moves to the workspace's expired account, so the books say where
 * it went. Held amounts stay: a hold taken before the expiry may still be committed; if it is released instead,
 * the next sweep expires it. The id names the debits already posted, so the same state gives the same entry.
 */
export function expiryEntries(grant: ExpiringGrant, balances: Balances): Entries | null {
  const remaining = availableOf(balances);
  if (remaining <= 0n || grant.ledger === 'decisions' || grant.grantId === null) return null;
  const expired = chart.expired(grant.workspaceId, grant.ledger);
  return {
    accounts: [expired],
    transfer: {
      id: `${grant.id}:expiry:${balances.debitsPosted}`,
      causeId: grant.grantId,
      workspaceId: grant.workspaceId,
      ledger: grant.ledger,
      debitAccountId: grant.id,
      creditAccountId: expired.id,
      amount: remaining,
      phase: 'single',
      pendingId: null,
      code: 'expiry',
    },
  };
}

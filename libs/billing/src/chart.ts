import { Currency } from '@ds/contracts';
import { LedgerName } from './ledger';

/**
 * The chart of accounts. Every account belongs to one workspace, so that every entry of a workspace is written
 * under that workspace's lock and no account is shared (and contended) between workspaces.
 */
export type LedgerAccountKind =
  /** decisions: debited for each decision taken from a period's included volume */
  | 'included_volume'
  /** decisions: debited for each decision past a period's included volume */
  | 'overage_volume'
  /** decisions: credited with every billed decision */
  | 'decisions_billed'
  /** money: debited when promotional credits are granted */
  | 'promotions_issued'
  /** money: debited when paid credits are added (stands in for the payment provider) */
  | 'payments_received'
  /** money: one promotional grant; never overdrawn */
  | 'promotional_grant'
  /** money: the paid balance, which never expires; never overdrawn */
  | 'paid_balance'
  /** money: credited with what a billing period's decisions cost */
  | 'spend'
  /** money: credited with what was left of a promotional grant when it expired */
  | 'expired';

export interface LedgerAccountSpec {
  id: string;
  workspaceId: string;
  ledger: LedgerName;
  kind: LedgerAccountKind;
  periodStart: Date | null;
  grantId: string | null;
  expiresAt: Date | null;
  /** Debits (posted and held) may never exceed posted credits. */
  noOverdraw: boolean;
}

function spec(workspaceId: string, ledger: LedgerName, kind: LedgerAccountKind, suffix: string, extra: Partial<LedgerAccountSpec> = {}): LedgerAccountSpec {
  return {
    id: [workspaceId, ledger, kind, suffix].filter((part) => part !== '').join(':'),
    workspaceId,
    ledger,
    kind,
    periodStart: null,
    grantId: null,
    expiresAt: null,
    noOverdraw: false,
    ...extra,
  };
}

export const chart = {
  includedVolume: (workspaceId: string, periodStart: Date) => spec(workspaceId, 'decisions', 'included_volume', periodStart.toISOString(), { periodStart }),
  overageVolume: (workspaceId: string, periodStart: Date) => spec(workspaceId, 'decisions', 'overage_volume', periodStart.toISOString(), { periodStart }),
  decisionsBilled: (workspaceId: string) => spec(workspaceId, 'decisions', 'decisions_billed', ''),
  issuer: (workspaceId: string, currency: Currency, kind: 'promotional' | 'paid') =>
    spec(workspaceId, currency, kind === 'promotional' ? 'promotions_issued' : 'payments_received', ''),
  promotionalGrant: (workspaceId: string, currency: Currency, grantId: string, expiresAt: Date | null) =>
    spec(workspaceId, currency, 'promotional_grant', grantId, { grantId, expiresAt, noOverdraw: true }),
  paidBalance: (workspaceId: string, currency: Currency) => spec(workspaceId, currency, 'paid_balance', '', { noOverdraw: true }),
  spend: (workspaceId: string, currency: Currency, periodStart: Date) => spec(workspaceId, currency, 'spend', periodStart.toISOString(), { periodStart }),
  expired: (workspaceId: string, currency: Currency) => spec(workspaceId, currency, 'expired', ''),
};

/** The accounts a reservation in a period touches. */
export interface PeriodAccounts {
  includedVolume: LedgerAccountSpec;
  overageVolume: LedgerAccountSpec;
  decisionsBilled: LedgerAccountSpec;
  spend: LedgerAccountSpec;
}

export function periodAccounts(workspaceId: string, currency: Currency, periodStart: Date): PeriodAccounts {
  return {
    includedVolume: chart.includedVolume(workspaceId, periodStart),
    overageVolume: chart.overageVolume(workspaceId, periodStart),
    decisionsBilled: chart.decisionsBilled(workspaceId),
    spend: chart.spend(workspaceId, currency, periodStart),
  };
}

import { AccountReply, CreditBalanceView, Currency, DecisionUsage, PlanView } from '@ds/contracts';
import { CreditSource, totalAvailable } from './consumption';
import { Balances } from './ledger';
import { Period } from './periods';
import { microsToCents } from './units';

export interface AccountSnapshot {
  plan: PlanView;
  period: Period;
  currency: Currency;
  spendCapCents: number | null;
  includedVolume: Balances;
  overageVolume: Balances;
  spend: Balances;
  /** Usable sources in consumption order. */
  sources: CreditSource[];
  /** Decisions the period's budget leases still hold: leased, not used, so neither used nor reserved. */
  leasedUnits?: number;
  /** Money the period's budget leases still hold: leased, not spent, so not counted as spent (sources include it back: see withLeasedMoney). */
  leasedMicros?: bigint;
}

/**
 * The credit sources as a reader sees them: what budget leases hold of a source (`leased`, by account id) is not
 * spent, so it counts as available again. Sources that hold nothing else are among `sources` with nothing available.
 */
export function withLeasedMoney(sources: CreditSource[], leased: ReadonlyMap<string, bigint>): CreditSource[] {
  return sources.map((source) => ({ ...source, availableMicros: source.availableMicros + (leased.get(source.accountId) ?? 0n) }));
}

/** The paid balance has no grant id of its own: paid grants pool into it. */
export const PAID_BALANCE_ID = 'paid_balance';

/**
 * Usage and balances as `/v1/me` and the operator see them. `used` counts committed decisions and `reserved` the
 * ones held for runs in flight; money is shown in whole cents rounded down, each figure on its own, and held
 * amounts are neither available nor spendable, so they count as spent until released.
 */
export function accountView(snapshot: AccountSnapshot): AccountReply {
  const { currency, sources } = snapshot;
  const promotional = totalAvailable(sources.filter((source) => source.kind === 'promotional'));
  const paid = totalAvailable(sources.filter((source) => source.kind === 'paid'));
  const credits = sources.map((source): CreditBalanceView => ({
    id: source.grantId ?? PAID_BALANCE_ID,
    kind: source.kind,
    remaining_cents: microsToCents(source.availableMicros),
    currency,
    expires_at: source.expiresAt?.toISOString() ?? null,
  }));
  return {
    plan: snapshot.plan,
    usage: {
      period_start: snapshot.period.start.toISOString(),
      period_end: snapshot.period.end.toISOString(),
      used: Number(snapshot.includedVolume.debitsPosted + snapshot.overageVolume.debitsPosted),
      included: snapshot.plan.included_decisions,
      reserved: Math.max(Number(snapshot.includedVolume.debitsPending + snapshot.overageVolume.debitsPending) - (snapshot.leasedUnits ?? 0), 0),
    },
    balance: {
      currency,
      available_cents: microsToCents(promotional + paid),
      promotional_cents: microsToCents(promotional),
      paid_cents: microsToCents(paid),
      credits,
    },
    spend_cap: {
      spend_cap_cents: snapshot.spendCapCents,
      spent_cents: microsToCents(snapshot.spend.creditsPosted + snapshot.spend.creditsPending - (snapshot.leasedMicros ?? 0n)),
      currency,
    },
  };
}

/** One decision's posted sums as the ledger reads them (PostgreSQL's bigint sums arrive as text). */
export interface DecisionSums {
  decisionId: string | null;
  amount: bigint | string | number;
}

/**
 * Usage per decision from the period's posted decisions and posted charges, each summed by decision: one row per
 * decision that has either, most billed first (then most credits, then by id; decisions booked under none last).
 * Nothing is rounded or dropped, so the rows' `billed` add up to the sums they came from.
 */
export function usageByDecision(billed: DecisionSums[], charged: DecisionSums[]): DecisionUsage[] {
  const rows = new Map<string | null, { billed: bigint; credits: bigint }>();
  const row = (id: string | null) => rows.get(id) ?? rows.set(id, { billed: 0n, credits: 0n }).get(id)!;
  for (const sum of billed) row(sum.decisionId).billed += BigInt(sum.amount);
  for (const sum of charged) row(sum.decisionId).credits += BigInt(sum.amount);
  return [...rows]
    .filter(([, sums]) => sums.billed > 0n || sums.credits > 0n)
    .sort(([a, x], [b, y]) => {
      if (x.billed !== y.billed) return x.billed > y.billed ? -1 : 1;
      if (x.credits !== y.credits) return x.credits > y.credits ? -1 : 1;
      if (a === null || b === null) return a === null ? (b === null ? 0 : 1) : -1;
      return a < b ? -1 : a > b ? 1 : 0;
    })
    .map(([decisionId, sums]) => ({ decision_id: decisionId, billed: Number(sums.billed), credits_microcents: Number(sums.credits) }));
}

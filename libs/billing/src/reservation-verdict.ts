import { Currency, PlanView } from '@ds/contracts';
import { Allocation, allocate, CreditSource, totalAvailable } from './consumption';
import { includedRoom, overageRoom } from './room';
import { decisionPriceMicros, microsToCents } from './units';

export interface ReservationContext {
  plan: Pick<PlanView, 'included_decisions' | 'hard_cap' | 'price_per_million_cents'>;
  /** Decisions of the period taken from the included volume, held ones included. */
  includedUsed: number;
  /** Decisions of the period past the included volume, held ones included. */
  overageUsed: number;
  /** Usable sources in consumption order (see consumptionOrder). */
  sources: CreditSource[];
  /** Paid in the billing period from credits or balance, held amounts included. */
  spentMicros: bigint;
  spendCapCents: number | null;
  currency: Currency;
  periodEnd: Date;
  billingUrl: string;
  upgradeUrl: string;
}

export type RefusalCode = 'CREDITS_EXHAUSTED' | 'SPEND_CAP_REACHED' | 'QUOTA_EXCEEDED';

export type ReservationVerdict =
  | { kind: 'included' }
  | { kind: 'credits'; allocations: Allocation[] }
  | { kind: 'refused'; code: RefusalCode; message: string; details: Record<string, unknown> };

/**
 * Step 6 for one decision. The included volume comes first and costs nothing. Past it, a plan with a hard cap or
 * without a price stops (QUOTA_EXCEEDED, whatever credits remain: they cannot be spent on it); otherwise the
 * decision is paid from credits, checked in the spec's order: credits first, then the spend cap.
 */
export function decideReservation(context: ReservationContext): ReservationVerdict {
  const { plan } = context;
  if (includedRoom(plan.included_decisions, context.includedUsed) > 0) return { kind: 'included' };
  const used = context.includedUsed + context.overageUsed;
  if (plan.hard_cap || plan.price_per_million_cents === null) {
    return refused('QUOTA_EXCEEDED', 'The included decisions of this period are used up and the plan allows no more.', {
      used,
      included: plan.included_decisions,
      periodEnd: context.periodEnd.toISOString(),
      upgradeUrl: context.upgradeUrl,
    });
  }
  const cost = decisionPriceMicros(plan.price_per_million_cents);
  const room = overageRoom({ unitPriceMicros: cost, sources: context.sources, spentMicros: context.spentMicros, spendCapCents: context.spendCapCents });
  const allocations = allocate(context.sources, cost);
  if (room.credits < 1 || allocations === null) {
    return refused('CREDITS_EXHAUSTED', 'The included decisions of this period are used up and no credits are left.', {
      used,
      included: plan.included_decisions,
      availableCents: microsToCents(totalAvailable(context.sources)),
      currency: context.currency,
      billingUrl: context.billingUrl,
    });
  }
  if (room.underCap < 1) {
    return refused('SPEND_CAP_REACHED', 'The spend cap of this billing cycle is reached.', {
      spendCapCents: context.spendCapCents,
      spentCents: microsToCents(context.spentMicros),
      currency: context.currency,
      periodEnd: context.periodEnd.toISOString(),
      billingUrl: context.billingUrl,
    });
  }
  return { kind: 'credits', allocations };
}

function refused(code: RefusalCode, message: string, details: Record<string, unknown>): ReservationVerdict {
  return { kind: 'refused', code, message, details };
}

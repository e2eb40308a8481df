/** The billing ledger's subjects and their payloads. */
import type { WorkspaceScoped } from './common';
import { broadcastSubject, rpcSubject } from './typed-subjects';

export type PlanName = 'genesis' | 'developer' | 'growth' | 'enterprise';

/**
 * Step 6. Checks included volume, credits, spend cap and hard cap in the spec's order and, when the run
 * may go ahead, holds one decision's worth for this execution, so that concurrent runs can never consume
 * more than remains. Answers the 402 errors of step 6. Reserving the same execution id twice is a no-op.
 */
export interface BillingReserveRequest extends WorkspaceScoped {
  executionId: string;
}

export interface BillingReserveReply {
  reserved: true;
}

/**
 * Settles a reservation exactly once: `billable: true` commits it (a fresh 200), `false` releases it
 * (an error or an engine-error fallback). Settling again with the same outcome answers the same state;
 * settling a committed reservation as released (or the reverse) is a CONFLICT. A reservation never
 * settled is settled by the ledger itself after asking the runner for the execution's outcome.
 */
export interface BillingSettleRequest extends WorkspaceScoped {
  executionId: string;
  billable: boolean;
  /**
   * Set when step 6 took the decision from a budget lease instead of reserving it: a commit posts it against the
   * lease, and a release (sent only when the unit could not be handed back to the lease's counter) frees it.
   */
  leaseId?: string;
  /**
   * The decision the execution ran, so that the ledger can book the billed decision under it (usage per
   * decision). Absent in settlements published before it was carried: those are booked under no decision.
   */
  decisionId?: string;
}

/**
 * One settlement on the SETTLEMENTS stream: the runner publishes it when a run's outcome is known; the ledger
 * posts them in batches, and settling an execution again changes nothing.
 */
export type BillingSettlement = BillingSettleRequest;

/**
 * Settlements a runner gathered while its previous publish was in flight, as one message on
 * `SETTLEMENT_STREAM.batchSubject`: one JetStream write and one acknowledgement for all of them. A message with a
 * single settlement (`BillingSettlement`) on `subjectFor(workspace)` is read too.
 */
export interface BillingSettlementBatch {
  settlements: BillingSettlement[];
}

/**
 * Asks for a budget lease for the workspace: N decisions of its included volume held at once, put in the lease
 * counter in Redis for runs to take one by one. `seenLeaseId` is the lease the caller found used up or dead, so
 * that of several callers asking at once only the first gets a new lease and the others are told about it.
 */
export interface GrantLeaseRequest extends WorkspaceScoped {
  seenLeaseId: string | null;
  /** How many units of the seen lease had been taken when it was seen: the rate the next lease is sized by. */
  seenTaken?: number;
}

/** The workspace's current lease, or null when none is granted (no room for one, or no lease counter). */
export interface GrantLeaseReply {
  leaseId: string | null;
  units: number;
}

export interface BillingSettleReply {
  state: 'committed' | 'released';
  /** On commit: what paid for the decision (the period's included volume, or which credit grants). */
  paid_by?: {
    funding: 'included' | 'credits';
    charges: Array<{ source: 'promotional'; grant_id: string; amount_microcents: number } | { source: 'paid'; amount_microcents: number }>;
  };
}

export interface PlanView {
  name: PlanName;
  rate_limit_per_minute: number;
  hard_cap: boolean;
  included_decisions: number;
  max_decisions: number | null;
  price_per_million_cents: number | null;
  retention_days: number;
}

export type Currency = 'usd' | 'brl';
export type GrantKind = 'promotional' | 'paid';

/** At most RETENTION_BATCH_MAX workspace ids per request. */
export interface RetentionRequest {
  workspaceIds: string[];
}

/** Days of execution log kept per workspace id asked about; a workspace without an account has the default plan's. */
export interface RetentionReply {
  retentionDays: Record<string, number>;
}

export const RETENTION_BATCH_MAX = 1000;

export interface CreditBalanceView {
  id: string;
  kind: 'promotional' | 'paid';
  remaining_cents: number;
  currency: Currency;
  expires_at: string | null;
}

export interface AccountReply {
  plan: PlanView;
  usage: {
    period_start: string;
    period_end: string;
    /** Decisions billed in this period (committed), whatever paid for them. */
    used: number;
    included: number;
    /** Reserved for runs still in flight. */
    reserved: number;
  };
  balance: {
    currency: Currency;
    available_cents: number;
    promotional_cents: number;
    paid_cents: number;
    credits: CreditBalanceView[];
  };
  spend_cap: { spend_cap_cents: number | null; spent_cents: number; currency: Currency };
}

/** One decision's share of the period's usage, summed from the very entries `usage.used` and the spend add up. */
export interface DecisionUsage {
  /** null: decisions billed from settlements that did not name their decision. */
  decision_id: string | null;
  billed: number;
  /** What the decision's billed runs took from credits (posted), in millionths of a cent of the account's currency. */
  credits_microcents: number;
}

/** Billed decisions of the current period per UTC day, read in the same snapshot as the account they add up to. */
export interface UsageByDayReply {
  account: AccountReply;
  /** Days of the period with billed decisions, oldest first; their `billed` sum to `account.usage.used`. */
  days: Array<{ date: string; billed: number }>;
  /** Decisions with billed runs or credits taken in the period, most billed first; their `billed` sum to `account.usage.used`. */
  decisions: DecisionUsage[];
}

export interface SetPlanRequest extends WorkspaceScoped {
  plan: unknown;
  overrides: unknown;
}

/** A grant as CREDIT_GRANT_BODY accepts it: the gateway checks it before it is sent; `expires_at` in ISO form. */
export interface GrantCreditsRequest extends WorkspaceScoped {
  kind: GrantKind;
  amount_cents: number;
  currency: Currency;
  expires_at?: string | null;
  /** The caller's idempotency id for the grant: the same id twice grants once. */
  grantId: string;
}

export interface CreditGrantReply {
  id: string;
  kind: 'promotional' | 'paid';
  amount_cents: number;
  currency: Currency;
  expires_at: string | null;
  granted_at: string;
}

/** As SPEND_CAP_BODY accepts it: the gateway checks it before it is sent. */
export interface SetSpendCapRequest extends WorkspaceScoped {
  spend_cap_cents: number | null;
}

/** `days`: checked by the ledger against the plan with executionRetentionBody (whole days from 1 to the plan's, or null). */
export interface SetExecutionRetentionRequest extends WorkspaceScoped {
  days: unknown;
}

export interface ExecutionRetentionReply {
  /** The workspace's own setting; null keeps the plan's. */
  days: number | null;
  plan_days: number;
  /** What the purge applies: the setting, never longer than the plan's. */
  effective_days: number;
}

export const BILLING_SUBJECTS = {
  reserve: rpcSubject<BillingReserveRequest, BillingReserveReply>('v1.billing-ledger.reserve'),
  settle: rpcSubject<BillingSettleRequest, BillingSettleReply>('v1.billing-ledger.settle'),
  grantLease: rpcSubject<GrantLeaseRequest, GrantLeaseReply>('v1.billing-ledger.lease.grant'),
  account: rpcSubject<WorkspaceScoped, AccountReply>('v1.billing-ledger.account'),
  /** The account with the period's billed decisions per day, for the application's usage chart. */
  usageByDay: rpcSubject<WorkspaceScoped, UsageByDayReply>('v1.billing-ledger.usage.days'),
  setPlan: rpcSubject<SetPlanRequest, AccountReply>('v1.billing-ledger.plan.set'),
  grantCredits: rpcSubject<GrantCreditsRequest, CreditGrantReply>('v1.billing-ledger.credits.grant'),
  setSpendCap: rpcSubject<SetSpendCapRequest, AccountReply>('v1.billing-ledger.spend-cap.set'),
  /** How many days each workspace's execution log is kept (its setting within its plan's), for the runner's purge. */
  retention: rpcSubject<RetentionRequest, RetentionReply>('v1.billing-ledger.retention'),
  getExecutionRetention: rpcSubject<WorkspaceScoped, ExecutionRetentionReply>('v1.billing-ledger.execution-retention.get'),
  setExecutionRetention: rpcSubject<SetExecutionRetentionRequest, ExecutionRetentionReply>('v1.billing-ledger.execution-retention.set'),
} as const;

export const BILLING_BROADCASTS = {
  /**
   * A workspace's plan or its overrides changed, whoever asked (an operator, a partner): published by the ledger
   * once the change has committed, so every gateway drops the rate limit it cached (payload: the workspace id).
   */
  planChanged: broadcastSubject<string>('v1.billing-ledger.plan.changed'),
} as const;

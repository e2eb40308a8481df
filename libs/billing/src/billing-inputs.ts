import { Currency, integerIssue, ValidationIssue } from '@ds/contracts';
import { parseInstant } from '@ds/decision-schema';

export const CURRENCIES: readonly Currency[] = ['usd', 'brl'];
export const GRANT_KINDS = ['promotional', 'paid'] as const;
export type GrantKind = (typeof GRANT_KINDS)[number];

/** One billion dollars (or reais) per grant keeps every balance far inside PostgreSQL's bigint in micro-cents. */
export const MAX_GRANT_CENTS = 100_000_000_000;

export interface CreditGrant {
  kind: GrantKind;
  amountCents: number;
  currency: Currency;
  expiresAt: Date | null;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** Checks an operator's grant: only promotional credits may expire, because the paid balance never does. */
export function parseGrant(input: { kind: unknown; amount_cents: unknown; currency: unknown; expires_at: unknown }): Parsed<CreditGrant> {
  const issues: ValidationIssue[] = [];
  if (!GRANT_KINDS.includes(input.kind as GrantKind)) issues.push({ path: 'kind', message: `must be one of ${GRANT_KINDS.join(', ')}` });
  const amount = input.amount_cents;
  if (!Number.isInteger(amount) || (amount as number) < 1 || (amount as number) > MAX_GRANT_CENTS) {
    issues.push({ path: 'amount_cents', message: `must be an integer from 1 to ${MAX_GRANT_CENTS}` });
  }
  if (!CURRENCIES.includes(input.currency as Currency)) issues.push({ path: 'currency', message: `must be one of ${CURRENCIES.join(', ')}` });
  let expiresAt: Date | null = null;
  if (input.expires_at !== undefined && input.expires_at !== null) {
    const expiry = parseInstant(input.expires_at, 'expires_at');
    if (!expiry.ok) {
      issues.push(expiry.issue);
    } else if (input.kind === 'paid') {
      issues.push({ path: 'expires_at', message: 'paid credits never expire; only promotional credits take expires_at' });
    } else {
      expiresAt = expiry.value;
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: { kind: input.kind as GrantKind, amountCents: amount as number, currency: input.currency as Currency, expiresAt } };
}

export function sameGrant(a: CreditGrant, b: CreditGrant): boolean {
  return (
    a.kind === b.kind && a.amountCents === b.amountCents && a.currency === b.currency && (a.expiresAt?.getTime() ?? null) === (b.expiresAt?.getTime() ?? null)
  );
}

/** A new grant that has already expired could never be spent. */
export function expiryIssues(grant: CreditGrant, now: Date): ValidationIssue[] {
  return grant.expiresAt !== null && grant.expiresAt <= now ? [{ path: 'expires_at', message: 'must be in the future' }] : [];
}

/** The cap is compared with spend in micro-cents (bigint): the grant's bound keeps it far inside. */
export function parseSpendCap(value: unknown): Parsed<number | null> {
  if (value === null) return { ok: true, value: null };
  const issue = integerIssue(value, 'spend_cap_cents', 'bigint', { min: 0, max: MAX_GRANT_CENTS }, ' cents, or null for no cap');
  return issue === null ? { ok: true, value: value as number } : { ok: false, issues: [issue] };
}

/**
 * A workspace's own execution-log retention, which may only shorten its plan's (the spec: "or less by workspace
 * setting"): whole days from 1 to the plan's, or null to keep the plan's.
 */
export function parseRetentionSetting(value: unknown, planDays: number): Parsed<number | null> {
  if (value === null) return { ok: true, value: null };
  if (Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= planDays) return { ok: true, value: value as number };
  return {
    ok: false,
    issues: [{ path: 'days', message: `must be a whole number of days from 1 to ${planDays} (the plan's retention), or null for the plan's` }],
  };
}

/**
 * How long the execution log is kept: the workspace's setting when it has one, never longer than its plan's now,
 * so a setting made on a bigger plan shortens to the smaller one's after a downgrade.
 */
export function effectiveRetentionDays(planDays: number, setting: number | null): number {
  return setting === null ? planDays : Math.min(planDays, setting);
}

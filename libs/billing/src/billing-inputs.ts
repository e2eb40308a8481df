import { Currency, GrantKind, ValidationIssue } from '@ds/contracts';

export interface CreditGrant {
  kind: GrantKind;
  amountCents: number;
  currency: Currency;
  expiresAt: Date | null;
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

/**
 * How long the execution log is kept: the workspace's setting when it has one, never longer than its plan's now,
 * so a setting made on a bigger plan shortens to the smaller one's after a downgrade.
 */
export function effectiveRetentionDays(planDays: number, setting: number | null): number {
  return setting === null ? planDays : Math.min(planDays, setting);
}

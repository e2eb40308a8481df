import { z } from 'zod';
import { parseInstant } from '@ds/decision-schema';
import type { Currency, GrantKind } from '../billing-ledger';
import { wholeNumber } from './parse-body';

// The bodies of the ledger's settings and grants. The spend cap and a credit grant are checked in the gateway
// before they are sent (after the operator routes find the workspace); the execution-log retention in the ledger,
// under the account's lock, because its bound is the plan's.

export const CURRENCIES: readonly Currency[] = ['usd', 'brl'];
export const GRANT_KINDS: readonly GrantKind[] = ['promotional', 'paid'];

/** One billion dollars (or reais) per grant keeps every balance far inside PostgreSQL's bigint in micro-cents. */
export const MAX_GRANT_CENTS = 100_000_000_000;

/**
 * An instant as `parseInstant` reads it (a calendar date, or a timestamp with its time zone), its words for every
 * way it can be wrong; the value is the Date.
 */
export function instant(path: string) {
  return z
    .unknown()
    .transform((value, context) => {
      const parsed = parseInstant(value, path);
      if (parsed.ok) return parsed.value;
      context.issues.push({ code: 'custom', message: parsed.issue.message, input: value });
      return z.NEVER;
    })
    .meta({ type: 'string', format: 'date-time' });
}

/** PUT /app/v1/workspaces/{ws}/spend-cap and /admin/v1/workspaces/{ws}/spend-cap: compared with spend in micro-cents, the grant's bound keeps it inside bigint. */
export const SPEND_CAP_BODY = z.object({
  spend_cap_cents: wholeNumber(0, MAX_GRANT_CENTS, `must be a whole number from 0 to ${MAX_GRANT_CENTS} cents, or null for no cap`).nullable(),
});

/**
 * POST /admin/v1/workspaces/{ws}/credits: only promotional credits may expire, because the paid balance never does.
 * That rule is checked even when another field is wrong, so that one answer names every problem.
 */
export const CREDIT_GRANT_BODY = z
  .object({
    kind: z.enum(GRANT_KINDS as [GrantKind, ...GrantKind[]], { error: `must be one of ${GRANT_KINDS.join(', ')}` }),
    // Not wholeNumber: its checks abort the object's, and the rule on paid credits below must still run.
    amount_cents: z
      .number({ error: `must be an integer from 1 to ${MAX_GRANT_CENTS}` })
      .refine((cents) => Number.isInteger(cents) && cents >= 1 && cents <= MAX_GRANT_CENTS, { error: `must be an integer from 1 to ${MAX_GRANT_CENTS}` })
      .meta({ type: 'integer', minimum: 1, maximum: MAX_GRANT_CENTS }),
    currency: z.enum(CURRENCIES as [Currency, ...Currency[]], { error: `must be one of ${CURRENCIES.join(', ')}` }),
    expires_at: instant('expires_at').nullable().optional(),
  })
  .superRefine(
    (grant, context) => {
      if (grant.kind === 'paid' && grant.expires_at instanceof Date)
        context.addIssue({ code: 'custom', path: ['expires_at'], message: 'paid credits never expire; only promotional credits take expires_at' });
    },
    // The other fields' problems do not hide this one: it reads the kind as sent and an expiry that parsed.
    { when: () => true },
  );

/**
 * PUT /app/v1/workspaces/{ws}/execution-retention: a workspace's own retention may only shorten its plan's (the
 * spec: "or less by workspace setting"), whole days from 1 to the plan's, or null to keep the plan's.
 */
export function executionRetentionBody(planDays: number) {
  return z.object({
    days: wholeNumber(1, planDays, `must be a whole number of days from 1 to ${planDays} (the plan's retention), or null for the plan's`).nullable(),
  });
}

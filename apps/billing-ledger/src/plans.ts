import { isStorableInteger, PlanName, PlanView, ValidationIssue } from '@ds/contracts';

/**
 * The plan catalogue. Rate limits, decision counts and retention come from the public spec; included
 * volumes of the paid plans and prices per million past them are this service's choice (docs/billing.md).
 */
export const PLANS: Record<PlanName, PlanView> = {
  genesis: {
    name: 'genesis',
    rate_limit_per_minute: 60,
    hard_cap: false,
    included_decisions: 1_000_000,
    max_decisions: 2,
    price_per_million_cents: 50_000,
    retention_days: 7,
  },
  developer: {
    name: 'developer',
    rate_limit_per_minute: 300,
    hard_cap: false,
    included_decisions: 5_000_000,
    max_decisions: 10,
    price_per_million_cents: 40_000,
    retention_days: 14,
  },
  growth: {
    name: 'growth',
    rate_limit_per_minute: 2_000,
    hard_cap: false,
    included_decisions: 25_000_000,
    max_decisions: null,
    price_per_million_cents: 30_000,
    retention_days: 30,
  },
  enterprise: {
    name: 'enterprise',
    rate_limit_per_minute: 10_000,
    hard_cap: false,
    included_decisions: 100_000_000,
    max_decisions: null,
    price_per_million_cents: 20_000,
    retention_days: 365,
  },
};

export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

/** The plan of a workspace the ledger has not seen yet. */
export const DEFAULT_PLAN: PlanName = 'genesis';

export interface PlanOverrides {
  included_decisions?: number;
  rate_limit_per_minute?: number;
  hard_cap?: boolean;
  price_per_million_cents?: number | null;
  /** A sub-workspace's own decision limit (partner mode); null: unlimited. */
  max_decisions?: number | null;
}

/**
 * A price is also the micro-cents one decision costs, and holds and spend sum those in bigint columns: a million
 * dollars per million decisions leaves room for tens of billions of decisions.
 */
export const MAX_PRICE_PER_MILLION_CENTS = 100_000_000;

const OVERRIDE_RULES: Record<keyof PlanOverrides, (value: unknown) => boolean> = {
  included_decisions: (v) => isStorableInteger(v, 'bigint', { min: 0 }),
  rate_limit_per_minute: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 1_000_000,
  hard_cap: (v) => typeof v === 'boolean',
  price_per_million_cents: (v) => v === null || isStorableInteger(v, 'bigint', { min: 0, max: MAX_PRICE_PER_MILLION_CENTS }),
  max_decisions: (v) => v === null || isStorableInteger(v, 'bigint', { min: 0 }),
};

const OVERRIDE_EXPECTED: Record<keyof PlanOverrides, string> = {
  included_decisions: `must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
  rate_limit_per_minute: 'must be a whole number from 1 to 1000000',
  hard_cap: 'must be a boolean',
  price_per_million_cents: `must be a whole number from 0 to ${MAX_PRICE_PER_MILLION_CENTS}, or null`,
  max_decisions: `must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, or null`,
};

/** Returns the problems with an operator's overrides, one `{ path, message }` each. */
export function checkOverrides(input: unknown): ValidationIssue[] {
  if (input === undefined || input === null) return [];
  if (typeof input !== 'object' || Array.isArray(input)) return [{ path: 'overrides', message: 'must be an object' }];
  const issues: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(input)) {
    // Own properties only: `constructor` or `toString` must be unknown overrides, not Object.prototype's functions.
    const rule = Object.hasOwn(OVERRIDE_RULES, key) ? OVERRIDE_RULES[key as keyof PlanOverrides] : undefined;
    if (!rule) issues.push({ path: `overrides.${key}`, message: 'unknown override' });
    else if (!rule(value)) issues.push({ path: `overrides.${key}`, message: OVERRIDE_EXPECTED[key as keyof PlanOverrides] });
  }
  return issues;
}

export function effectivePlan(name: PlanName, overrides: PlanOverrides): PlanView {
  return { ...PLANS[name], ...overrides };
}

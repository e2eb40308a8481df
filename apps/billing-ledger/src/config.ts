import { EnvReader } from '@ds/platform';

export interface BillingConfig {
  /** A reservation older than this without a settle is settled by the sweeper; it must outlast the longest run. */
  settleAfterMs: number;
  sweepIntervalMs: number;
  billingUrl: string;
  upgradeUrl: string;
  /** Where budget leases are counted; without it every run reserves on its own. */
  redisUrl: string | null;
  /** Whether leases are granted past the included volume too (overage decisions and their money); off: only included ones. */
  moneyLeases: boolean;
}

export function readBillingConfig(env: EnvReader): BillingConfig {
  const appUrl = env.url('APP_URL', 'http://localhost:3000', ['http', 'https']).replace(/\/+$/, '');
  return {
    settleAfterMs: env.int('BILLING_SETTLE_AFTER_MS', 120_000, 1_000, 86_400_000),
    sweepIntervalMs: env.int('BILLING_SWEEP_INTERVAL_MS', 5_000, 100, 600_000),
    billingUrl: `${appUrl}/app/billing`,
    upgradeUrl: `${appUrl}/app/billing/plans`,
    redisUrl: env.url('REDIS_URL', undefined, ['redis', 'rediss']) ?? null,
    moneyLeases: env.bool('BILLING_MONEY_LEASES', true),
  };
}

import { afterAll, beforeAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { createLogger, dataSourceOptions, NatsLink } from '@ds/platform';
import { AccountsService } from '../../apps/billing-ledger/src/accounts.service';
import { BillingConfig } from '../../apps/billing-ledger/src/config';
import { CreditsService } from '../../apps/billing-ledger/src/credits.service';
import { RedisLeaseCounter } from '../../apps/billing-ledger/src/lease-counter';
import { LeasesService } from '../../apps/billing-ledger/src/leases.service';
import { billingLedger } from '../../apps/billing-ledger/src/main';
import { ReservationsService } from '../../apps/billing-ledger/src/reservations.service';
import { MigratedDatabase, migratedDatabase } from './service-database';

export const LEASES_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const leaseTestConfig: BillingConfig = {
  settleAfterMs: 120_000,
  sweepIntervalMs: 5_000,
  billingUrl: 'http://app.test/app/billing',
  upgradeUrl: 'http://app.test/app/billing/plans',
  redisUrl: LEASES_REDIS_URL,
  moneyLeases: true,
};

export interface LeaseReplicas {
  database: MigratedDatabase;
  /** Replica B's pool, its sessions named `replicaB` so that a spec can kill them as a dying process's would be. */
  dbB: DataSource;
  replicaB: string;
  /** A plain client, for what the runner does to the counters by script. */
  redis: Redis;
  /** Replica A (on the database's own pool) and B, each with its own lease counter connection. */
  replicas: Array<{ leases: LeasesService; reservations: ReservationsService }>;
  accounts: AccountsService;
  credits: CreditsService;
  close(): Promise<void>;
}

/**
 * Two billing-ledger replicas sharing one migrated database and the real Redis, the way the lease specs play
 * runs against them. `accountsSeeLeases` gives the account view replica A's lease service, so that its figures
 * leave leased but untaken budget out.
 */
export async function leaseReplicas(name: string, options: { accountsSeeLeases?: boolean; config?: BillingConfig } = {}): Promise<LeaseReplicas> {
  const config = options.config ?? leaseTestConfig;
  const logger = createLogger('billing-ledger', 'silent');
  const replicaB = `${name}_replica_b_${randomBytes(3).toString('hex')}`;
  const database = await migratedDatabase(`billing_${name}`, billingLedger.database, 8);
  const poolOptions = dataSourceOptions(database.url, billingLedger.database, 8);
  const extra = (poolOptions as { extra: Record<string, unknown> }).extra;
  const dbB = new DataSource({ ...poolOptions, extra: { ...extra, application_name: replicaB } } as typeof poolOptions);
  await dbB.initialize();
  const redis = new Redis(LEASES_REDIS_URL);
  const counters: RedisLeaseCounter[] = [];
  const replicas = [database.dataSource, dbB].map((db) => {
    const counter = new RedisLeaseCounter(LEASES_REDIS_URL, logger);
    counters.push(counter);
    const leases = new LeasesService(db, config, logger, counter);
    return { leases, reservations: new ReservationsService(db, config, leases) };
  });
  const nats = { connection: { publish: () => undefined }, logger: { warn: () => undefined } } as unknown as NatsLink;
  const accounts = new AccountsService(database.dataSource, nats, undefined, options.accountsSeeLeases ? replicas[0]!.leases : undefined);
  return {
    database,
    dbB,
    replicaB,
    redis,
    replicas,
    accounts,
    credits: new CreditsService(database.dataSource),
    async close() {
      for (const counter of counters) await counter.close();
      redis.disconnect();
      if (dbB.isInitialized) await dbB.destroy();
      await database.drop();
    },
  };
}

/**
 * The lease replicas of one spec file: set up before its tests and closed after them. Fields are read through
 * to the fixture, so the spec can name them at module level before `beforeAll` has built it.
 */
export function useLeaseReplicas(name: string, options: { accountsSeeLeases?: boolean; config?: BillingConfig } = {}): Omit<LeaseReplicas, 'close'> {
  let built: LeaseReplicas | undefined;
  beforeAll(async () => {
    built = await leaseReplicas(name, options);
  });
  afterAll(() => built?.close());
  return new Proxy({} as Omit<LeaseReplicas, 'close'>, {
    get(_target, field) {
      if (built === undefined) throw new Error('the lease replicas are built in beforeAll: read them inside a hook or a test');
      return built[field as keyof LeaseReplicas];
    },
  });
}

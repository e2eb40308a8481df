import { randomBytes, randomUUID } from 'node:crypto';
import { connect, JetStreamClient, NatsConnection } from 'nats';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { BillingSettlement, ServiceError, SETTLEMENT_STREAM } from '@ds/contracts';
import { newId } from '@ds/ids';
import { createLogger, dataSourceOptions, DEFAULT_SESSION_TIMEOUTS, NatsLink } from '@ds/platform';
import { defined } from '../../../test/e2e/support/api';
import { ADMIN_DATABASE_URL, NatsServer, startNats, waitFor } from '../../../test/e2e/support/cluster';
import { checkBooks } from '../../../test/support/ledger-books';
import { MigratedDatabase, migratedDatabase } from '../../../test/support/service-database';
import { AccountsService } from './accounts.service';
import { CreditsService } from './credits.service';
import { ReservationEntity, TransferEntity } from './entities';
import { billingLedger } from './main';
import { PlanOverrides } from './plans';
import { ReservationsService } from './reservations.service';
import { declareSettlementStream, SettlementConsumer } from './settlement-stream';
import { billingTestConfig } from '../../../test/support/service-configs';

/**
 * Step 6 and the settlement batches with two ledger replicas: two ReservationsService instances, each on a
 * DataSource (and pool) of its own against one real PostgreSQL database, and a real nats-server for the
 * settlements stream. Replica B's connections carry an application name of their own so that the test can kill
 * them the way a dying process would.
 */
const REPLICA_B = `replica_b_${randomBytes(3).toString('hex')}`;
const config = billingTestConfig();
const logger = createLogger('billing-ledger', 'silent');
const BURST = 200;

let database: MigratedDatabase;
let dbA: DataSource;
let dbB: DataSource;
let replicaA: ReservationsService;
let replicaB: ReservationsService;
let accounts: AccountsService;
let credits: CreditsService;

/** Kills replica B's sessions from a connection of its own, so that the kill never waits behind either pool. */
async function terminateReplicaB(): Promise<void> {
  const client = await adminClient();
  try {
    await killReplicaB(client);
  } finally {
    await client.end();
  }
}

async function adminClient(): Promise<Client> {
  const client = new Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  return client;
}

async function killReplicaB(admin: Client): Promise<void> {
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [REPLICA_B]);
}

async function replicaBDataSource(timeouts = DEFAULT_SESSION_TIMEOUTS): Promise<DataSource> {
  const options = dataSourceOptions(database.url, billingLedger.database, 8, timeouts);
  const extra = (options as { extra: Record<string, unknown> }).extra;
  const source = new DataSource({ ...options, extra: { ...extra, application_name: REPLICA_B } } as typeof options);
  await source.initialize();
  return source;
}

beforeAll(async () => {
  database = await migratedDatabase('billing_replicas', billingLedger.database, 8);
  dbA = database.dataSource;
  dbB = await replicaBDataSource();
  replicaA = new ReservationsService(dbA, config);
  replicaB = new ReservationsService(dbB, config);
  accounts = new AccountsService(dbA, { connection: { publish: () => undefined }, logger: { warn: () => undefined } } as unknown as NatsLink);
  credits = new CreditsService(dbA);
});

afterAll(async () => {
  if (dbB?.isInitialized) await dbB.destroy();
  await database?.drop();
});

async function workspace(overrides: PlanOverrides): Promise<string> {
  const workspaceId = randomUUID();
  await accounts.setPlan({ workspaceId, plan: 'genesis', overrides });
  // One reserve on each replica (released when it held anything): each then knows the workspace's period, and
  // takes the one-statement path while the included volume has room.
  for (const replica of [replicaA, replicaB]) {
    const executionId = newId('exec');
    try {
      await replica.reserve({ workspaceId, executionId });
      await replica.settle({ workspaceId, executionId, billable: false });
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
    }
  }
  return workspaceId;
}

interface Burst {
  /** Per reserve, in order: 'ok' or the refusal's code. */
  results: string[];
  held: string[];
}

/** Reserves BURST executions at once, alternating replicas; `during` runs once the first of B's reserves has ended. */
async function burst(workspaceId: string, during?: () => Promise<void>): Promise<Burst> {
  const ids = Array.from({ length: BURST }, () => newId('exec'));
  let firstOfB!: () => void;
  const bStarted = new Promise<void>((resolve) => (firstOfB = resolve));
  const all = Promise.allSettled(
    ids.map((executionId, i) =>
      i % 2 === 0 ? replicaA.reserve({ workspaceId, executionId }) : replicaB.reserve({ workspaceId, executionId }).finally(firstOfB),
    ),
  );
  if (during) {
    await bStarted;
    await during();
  }
  const results = (await all).map((result) =>
    result.status === 'fulfilled' ? 'ok' : result.reason instanceof ServiceError ? result.reason.code : `failed: ${(result.reason as Error).message}`,
  );
  return { results, held: ids.filter((_, i) => results[i] === 'ok') };
}

const count = (list: string[], value: string) => list.filter((item) => item === value).length;
const codesOf = (results: string[]) => [...new Set(results)].sort();

async function settleAll(workspaceId: string, held: string[], billable: (index: number) => boolean): Promise<void> {
  const outcomes = await replicaA.settleBatch(held.map((executionId, i) => ({ workspaceId, executionId, billable: billable(i) })));
  expect(outcomes.filter((outcome) => outcome instanceof ServiceError)).toEqual([]);
}

async function holdsByCode(workspaceId: string): Promise<Record<string, number>> {
  const rows: Array<{ code: string; n: number }> = await dbA.query(
    `SELECT code, count(*)::int AS n FROM transfers WHERE workspace_id = $1 AND phase = 'pending' GROUP BY code`,
    [workspaceId],
  );
  return Object.fromEntries(rows.map((row) => [row.code, row.n]));
}

/** Every balance equals the sum of its entries, every ledger sums to zero, every hold is resolved at most once. */
async function expectBooksBalance(): Promise<void> {
  const books = await checkBooks(dbA);
  expect({ drifted: books.drifted, unbalanced: books.unbalanced }).toEqual({ drifted: [], unbalanced: [] });
  // A reservation without its holds, or holds without their reservation, would be a decision the books miss.
  const orphans = await dbA.query(`
    SELECT r.execution_id FROM reservations r LEFT JOIN transfers t ON t.cause_id = r.execution_id AND t.phase = 'pending' WHERE t.id IS NULL
    UNION ALL
    SELECT t.cause_id FROM transfers t LEFT JOIN reservations r ON r.execution_id = t.cause_id WHERE t.code <> 'grant' AND t.code <> 'expiry' AND r.execution_id IS NULL`);
  expect(orphans).toEqual([]);
}

describe('step 6 across two replicas, hundreds of reserves at each 402 edge', () => {
  it('the included volume running out into credits: exactly what the volume and the credits pay for, then CREDITS_EXHAUSTED', async () => {
    // 1 cent a decision: 60 included (2 of them used by the warm-up, then released), then 40 cents of credits.
    const ws = await workspace({ included_decisions: 60, price_per_million_cents: 1_000_000 });
    await credits.grant({ workspaceId: ws, grantId: 'paid', kind: 'paid', amount_cents: 40, currency: 'usd', expires_at: undefined });
    const { results, held } = await burst(ws);
    expect(codesOf(results)).toEqual(['CREDITS_EXHAUSTED', 'ok']);
    expect(count(results, 'ok')).toBe(100);
    expect(await holdsByCode(ws)).toMatchObject({ included_decision: 60 + 2, overage_decision: 40, decision_charge: 40 });
    await settleAll(ws, held, (i) => i % 3 !== 0);
    const account = await accounts.account(ws);
    expect(account.usage).toMatchObject({ reserved: 0, used: held.filter((_, i) => i % 3 !== 0).length });
    // Released charges came back; committed ones are spent: together they are the 40 cents granted.
    expect(account.balance.available_cents + account.spend_cap.spent_cents).toBe(40);
    await expectBooksBalance();
  });

  it('credits running out at the spend cap: exactly what the credits pay for, then CREDITS_EXHAUSTED before SPEND_CAP_REACHED', async () => {
    const ws = await workspace({ included_decisions: 0, price_per_million_cents: 1_000_000 });
    await credits.grant({
      workspaceId: ws,
      grantId: 'promo',
      kind: 'promotional',
      amount_cents: 30,
      currency: 'usd',
      expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    });
    await credits.grant({ workspaceId: ws, grantId: 'paid', kind: 'paid', amount_cents: 45, currency: 'usd', expires_at: undefined });
    // The cap is reached exactly when the credits run out: the spec's order answers CREDITS_EXHAUSTED, never the cap.
    await accounts.setSpendCap({ workspaceId: ws, spend_cap_cents: 75 });
    const { results, held } = await burst(ws);
    expect(codesOf(results)).toEqual(['CREDITS_EXHAUSTED', 'ok']);
    expect(count(results, 'ok')).toBe(75);
    expect((await accounts.account(ws)).balance.available_cents).toBe(0);
    await settleAll(ws, held, () => true);
    expect((await accounts.account(ws)).spend_cap.spent_cents).toBe(75);
  });

  it('the spend cap: never a cent past it, SPEND_CAP_REACHED while credits remain', async () => {
    const ws = await workspace({ included_decisions: 20, price_per_million_cents: 1_000_000 });
    await credits.grant({ workspaceId: ws, grantId: 'paid', kind: 'paid', amount_cents: 1_000, currency: 'usd', expires_at: undefined });
    await accounts.setSpendCap({ workspaceId: ws, spend_cap_cents: 35 });
    const { results, held } = await burst(ws);
    expect(codesOf(results)).toEqual(['SPEND_CAP_REACHED', 'ok']);
    expect(count(results, 'ok')).toBe(20 + 35);
    expect((await accounts.account(ws)).spend_cap.spent_cents).toBe(35);
    await settleAll(ws, held, (i) => i % 2 === 0);
    const account = await accounts.account(ws);
    expect(account.spend_cap.spent_cents).toBeLessThanOrEqual(35);
    expect(account.usage.reserved).toBe(0);
  });

  it('the hard cap: never a decision past the included volume, QUOTA_EXCEEDED whatever credits remain', async () => {
    const ws = await workspace({ included_decisions: 90, hard_cap: true });
    await credits.grant({ workspaceId: ws, grantId: 'paid', kind: 'paid', amount_cents: 1_000, currency: 'usd', expires_at: undefined });
    const { results, held } = await burst(ws);
    expect(codesOf(results)).toEqual(['QUOTA_EXCEEDED', 'ok']);
    expect(count(results, 'ok')).toBe(90);
    await settleAll(ws, held, () => true);
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 90, reserved: 0, included: 90 });
    expect((await accounts.account(ws)).balance.available_cents).toBe(1_000);
  });

  it('a replica killed mid-burst: its reserves fail whole, the survivor never passes the cap, the books balance', async () => {
    const ws = await workspace({ included_decisions: 70, hard_cap: true });
    // Connected beforehand, so that the kill lands while B still has most of its hundred reserves to go, however slow
    // a new connection is on a busy machine: B has ended one reserve, so it is killed mid-burst, not before it.
    const admin = await adminClient();
    const { results, held } = await burst(ws, () => killReplicaB(admin)).finally(() => admin.end());
    expect(count(results, 'ok')).toBeLessThanOrEqual(70);
    expect(results.filter((result) => result.startsWith('failed:')).length).toBeGreaterThan(0);
    expect(results.every((result) => result === 'ok' || result === 'QUOTA_EXCEEDED' || result.startsWith('failed:'))).toBe(true);
    const pending: Array<{ execution_id: string }> = await dbA.query(`SELECT execution_id FROM reservations WHERE workspace_id = $1 AND state = 'pending'`, [
      ws,
    ]);
    expect(pending.length).toBeLessThanOrEqual(70);
    expect(pending.map((row) => row.execution_id)).toEqual(expect.arrayContaining(held));
    // The survivor takes what is left, exactly.
    const rest = await Promise.allSettled(Array.from({ length: 100 }, () => replicaA.reserve({ workspaceId: ws, executionId: newId('exec') })));
    expect(rest.filter((result) => result.status === 'fulfilled').length).toBe(70 - pending.length);
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 0, reserved: 70 });
    // Whatever the killed replica did not finish left nothing behind: no reservation without its hold, nor the reverse.
    await expectBooksBalance();
    // The replica comes back.
    await dbB.destroy();
    dbB = await replicaBDataSource();
    replicaB = new ReservationsService(dbB, config);
  });
});

describe('settlement batches', () => {
  it('settle each execution once in a batch with duplicates and both outcomes, and answer the rest', async () => {
    const ws = await workspace({ included_decisions: 100, price_per_million_cents: 1_000_000 });
    const [e1, e2, e3, e4] = [newId('exec'), newId('exec'), newId('exec'), newId('exec')];
    for (const executionId of [e1, e2, e3, e4]) await replicaB.reserve({ workspaceId: ws, executionId });
    const outcomes = await replicaA.settleBatch([
      { workspaceId: ws, executionId: e1, billable: true },
      { workspaceId: ws, executionId: e1, billable: true },
      { workspaceId: ws, executionId: e2, billable: false },
      { workspaceId: ws, executionId: e2, billable: true },
      { workspaceId: ws, executionId: e3, billable: true },
      { workspaceId: ws, executionId: e3, billable: false },
      { workspaceId: ws, executionId: 'exec_never_reserved', billable: false },
      { workspaceId: ws, executionId: 'exec_never_reserved', billable: true },
      { workspaceId: 'another-workspace', executionId: e4, billable: true },
      { workspaceId: ws, executionId: e4, billable: 'yes' as unknown as boolean },
    ]);
    const shown = outcomes.map((outcome) => (outcome instanceof ServiceError ? outcome.code : outcome.state));
    expect(shown).toEqual(['committed', 'committed', 'released', 'CONFLICT', 'committed', 'CONFLICT', 'released', 'NOT_FOUND', 'CONFLICT', 'INVALID_REQUEST']);
    expect(outcomes[0]).toEqual({ state: 'committed', paid_by: { funding: 'included', charges: [] } });
    const phases = async (executionId: string) => (await dbA.getRepository(TransferEntity).findBy({ causeId: executionId })).map((t) => t.phase).sort();
    expect([await phases(e1), await phases(e2), await phases(e3), await phases(e4)]).toEqual([
      ['pending', 'post'],
      ['pending', 'void'],
      ['pending', 'post'],
      ['pending'],
    ]);
    // The same batch again (a redelivery) changes nothing.
    const again = await replicaB.settleBatch([
      { workspaceId: ws, executionId: e1, billable: true },
      { workspaceId: ws, executionId: e2, billable: false },
    ]);
    expect(again.map((outcome) => (outcome instanceof ServiceError ? outcome.code : outcome.state))).toEqual(['committed', 'released']);
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 2, reserved: 1 });
  });

  it('two replicas posting overlapping batches at once settle every execution exactly once, without deadlock', async () => {
    const included = await workspace({ included_decisions: 1_000 });
    const paid = await workspace({ included_decisions: 0, price_per_million_cents: 1_000_000 });
    await credits.grant({ workspaceId: paid, grantId: 'paid', kind: 'paid', amount_cents: 1_000, currency: 'usd', expires_at: undefined });
    const runs: BillingSettlement[] = [];
    for (let i = 0; i < 120; i++) {
      const workspaceId = i % 2 === 0 ? included : paid;
      const executionId = newId('exec');
      await (i % 2 === 0 ? replicaA : replicaB).reserve({ workspaceId, executionId });
      runs.push({ workspaceId, executionId, billable: i % 5 !== 0 });
    }
    const reversed = [...runs].reverse();
    const [a, b] = await Promise.all([replicaA.settleBatch(runs), replicaB.settleBatch(reversed)]);
    expect([...a, ...b].filter((outcome) => outcome instanceof ServiceError)).toEqual([]);
    const states = await dbA.getRepository(ReservationEntity).findBy({ workspaceId: paid });
    expect(states.filter((row) => row.state === 'committed').length).toBe(runs.filter((run) => run.workspaceId === paid && run.billable).length);
    const resolutions: Array<{ n: number }> = await dbA.query(
      `SELECT count(*)::int AS n FROM transfers WHERE cause_id = ANY($1::text[]) AND phase IN ('post', 'void') GROUP BY cause_id, pending_id HAVING count(*) > 1`,
      [runs.map((run) => run.executionId)],
    );
    expect(resolutions).toEqual([]);
    await expectBooksBalance();
  });
});

describe('settlements through JetStream', () => {
  let nats: NatsServer;
  let publisher: NatsConnection;
  let jetstream: JetStreamClient;

  beforeAll(async () => {
    nats = await startNats();
    publisher = await connect({ servers: nats.url });
    jetstream = publisher.jetstream();
    // The consumer every replica here shares, declared before any of them with a 3-second ack wait instead of 10, so
    // that what a killed replica held comes back within seconds; the replicas' own declarations keep it.
    await declareSettlementStream(publisher, 3_000);
  });

  afterAll(async () => {
    await publisher?.close();
    await nats?.stop();
  });

  const publish = (settlement: BillingSettlement) =>
    jetstream.publish(SETTLEMENT_STREAM.subjectFor(settlement.workspaceId), JSON.stringify(settlement), {
      msgID: SETTLEMENT_STREAM.msgIdFor(settlement.executionId),
    });

  it('posts a runner’s batch message once however often it is stored, beside single settlements, and drops one that is not settlements', async () => {
    const ws = await workspace({ included_decisions: 500 });
    // The batches name their runs' decisions; the single settlements, as earlier runners published them, do not.
    const runs = Array.from({ length: 30 }, (_, i): BillingSettlement => ({
      workspaceId: ws,
      executionId: newId('exec'),
      billable: i % 3 !== 0,
      ...(i < 20 ? { decisionId: 'dec_batched' } : {}),
    }));
    for (const run of runs) await replicaA.reserve({ workspaceId: ws, executionId: run.executionId });
    const connection = await connect({ servers: nats.url });
    const consumer = new SettlementConsumer(connection, replicaA, logger);
    await consumer.start();
    try {
      const batch = JSON.stringify({ settlements: runs.slice(0, 20) });
      await jetstream.publish(SETTLEMENT_STREAM.batchSubject, batch);
      await jetstream.publish(SETTLEMENT_STREAM.batchSubject, batch);
      await jetstream.publish(SETTLEMENT_STREAM.batchSubject, JSON.stringify({ settlements: [runs[20], { executionId: 'exec_forged' }] }));
      for (const run of runs.slice(20)) await publish(run);
      await waitFor(
        async () => (await dbA.getRepository(ReservationEntity).countBy({ workspaceId: ws, state: 'pending' })) === 0,
        30_000,
        'every settlement to be posted',
      );
      await consumer.caughtUp();
    } finally {
      await consumer.stop();
      await connection.close();
    }
    const rows = await dbA.getRepository(ReservationEntity).findBy({ workspaceId: ws });
    const byId = new Map(rows.map((row) => [row.executionId, row.state]));
    expect(runs.map((run) => byId.get(run.executionId))).toEqual(runs.map((run) => (run.billable ? 'committed' : 'released')));
    expect((await accounts.account(ws)).usage).toMatchObject({ used: runs.filter((run) => run.billable).length, reserved: 0 });
    const billedOf = (from: number, to: number) => runs.slice(from, to).filter((run) => run.billable).length;
    expect((await accounts.usageByDay(ws)).decisions).toEqual([
      { decision_id: 'dec_batched', billed: billedOf(0, 20), credits_microcents: 0 },
      { decision_id: null, billed: billedOf(20, 30), credits_microcents: 0 },
    ]);
    await expectBooksBalance();
  }, 60_000);

  it('a ledger killed mid-batch posts nothing; the messages are delivered again and posted once by the other replica', async () => {
    const ws = await workspace({ included_decisions: 500 });
    const runs = Array.from({ length: 40 }, (_, i): BillingSettlement => ({ workspaceId: ws, executionId: newId('exec'), billable: i % 4 !== 0 }));
    for (const run of runs) await replicaA.reserve({ workspaceId: ws, executionId: run.executionId });

    // Replica B takes the batch and stops on the workspace's lock, held here, before writing anything. Its batches
    // after the one killed wait on the same lock until they give up; 3 seconds instead of the default 10 (longer
    // than B takes to be seen waiting and killed, so the kill still lands mid-batch).
    const sourceB = await replicaBDataSource({ ...DEFAULT_SESSION_TIMEOUTS, lockMs: 3_000 });
    const connectionB = await connect({ servers: nats.url });
    const consumerB = new SettlementConsumer(connectionB, new ReservationsService(sourceB, config), logger);
    await consumerB.start();
    const blocker = dbA.createQueryRunner();
    await blocker.connect();
    await blocker.startTransaction();
    await blocker.query('SELECT 1 FROM accounts WHERE workspace_id = $1 FOR UPDATE', [ws]);
    for (const run of runs) await publish(run);
    // The same settlement published again is stored once.
    expect((await publish(defined(runs[0]))).duplicate).toBe(true);
    await waitFor(
      async () => {
        const rows: Array<{ n: number }> = await dbA.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
          [REPLICA_B],
        );
        // count(*) without GROUP BY answers exactly one row.
        return rows[0]!.n > 0;
      },
      10_000,
      'replica B to wait on the lock mid-batch',
    );

    // Replica B dies: its NATS connection is gone before it can hand anything back, its transaction is rolled back.
    await connectionB.close();
    await terminateReplicaB();
    await consumerB.stop();
    await sourceB.destroy();
    await blocker.rollbackTransaction();
    await blocker.release();
    expect(await dbA.getRepository(ReservationEntity).countBy({ workspaceId: ws, state: 'pending' })).toBe(runs.length);

    const connectionA = await connect({ servers: nats.url });
    const consumerA = new SettlementConsumer(connectionA, replicaA, logger);
    await consumerA.start();
    try {
      await waitFor(
        async () => (await dbA.getRepository(ReservationEntity).countBy({ workspaceId: ws, state: 'pending' })) === 0,
        30_000,
        'the settlements to be redelivered',
      );
      await consumerA.caughtUp();
    } finally {
      await consumerA.stop();
      await connectionA.close();
    }
    const rows = await dbA.getRepository(ReservationEntity).findBy({ workspaceId: ws });
    const byId = new Map(rows.map((row) => [row.executionId, row.state]));
    expect(runs.map((run) => byId.get(run.executionId))).toEqual(runs.map((run) => (run.billable ? 'committed' : 'released')));
    expect((await accounts.account(ws)).usage).toMatchObject({ used: runs.filter((run) => run.billable).length, reserved: 0 });
    await expectBooksBalance();
  }, 60_000);
});

import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { Registry } from 'prom-client';
import { BillingSettleRequest, ServiceError } from '@ds/contracts';
import { HAND_BACK_SCRIPT, LEASE_LIMITS, leaseCounterKey, TAKE_UNIT_SCRIPT } from '@ds/billing';
import { newId } from '@ds/ids';
import { createLogger, Metrics } from '@ds/platform';
import { ADMIN_DATABASE_URL } from '../../../test/e2e/support/cluster';
import { checkBooks } from '../../../test/support/ledger-books';
import { LEASES_REDIS_URL, leaseTestConfig, useLeaseReplicas } from '../../../test/support/lease-replicas';
import { RedisLeaseCounter } from './lease-counter';
import { LeasesService } from './leases.service';
import { LeaseEntity } from './entities';
import { PlanOverrides } from './plans';
import { ExecutionOutcomes, Sweeper } from './sweeper';

/**
 * Budget leases against the real PostgreSQL and Redis, with two ledger replicas on pools of their own (replica B's
 * sessions can be killed as a dying process's would be). Runs are played the way the runner plays them: take a
 * unit from the workspace's counter with the script, else reserve on their own and ask for a new lease; settle
 * against the lease; hand an unbilled unit back, or have the ledger free it.
 */
const config = leaseTestConfig;
const logger = createLogger('billing-ledger', 'silent');

const ledger = useLeaseReplicas('leases');

async function workspace(overrides: PlanOverrides): Promise<string> {
  const workspaceId = randomUUID();
  await ledger.accounts.setPlan({ workspaceId, plan: 'genesis', overrides });
  return workspaceId;
}

/** A unit taken (`left` ≥ 0), a lease used up or past its time (`left` -1), or no lease (null). */
type Taken = { leaseId: string; left: number; units: number } | null;

async function take(workspaceId: string): Promise<Taken> {
  const reply = (await ledger.redis.eval(TAKE_UNIT_SCRIPT, 1, leaseCounterKey(workspaceId))) as [string, number, number] | null;
  if (!reply) return null;
  return { leaseId: reply[0], left: reply[1], units: reply[2] };
}

/**
 * One run as the runner makes it: a unit from the lease, else a reservation of its own (and a new lease asked
 * for). Answers how step 6 went, and settles with `billable`, naming `decisionId` when given.
 */
async function run(workspaceId: string, replica: number, billable: boolean, decisionId?: string): Promise<'lease' | 'reserved' | string> {
  const { leases, reservations: replicaReservations } = ledger.replicas[replica]!;
  const reservations = { settle: (request: BillingSettleRequest) => replicaReservations.settle(decisionId ? { ...request, decisionId } : request) };
  const taken = await take(workspaceId);
  if (taken && taken.left >= 0) {
    const leaseId = taken.leaseId;
    if (taken.left * 4 < taken.units) void leases.grant({ workspaceId, seenLeaseId: leaseId }).catch(() => undefined);
    if (billable) await reservations.settle({ workspaceId, executionId: newId('exec'), billable, leaseId });
    else if (Number(await ledger.redis.eval(HAND_BACK_SCRIPT, 1, leaseCounterKey(workspaceId), leaseId)) !== 1)
      await reservations.settle({ workspaceId, executionId: newId('exec'), billable, leaseId });
    return 'lease';
  }
  void leases.grant({ workspaceId, seenLeaseId: taken?.leaseId ?? null }).catch(() => undefined);
  const executionId = newId('exec');
  try {
    await replicaReservations.reserve({ workspaceId, executionId });
  } catch (error) {
    if (error instanceof ServiceError) return error.code;
    throw error;
  }
  await reservations.settle({ workspaceId, executionId, billable });
  return 'reserved';
}

async function usage(workspaceId: string) {
  return (await ledger.accounts.account(workspaceId)).usage;
}

async function expectBooksBalance(): Promise<void> {
  const db = ledger.database.dataSource;
  const books = await checkBooks(db);
  expect({ drifted: books.drifted, unbalanced: books.unbalanced }).toEqual({ drifted: [], unbalanced: [] });
  // Each lease's current hold is what its row says it holds.
  const mismatched = await db.query(`
    SELECT l.id FROM leases l
    LEFT JOIN transfers t ON t.id = l.id || ':hold:' || l.hold_seq AND NOT EXISTS (SELECT 1 FROM transfers v WHERE v.pending_id = t.id)
    WHERE (l.held > 0) <> (t.id IS NOT NULL) OR (t.id IS NOT NULL AND t.amount <> l.held)`);
  expect(mismatched).toEqual([]);
}

/** Executions billed per workspace: one committed reservation each, paid by a lease or held on their own. */
async function billedExecutions(workspaceId: string): Promise<number> {
  const [row] = await ledger.database.dataSource.query(`SELECT count(*)::int AS n FROM reservations WHERE workspace_id = $1 AND state = 'committed'`, [
    workspaceId,
  ]);
  return row.n;
}

describe('budget leases', () => {
  it('grants a lease as one hold, grows it with the rate, and posts billed runs against it', async () => {
    const workspaceId = await workspace({ included_decisions: 100_000 });
    const first = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    expect(first.units).toBe(2);
    // A second caller that did not see the first lease is told about it rather than given another.
    expect(await ledger.replicas[1]!.leases.grant({ workspaceId, seenLeaseId: null })).toEqual(first);
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) outcomes.push(await run(workspaceId, i % 2, true, i < 30 ? 'dec_often' : 'dec_rarely'));
    expect(outcomes.filter((outcome) => outcome === 'lease').length).toBeGreaterThan(20);
    const leases = await ledger.database.dataSource.getRepository(LeaseEntity).find({ where: { workspaceId }, order: { grantedAt: 'ASC' } });
    expect(Math.max(...leases.map((lease) => lease.units))).toBeGreaterThan(2);
    // Billed: every run; leased but untaken units are neither used nor reserved.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await usage(workspaceId)).toMatchObject({ used: 40, reserved: 0 });
    expect(await billedExecutions(workspaceId)).toBe(40);
    // Per decision, whether a run was paid by a lease or reserved on its own.
    expect((await ledger.accounts.usageByDay(workspaceId)).decisions).toEqual([
      { decision_id: 'dec_often', billed: 30, credits_microcents: 0 },
      { decision_id: 'dec_rarely', billed: 10, credits_microcents: 0 },
    ]);
    await expectBooksBalance();
  });

  it('sizes the next lease by what the asking runner saw taken of the last one', async () => {
    const workspaceId = await workspace({ included_decisions: 100_000 });
    const first = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Nothing taken in 100 ms: a quiet workspace gets the smallest lease.
    const quiet = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: first.leaseId, seenTaken: 0 });
    expect(quiet.units).toBe(LEASE_LIMITS.minUnits);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Both units taken within at least 10 ms: more than the smallest lease, at most 200 a second's worth.
    const busy = await ledger.replicas[1]!.leases.grant({ workspaceId, seenLeaseId: quiet.leaseId, seenTaken: 2 });
    expect(busy.units).toBeGreaterThan(LEASE_LIMITS.minUnits);
    expect(busy.units).toBeLessThanOrEqual(200);
    await expectBooksBalance();
  });

  it('frees a unit the run could not hand back, and answers a repeated settlement from its reservation', async () => {
    const workspaceId = await workspace({ included_decisions: 100 });
    const { leaseId } = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    const taken = await take(workspaceId);
    expect(taken?.leaseId).toBe(leaseId);
    const release: BillingSettleRequest = { workspaceId, executionId: newId('exec'), billable: false, leaseId: leaseId! };
    expect(await ledger.replicas[1]!.reservations.settle(release)).toEqual({ state: 'released' });
    expect(await ledger.replicas[0]!.reservations.settle(release)).toEqual({ state: 'released' });
    await expect(ledger.replicas[0]!.reservations.settle({ ...release, billable: true })).rejects.toMatchObject({ code: 'CONFLICT' });
    const commit: BillingSettleRequest = { workspaceId, executionId: newId('exec'), billable: true, leaseId: leaseId! };
    const [a, b] = await ledger.replicas[0]!.reservations.settleBatch([commit, commit]);
    expect(a).toEqual({ state: 'committed', paid_by: { funding: 'included', charges: [] } });
    expect(b).toEqual(a);
    expect((await ledger.database.dataSource.getRepository(LeaseEntity).findOneByOrFail({ id: leaseId! })).held).toBe(0);
    // The lease holds nothing more: a further commit against it is refused, never billed past what it held.
    await expect(ledger.replicas[1]!.reservations.settle({ ...commit, executionId: newId('exec') })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(ledger.replicas[1]!.reservations.settle({ ...commit, leaseId: 'not-a-lease' })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(await usage(workspaceId)).toMatchObject({ used: 1, reserved: 0 });
    await expectBooksBalance();
  });

  it('reclaims untaken units before a refusal: no 402 while budget remains in a lease', async () => {
    const workspaceId = await workspace({ included_decisions: 10, hard_cap: true });
    const lease = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    expect(lease.units).toBe(2);
    // Runs that reserve on their own (as when their counter is out of reach) still get all ten.
    for (let i = 0; i < 10; i++) {
      const executionId = newId('exec');
      await ledger.replicas[i % 2]!.reservations.reserve({ workspaceId, executionId });
      await ledger.replicas[0]!.reservations.settle({ workspaceId, executionId, billable: true });
    }
    await expect(ledger.replicas[1]!.reservations.reserve({ workspaceId, executionId: newId('exec') })).rejects.toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: expect.objectContaining({ used: 10, included: 10 }),
    });
    // The lease's counter was ended: no run can take from it any more.
    expect(await take(workspaceId)).toBeNull();
    await expectBooksBalance();
  });

  it('parallel runs over two replicas, a third unbilled, one replica killed mid-way, bill exactly the hard cap', async () => {
    const CAP = 120;
    const workspaceId = await workspace({ included_decisions: CAP, hard_cap: true });
    const outcomes: string[] = [];
    let killed = false;
    for (let wave = 0; wave < 40; wave++) {
      const replies = await Promise.allSettled(Array.from({ length: 18 }, (_, i) => run(workspaceId, i % 2, i % 3 !== 0)));
      if (wave === 2) {
        killed = true;
        const client = new Client({ connectionString: ADMIN_DATABASE_URL });
        await client.connect();
        await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [ledger.replicaB]);
        await client.end();
      }
      outcomes.push(...replies.map((reply) => (reply.status === 'fulfilled' ? reply.value : 'failed')));
      if (replies.every((reply) => reply.status === 'fulfilled' && reply.value === 'QUOTA_EXCEEDED')) break;
    }
    expect(killed).toBe(true);
    expect(outcomes).toContain('lease');
    // Runs that failed with the killed replica's connections held nothing that stays held: the sweep settles the rest.
    await ledger.replicas[0]!.leases.sweep(new Date(Date.now() + 10 * 60_000));
    const billed = await billedExecutions(workspaceId);
    expect(billed).toBeLessThanOrEqual(CAP);
    // Nothing is stranded: once every lease is closed, runs find all the budget that was not billed.
    let more = 0;
    while (more < CAP && (await run(workspaceId, 0, true)) !== 'QUOTA_EXCEEDED') more++;
    expect(billed + more).toBe(CAP);
    expect(await usage(workspaceId)).toMatchObject({ used: CAP });
    await expectBooksBalance();
  });

  it('closes a lease whose counter was lost with Redis only after every run that could settle against it has ended', async () => {
    const workspaceId = await workspace({ included_decisions: 1_000 });
    const { leaseId, units } = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    await take(workspaceId);
    await ledger.redis.del(leaseCounterKey(workspaceId));
    const repository = ledger.database.dataSource.getRepository(LeaseEntity);
    // Past its time: reclaiming finds no counter, so the lease keeps holding its units for the runs in flight.
    await ledger.replicas[1]!.leases.sweep(new Date(Date.now() + 5_000));
    expect(await repository.findOneByOrFail({ id: leaseId! })).toMatchObject({ state: 'draining', held: units });
    // The run that took a unit before the loss still bills.
    expect((await ledger.replicas[0]!.reservations.settle({ workspaceId, executionId: newId('exec'), billable: true, leaseId: leaseId! })).state).toBe(
      'committed',
    );
    await ledger.replicas[1]!.leases.sweep(new Date(Date.now() + config.settleAfterMs + 5_000));
    expect(await repository.findOneByOrFail({ id: leaseId! })).toMatchObject({ state: 'closed', held: 0 });
    expect(await usage(workspaceId)).toMatchObject({ used: 1, reserved: 0 });
    await expectBooksBalance();
  });

  it('counts its grants, the units they held and the units a closed lease still held, by funding', async () => {
    const registry = new Registry();
    const counter = new RedisLeaseCounter(LEASES_REDIS_URL, logger);
    try {
      const leases = new LeasesService(ledger.database.dataSource, config, logger, counter, { registry } as unknown as Metrics);
      const workspaceId = await workspace({ included_decisions: 1_000 });
      const { leaseId, units } = await leases.grant({ workspaceId, seenLeaseId: null });
      expect(units).toBeGreaterThan(0);
      // A unit taken by a run that never settles, and the counter lost with Redis: the close voids all it holds.
      expect((await take(workspaceId))?.leaseId).toBe(leaseId);
      await ledger.redis.del(leaseCounterKey(workspaceId));
      await leases.sweep(new Date(Date.now() + 5_000));
      await leases.sweep(new Date(Date.now() + config.settleAfterMs + 5_000));
      const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values.map(({ labels, value }) => [labels.funding, value]);
      expect(await value('decision_service_billing_lease_grants_total')).toEqual([['included', 1]]);
      expect(await value('decision_service_billing_lease_units_granted_total')).toEqual([['included', units]]);
      expect(await value('decision_service_billing_lease_units_voided_at_close_total')).toEqual([['included', units]]);
      await expectBooksBalance();
    } finally {
      await counter.close();
    }
  });

  it('bills a leased run whose runner died before publishing its settlement, once, before the lease is closed', async () => {
    const workspaceId = await workspace({ included_decisions: 10, hard_cap: true });
    const { leaseId } = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    expect((await take(workspaceId))?.leaseId).toBe(leaseId);
    expect((await take(workspaceId))?.leaseId).toBe(leaseId);
    // Both runs were recorded as billable; only the first one's settlement arrived.
    const [settled, lost] = [newId('exec'), newId('exec')];
    await ledger.replicas[0]!.reservations.settle({ workspaceId, executionId: settled, billable: true, leaseId: leaseId!, decisionId: 'dec_settled' });
    const asked: Array<{ leaseId: string; from: Date; to: Date }> = [];
    let runnerAnswers = false;
    const runner: ExecutionOutcomes = {
      outcomes: async () => ({ outcomes: {} }),
      leaseExecutions: async (_workspaceId, askedLease, from, to) => {
        if (askedLease !== leaseId) return { billable: [] };
        if (!runnerAnswers) throw new ServiceError('INTERNAL_ERROR', 'no runner answered');
        asked.push({ leaseId: askedLease, from, to });
        return { billable: [settled, lost], decisions: { [settled]: 'dec_settled', [lost]: 'dec_lost' } };
      },
    };
    const sweeper = new Sweeper(
      ledger.database.dataSource,
      ledger.replicas[1]!.reservations,
      ledger.credits,
      runner,
      config,
      logger,
      { registry: new Registry() } as unknown as Metrics,
      ledger.replicas[1]!.leases,
    );
    // The sweep sees the lease as past every run that could settle against it.
    const closeAll = () => sweeper.sweep(new Date(Date.now() + config.settleAfterMs + 10_000));
    const repository = ledger.database.dataSource.getRepository(LeaseEntity);
    // A runner that cannot say leaves the lease holding its unit: never voided unbilled.
    await closeAll();
    expect(await repository.findOneByOrFail({ id: leaseId! })).toMatchObject({ held: 1 });
    runnerAnswers = true;
    await closeAll();
    expect(asked).toEqual([{ leaseId, from: expect.any(Date), to: expect.any(Date) }]);
    expect(await repository.findOneByOrFail({ id: leaseId! })).toMatchObject({ state: 'closed', held: 0 });
    expect(await billedExecutions(workspaceId)).toBe(2);
    expect(await usage(workspaceId)).toMatchObject({ used: 2, reserved: 0 });
    // The lost settlement arriving after all is a repeat: answered, billed once.
    expect(await ledger.replicas[0]!.reservations.settle({ workspaceId, executionId: lost, billable: true, leaseId: leaseId! })).toMatchObject({
      state: 'committed',
    });
    expect(await usage(workspaceId)).toMatchObject({ used: 2 });
    // Each is booked under its decision: the one settled by the runner and the one the sweeper billed.
    expect((await ledger.accounts.usageByDay(workspaceId)).decisions).toEqual([
      { decision_id: 'dec_lost', billed: 1, credits_microcents: 0 },
      { decision_id: 'dec_settled', billed: 1, credits_microcents: 0 },
    ]);
    await expectBooksBalance();
  });
});

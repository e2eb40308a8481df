import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { BillingSettleReply, BillingSettleRequest, ServiceError } from '@ds/contracts';
import { chart, HAND_BACK_SCRIPT, leaseCounterKey, TAKE_UNIT_SCRIPT, ZERO_BALANCES } from '@ds/billing';
import { newId } from '@ds/ids';
import { createLogger } from '@ds/platform';
import { ADMIN_DATABASE_URL } from '../../../test/e2e/support/cluster';
import { checkBooks } from '../../../test/support/ledger-books';
import { LEASES_REDIS_URL, leaseTestConfig, useLeaseReplicas } from '../../../test/support/lease-replicas';
import { LeaseEntity, LedgerAccountEntity } from './entities';
import { RedisLeaseCounter } from './lease-counter';
import { LeasesService } from './leases.service';
import { PlanOverrides } from './plans';

/**
 * Money leases (past the included volume: overage decisions and their money from the credit sources) against the
 * real PostgreSQL and Redis, with two ledger replicas on pools of their own. Runs are played as the runner plays
 * them: a unit from the workspace's counter, else a reservation of their own and a new lease asked for.
 */
const config = leaseTestConfig;
const logger = createLogger('billing-ledger', 'silent');
/** The genesis plan's price: 50,000 cents per million decisions, 50,000 micro-cents each, 20 decisions a cent. */
const PRICE = 50_000n;
const FAR = () => new Date(Date.now() + config.settleAfterMs + 10 * 60_000);

const ledger = useLeaseReplicas('money_leases', { accountsSeeLeases: true });

/** A workspace on genesis with the overrides, funded with the grants (cents), in order. */
async function workspace(overrides: PlanOverrides, grants: Array<{ kind: 'promotional' | 'paid'; cents: number; expiresAt?: Date }> = []): Promise<string> {
  const workspaceId = randomUUID();
  await ledger.accounts.setPlan({ workspaceId, plan: 'genesis', overrides });
  for (const [index, grant] of grants.entries()) {
    await ledger.credits.grant({
      workspaceId,
      grantId: `g${index}`,
      kind: grant.kind,
      amount_cents: grant.cents,
      currency: 'usd',
      expires_at: grant.expiresAt?.toISOString(),
    });
  }
  return workspaceId;
}

type Taken = { leaseId: string; left: number; units: number } | null;

async function take(workspaceId: string): Promise<Taken> {
  const reply = (await ledger.redis.eval(TAKE_UNIT_SCRIPT, 1, leaseCounterKey(workspaceId))) as [string, number, number] | null;
  return reply ? { leaseId: reply[0], left: reply[1], units: reply[2] } : null;
}

interface Ran {
  how: 'lease' | 'reserved' | string;
  reply?: BillingSettleReply;
}

/** One run as the runner makes it; settles with `billable`. */
async function run(workspaceId: string, replica: number, billable: boolean): Promise<Ran> {
  const { leases, reservations } = ledger.replicas[replica]!;
  const taken = await take(workspaceId);
  if (taken && taken.left >= 0) {
    const leaseId = taken.leaseId;
    if (taken.left * 2 < taken.units) void leases.grant({ workspaceId, seenLeaseId: leaseId, seenTaken: taken.units - taken.left }).catch(() => undefined);
    const settlement: BillingSettleRequest = { workspaceId, executionId: newId('exec'), billable, leaseId, decisionId: 'dec_leased' };
    if (billable) return { how: 'lease', reply: await reservations.settle(settlement) };
    if (Number(await ledger.redis.eval(HAND_BACK_SCRIPT, 1, leaseCounterKey(workspaceId), leaseId)) !== 1) await reservations.settle(settlement);
    return { how: 'lease' };
  }
  void leases.grant({ workspaceId, seenLeaseId: taken?.leaseId ?? null, seenTaken: taken?.units }).catch(() => undefined);
  const executionId = newId('exec');
  try {
    await reservations.reserve({ workspaceId, executionId });
  } catch (error) {
    if (error instanceof ServiceError) return { how: error.code };
    throw error;
  }
  return { how: 'reserved', reply: await reservations.settle({ workspaceId, executionId, billable, decisionId: 'dec_own' }) };
}

/** Waves of parallel runs over both replicas, a third unbilled, until every run of a wave is refused; answers every outcome. */
async function runUntilRefused(workspaceId: string, width = 16, killAfterWave: number | null = null): Promise<Ran[]> {
  const outcomes: Ran[] = [];
  for (let wave = 0; wave < 200; wave++) {
    const replies = await Promise.allSettled(Array.from({ length: width }, (_, i) => run(workspaceId, i % 2, i % 3 !== 0)));
    if (wave === killAfterWave) {
      const client = new Client({ connectionString: ADMIN_DATABASE_URL });
      await client.connect();
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [ledger.replicaB]);
      await client.end();
    }
    outcomes.push(...replies.map((reply) => (reply.status === 'fulfilled' ? reply.value : { how: 'failed' })));
    const refused = replies.every((reply) => reply.status === 'fulfilled' && !['lease', 'reserved'].includes(reply.value.how));
    if (refused && (killAfterWave === null || wave > killAfterWave)) break;
  }
  return outcomes;
}

async function ledgerAccount(id: string) {
  return ledger.database.dataSource.getRepository(LedgerAccountEntity).findOneBy({ id });
}

/** Overage decisions billed, the period's spend posted and held, from the workspace's accounts. */
async function books(workspaceId: string) {
  const db = ledger.database.dataSource;
  const [account] = await db.query('SELECT period_anchor FROM accounts WHERE workspace_id = $1', [workspaceId]);
  const periodStart: Date = account.period_anchor;
  const overage = (await ledgerAccount(chart.overageVolume(workspaceId, periodStart).id)) ?? { ...ZERO_BALANCES };
  const spend = (await ledgerAccount(chart.spend(workspaceId, 'usd', periodStart).id)) ?? { ...ZERO_BALANCES };
  const [committed] = await db.query(`SELECT count(*)::int AS n FROM reservations WHERE workspace_id = $1 AND state = 'committed'`, [workspaceId]);
  return {
    overageBilled: Number(overage.debitsPosted),
    overageHeld: Number(overage.debitsPending),
    spentPosted: spend.creditsPosted,
    spentHeld: spend.creditsPending,
    committed: committed.n as number,
  };
}

async function expectBooksBalance(): Promise<void> {
  const db = ledger.database.dataSource;
  const books = await checkBooks(db);
  expect({ drifted: books.drifted, unbalanced: books.unbalanced }).toEqual({ drifted: [], unbalanced: [] });
  // Every hold a lease has not resolved is one its row says it holds, with the amount the row says: its decisions
  // under `<id>:hold:<seq>`, and per source `<id>:hold:<seq>:<index>`.
  const unresolved: Array<{ id: string; amount: string; lease_id: string }> = await db.query(`
    SELECT t.id, t.amount::text, t.cause_id AS lease_id FROM transfers t JOIN leases l ON l.id = t.cause_id
    WHERE t.phase = 'pending' AND NOT EXISTS (SELECT 1 FROM transfers v WHERE v.pending_id = t.id)`);
  const expected: Array<{ id: string; amount: string; lease_id: string }> = [];
  for (const lease of await db.getRepository(LeaseEntity).find()) {
    if (lease.held === 0) continue;
    expected.push({ id: `${lease.id}:hold:${lease.holdSeq}`, amount: String(lease.held), lease_id: lease.id });
    lease.moneyHeld.forEach((row, index) => {
      if (BigInt(row.micros) > 0n) expected.push({ id: `${lease.id}:hold:${lease.holdSeq}:${index}`, amount: row.micros, lease_id: lease.id });
    });
    if (lease.funding === 'credits') {
      const money = lease.moneyHeld.reduce((sum, row) => sum + BigInt(row.micros), 0n);
      expect(money).toBe(lease.unitPriceMicros! * BigInt(lease.held));
    }
  }
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
  expect(unresolved.sort(byId)).toEqual(expected.sort(byId));
}

async function settlePending(workspaceId: string): Promise<void> {
  const pending: Array<{ execution_id: string }> = await ledger.database.dataSource.query(
    `SELECT execution_id FROM reservations WHERE workspace_id = $1 AND state = 'pending'`,
    [workspaceId],
  );
  for (const { execution_id } of pending) await ledger.replicas[0]!.reservations.settle({ workspaceId, executionId: execution_id, billable: true });
}

/**
 * After a burst: a grant racing the last refusals may have leased budget just after they looked (as a reservation
 * in flight holds it); once every lease is closed, runs one at a time find exactly what was not billed, up to the
 * edge, and are then refused with `code`.
 */
async function toTheEdge(workspaceId: string, code: string): Promise<void> {
  await closeEveryLease();
  for (let i = 0; i < 200; i++) {
    const ran = await run(workspaceId, i % 2, true);
    if (ran.how === code) break;
    expect(['lease', 'reserved']).toContain(ran.how);
  }
  await closeEveryLease();
  expect((await run(workspaceId, 0, true)).how).toBe(code);
}

async function closeEveryLease(): Promise<void> {
  await ledger.replicas[0]!.leases.sweep(new Date(Date.now() + 10_000));
  await ledger.replicas[1]!.leases.sweep(FAR());
}

describe('money leases', () => {
  it('hold overage decisions and their money in consumption order, and post per run what a reservation of its own would', async () => {
    const soon = new Date(Date.now() + 30 * 86_400_000);
    // 3 decisions' worth on the soonest grant, 1.5 on the undated one, then the paid balance.
    const workspaceId = await workspace({ included_decisions: 0 }, [
      { kind: 'paid', cents: 10 },
      { kind: 'promotional', cents: 1 },
      { kind: 'promotional', cents: 1, expiresAt: soon },
    ]);
    const before = (await ledger.accounts.account(workspaceId)).balance;
    const granted = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    expect(granted.units).toBe(2);
    const lease = await ledger.database.dataSource.getRepository(LeaseEntity).findOneByOrFail({ id: granted.leaseId! });
    expect(lease).toMatchObject({ funding: 'credits', currency: 'usd', unitPriceMicros: PRICE, held: 2, state: 'open' });
    expect(lease.moneyHeld).toEqual([
      { account_id: chart.promotionalGrant(workspaceId, 'usd', 'g2', soon).id, kind: 'promotional', grant_id: 'g2', micros: '100000' },
    ]);
    // Leased money is neither spent nor gone, leased decisions neither used nor reserved.
    const leasedView = await ledger.accounts.account(workspaceId);
    expect(leasedView.balance).toEqual(before);
    expect(leasedView.spend_cap.spent_cents).toBe(0);
    expect(leasedView.usage).toMatchObject({ used: 0, reserved: 0 });

    const replies: BillingSettleReply[] = [];
    const hows: string[] = [];
    for (let i = 0; i < 60; i++) {
      const ran = await run(workspaceId, i % 2, true);
      expect(['lease', 'reserved']).toContain(ran.how);
      replies.push(ran.reply!);
      hows.push(ran.how);
    }
    // Each run was paid from one source in consumption order by the time its money was held: the soonest-expiring
    // grant, then the undated one, then the paid balance. Runs paid by leases, in the order they ran, never go back
    // to an earlier source; a run that reserved on its own while a lease was being granted pays what follows the
    // lease's money, as the later of two reservations does.
    const paidFrom = replies.map((reply) => reply.paid_by!.charges.map((charge) => (charge.source === 'paid' ? 'paid' : charge.grant_id)).join('+'));
    expect(paidFrom.filter((source) => source === 'g2')).toHaveLength(20);
    expect(paidFrom.filter((source) => source === 'g1')).toHaveLength(20);
    expect(paidFrom.filter((source) => source === 'paid')).toHaveLength(20);
    const rank = ['g2', 'g1', 'paid'];
    const leasedRanks = paidFrom.filter((_, index) => hows[index] === 'lease').map((source) => rank.indexOf(source));
    expect(leasedRanks).toEqual([...leasedRanks].sort((a, b) => a - b));
    for (const reply of replies) {
      expect(reply.paid_by!.funding).toBe('credits');
      expect(reply.paid_by!.charges.reduce((sum, charge) => sum + charge.amount_microcents, 0)).toBe(Number(PRICE));
    }
    const leased = await ledger.database.dataSource.query(
      `SELECT count(*)::int AS n FROM reservations WHERE workspace_id = $1 AND state = 'committed' AND lease_id IS NOT NULL`,
      [workspaceId],
    );
    expect(leased[0].n).toBeGreaterThan(20);
    await closeEveryLease();
    expect(await books(workspaceId)).toMatchObject({ overageBilled: 60, overageHeld: 0, spentPosted: 60n * PRICE, spentHeld: 0n, committed: 60 });
    const view = await ledger.accounts.usageByDay(workspaceId);
    expect(view.account.usage).toMatchObject({ used: 60, reserved: 0 });
    expect(view.account.spend_cap.spent_cents).toBe(3);
    expect(view.account.balance).toMatchObject({ available_cents: 9, promotional_cents: 0, paid_cents: 9 });
    // Usage per decision counts the leased runs' decisions and charges like the others.
    const perDecision = new Map(view.decisions.map((row) => [row.decision_id, row]));
    expect(perDecision.get('dec_leased')!.billed + (perDecision.get('dec_own')?.billed ?? 0)).toBe(60);
    expect(perDecision.get('dec_leased')!.credits_microcents).toBe(perDecision.get('dec_leased')!.billed * Number(PRICE));
    // A repeated settlement is answered with the same record and bills nothing more.
    const [row] = await ledger.database.dataSource.query(
      `SELECT execution_id, lease_id FROM reservations WHERE workspace_id = $1 AND lease_id IS NOT NULL LIMIT 1`,
      [workspaceId],
    );
    const again = await ledger.replicas[1]!.reservations.settle({ workspaceId, executionId: row.execution_id, billable: true, leaseId: row.lease_id });
    expect(again.paid_by!.funding).toBe('credits');
    expect(again.paid_by!.charges.reduce((sum, charge) => sum + charge.amount_microcents, 0)).toBe(Number(PRICE));
    await expect(
      ledger.replicas[0]!.reservations.settle({ workspaceId, executionId: row.execution_id, billable: false, leaseId: row.lease_id }),
    ).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    // A commit against the closed lease is refused, never billed.
    await expect(
      ledger.replicas[0]!.reservations.settle({ workspaceId, executionId: newId('exec'), billable: true, leaseId: row.lease_id }),
    ).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect(await books(workspaceId)).toMatchObject({ overageBilled: 60, committed: 60 });
    await expectBooksBalance();
  });

  it('credits running out: exactly what they pay for across two replicas, then CREDITS_EXHAUSTED', async () => {
    // 3 cents: 60 decisions; the spend cap would allow more.
    const workspaceId = await workspace({ included_decisions: 0 }, [
      { kind: 'promotional', cents: 2 },
      { kind: 'paid', cents: 1 },
    ]);
    await ledger.accounts.setSpendCap({ workspaceId, spend_cap_cents: 5 });
    const outcomes = await runUntilRefused(workspaceId);
    expect(outcomes.map((outcome) => outcome.how)).toContain('lease');
    const refusals = new Set(outcomes.map((outcome) => outcome.how).filter((how) => how !== 'lease' && how !== 'reserved'));
    expect(refusals).toEqual(new Set(['CREDITS_EXHAUSTED']));
    await closeEveryLease();
    expect((await books(workspaceId)).overageBilled).toBeLessThanOrEqual(60);
    await toTheEdge(workspaceId, 'CREDITS_EXHAUSTED');
    expect(await books(workspaceId)).toMatchObject({ overageBilled: 60, overageHeld: 0, spentPosted: 60n * PRICE, spentHeld: 0n, committed: 60 });
    expect((await ledger.accounts.account(workspaceId)).balance.available_cents).toBe(0);
    await expectBooksBalance();
  });

  it('the spend cap: never a micro-cent past it while credits remain, then SPEND_CAP_REACHED', async () => {
    const workspaceId = await workspace({ included_decisions: 5 }, [{ kind: 'paid', cents: 1_000 }]);
    // 2 cents: 40 decisions past the 5 included.
    await ledger.accounts.setSpendCap({ workspaceId, spend_cap_cents: 2 });
    const outcomes = await runUntilRefused(workspaceId);
    expect(outcomes.map((outcome) => outcome.how)).toContain('lease');
    expect(new Set(outcomes.map((outcome) => outcome.how).filter((how) => how !== 'lease' && how !== 'reserved'))).toEqual(new Set(['SPEND_CAP_REACHED']));
    await closeEveryLease();
    expect((await books(workspaceId)).spentPosted).toBeLessThanOrEqual(2_000_000n);
    await toTheEdge(workspaceId, 'SPEND_CAP_REACHED');
    expect(await books(workspaceId)).toMatchObject({ overageBilled: 40, spentPosted: 2_000_000n, spentHeld: 0n, committed: 45 });
    const view = await ledger.accounts.account(workspaceId);
    expect(view.usage).toMatchObject({ used: 45, included: 5, reserved: 0 });
    expect(view.spend_cap.spent_cents).toBe(2);
    expect(view.balance.available_cents).toBe(998);
    await expectBooksBalance();
  });

  it('credits and the cap running out together: CREDITS_EXHAUSTED first, as the spec orders them', async () => {
    // One cent of credits and a one-cent cap: 20 decisions, then both edges at once.
    const workspaceId = await workspace({ included_decisions: 0 }, [{ kind: 'promotional', cents: 1 }]);
    await ledger.accounts.setSpendCap({ workspaceId, spend_cap_cents: 1 });
    const outcomes = await runUntilRefused(workspaceId, 8);
    expect(new Set(outcomes.map((outcome) => outcome.how).filter((how) => how !== 'lease' && how !== 'reserved'))).toEqual(new Set(['CREDITS_EXHAUSTED']));
    await toTheEdge(workspaceId, 'CREDITS_EXHAUSTED');
    expect(await books(workspaceId)).toMatchObject({ overageBilled: 20, spentPosted: 1_000_000n, committed: 20 });
    await expectBooksBalance();
  });

  it('a hard cap or a plan without a price: no lease past the included volume, QUOTA_EXCEEDED whatever credits remain', async () => {
    for (const overrides of [
      { included_decisions: 6, hard_cap: true },
      { included_decisions: 6, price_per_million_cents: null },
    ]) {
      const workspaceId = await workspace(overrides, [{ kind: 'paid', cents: 100 }]);
      const outcomes = await runUntilRefused(workspaceId, 6);
      expect(new Set(outcomes.map((outcome) => outcome.how).filter((how) => how !== 'lease' && how !== 'reserved'))).toEqual(new Set(['QUOTA_EXCEEDED']));
      await toTheEdge(workspaceId, 'QUOTA_EXCEEDED');
      expect(await books(workspaceId)).toMatchObject({ overageBilled: 0, spentPosted: 0n, committed: 6 });
      expect(await ledger.database.dataSource.getRepository(LeaseEntity).countBy({ workspaceId, funding: 'credits' })).toBe(0);
    }
    await expectBooksBalance();
  });

  it('the included volume running out while an included lease is open: its rest goes back before anything is paid past it', async () => {
    /** A workspace whose included volume is all held: two by an open lease no run took from, eight billed. */
    async function allHeld(): Promise<{ workspaceId: string; leaseId: string }> {
      const workspaceId = await workspace({ included_decisions: 10 }, [{ kind: 'paid', cents: 100 }]);
      const included = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
      expect(included.units).toBe(2);
      for (let i = 0; i < 8; i++) {
        const executionId = newId('exec');
        await ledger.replicas[i % 2]!.reservations.reserve({ workspaceId, executionId });
        await ledger.replicas[0]!.reservations.settle({ workspaceId, executionId, billable: true });
      }
      return { workspaceId, leaseId: included.leaseId! };
    }
    async function reserveOnItsOwn(workspaceId: string): Promise<string> {
      const executionId = newId('exec');
      await ledger.replicas[1]!.reservations.reserve({ workspaceId, executionId });
      const { paid_by } = await ledger.replicas[0]!.reservations.settle({ workspaceId, executionId, billable: true });
      return paid_by!.funding;
    }
    // A grant asked now takes the lease's rest back instead of leasing past the included volume; two are too few for a lease.
    const granting = await allHeld();
    expect(await ledger.replicas[1]!.leases.grant({ workspaceId: granting.workspaceId, seenLeaseId: granting.leaseId })).toEqual({ leaseId: null, units: 0 });
    expect(await take(granting.workspaceId)).toBeNull();
    expect(await reserveOnItsOwn(granting.workspaceId)).toBe('included');
    expect(await reserveOnItsOwn(granting.workspaceId)).toBe('included');
    expect(await reserveOnItsOwn(granting.workspaceId)).toBe('credits');
    // A run reserving on its own takes the lease's rest back too, rather than paying past the included volume.
    const reserving = await allHeld();
    expect(await reserveOnItsOwn(reserving.workspaceId)).toBe('included');
    expect(await take(reserving.workspaceId)).toBeNull();
    expect(await reserveOnItsOwn(reserving.workspaceId)).toBe('included');
    // The included volume is used: the next lease is paid from credits.
    const money = await ledger.replicas[0]!.leases.grant({ workspaceId: reserving.workspaceId, seenLeaseId: null });
    expect(money.units).toBeGreaterThanOrEqual(2);
    expect(await ledger.database.dataSource.getRepository(LeaseEntity).findOneByOrFail({ id: money.leaseId! })).toMatchObject({ funding: 'credits' });
    expect((await ledger.accounts.account(reserving.workspaceId)).usage).toMatchObject({ used: 10, reserved: 0 });
    await expectBooksBalance();
  });

  it('a lowered spend cap or a plan change reclaims open leases: no unit leased under the old limit is taken after it', async () => {
    const workspaceId = await workspace({ included_decisions: 0 }, [{ kind: 'paid', cents: 100 }]);
    await ledger.accounts.setSpendCap({ workspaceId, spend_cap_cents: 50 });
    // A busy workspace: a lease of a hundred decisions.
    const first = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const big = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: first.leaseId, seenTaken: 2 });
    expect(big.units).toBeGreaterThan(2);
    const inFlight = await take(workspaceId);
    expect(inFlight?.leaseId).toBe(big.leaseId);
    // The cap is lowered to nothing more: the lease's untaken rest goes back at once.
    await ledger.accounts.setSpendCap({ workspaceId, spend_cap_cents: 0 });
    expect(await take(workspaceId)).toBeNull();
    const leases = ledger.database.dataSource.getRepository(LeaseEntity);
    expect(await leases.findOneByOrFail({ id: big.leaseId! })).toMatchObject({ state: 'draining', held: 1 });
    // The run that took its unit before the change is in flight, as one that reserved on its own would be: it bills.
    const settled = await ledger.replicas[1]!.reservations.settle({ workspaceId, executionId: newId('exec'), billable: true, leaseId: big.leaseId! });
    expect(settled.paid_by!.funding).toBe('credits');
    expect((await run(workspaceId, 0, true)).how).toBe('SPEND_CAP_REACHED');
    expect(await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null })).toEqual({ leaseId: null, units: 0 });
    // Credits added while a lease is open change nothing it holds; a plan change reclaims it too.
    await ledger.accounts.setSpendCap({ workspaceId, spend_cap_cents: null });
    const open = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    expect(open.units).toBeGreaterThanOrEqual(2);
    await ledger.credits.grant({ workspaceId, grantId: 'more', kind: 'promotional', amount_cents: 5, currency: 'usd', expires_at: undefined });
    expect(await leases.findOneByOrFail({ id: open.leaseId! })).toMatchObject({ state: 'open', held: open.units });
    await ledger.accounts.setPlan({ workspaceId, plan: 'genesis', overrides: { included_decisions: 0, price_per_million_cents: 100_000 } });
    expect(await leases.findOneByOrFail({ id: open.leaseId! })).toMatchObject({ state: 'closed', held: 0 });
    const repriced = await ledger.replicas[1]!.leases.grant({ workspaceId, seenLeaseId: null });
    expect(await leases.findOneByOrFail({ id: repriced.leaseId! })).toMatchObject({ funding: 'credits', unitPriceMicros: 100_000n });
    await closeEveryLease();
    expect(await books(workspaceId)).toMatchObject({ overageBilled: 1, spentPosted: PRICE, spentHeld: 0n, committed: 1 });
    await expectBooksBalance();
  });

  it('a lease reclaimed before its grant put it in the counter never reaches the counter', async () => {
    const workspaceId = await workspace({ included_decisions: 0 }, [{ kind: 'paid', cents: 100 }]);
    const counter = new RedisLeaseCounter(LEASES_REDIS_URL, logger);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A ledger whose put comes only after the spend cap was lowered and the open leases reclaimed.
    const slow = new LeasesService(ledger.database.dataSource, config, logger, {
      put: async (...args) => {
        await gate;
        return counter.put(...args);
      },
      reclaim: (ws, id) => counter.reclaim(ws, id),
      close: () => counter.close(),
    });
    const granting = slow.grant({ workspaceId, seenLeaseId: null });
    const leases = ledger.database.dataSource.getRepository(LeaseEntity);
    while ((await leases.countBy({ workspaceId })) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const changing = ledger.accounts.setSpendCap({ workspaceId, spend_cap_cents: 0 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await changing;
    // Whichever took the lease's row first, the lease is not open and the counter gives none of its units.
    await granting;
    expect(await take(workspaceId)).toBeNull();
    await counter.close();
    expect((await leases.findOneByOrFail({ workspaceId })).state).not.toBe('open');
    await closeEveryLease();
    expect((await ledger.accounts.account(workspaceId)).spend_cap.spent_cents).toBe(0);
    await expectBooksBalance();
  });

  it('gives back the money of a lease that expired or was lost with Redis, and stops giving units at a grant’s expiry', async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    const workspaceId = await workspace({ included_decisions: 0 }, [
      { kind: 'promotional', cents: 1, expiresAt },
      { kind: 'paid', cents: 1 },
    ]);
    const before = (await ledger.accounts.account(workspaceId)).balance;
    const { leaseId } = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: null });
    const leases = ledger.database.dataSource.getRepository(LeaseEntity);
    expect((await leases.findOneByOrFail({ id: leaseId! })).takesUntil.getTime()).toBeLessThanOrEqual(expiresAt.getTime());
    // One unit taken, then the lease's time passes: its untaken unit and its money go back at once.
    const taken = await take(workspaceId);
    expect(taken?.leaseId).toBe(leaseId);
    await ledger.replicas[1]!.leases.sweep(new Date(Date.now() + 5_000));
    expect(await leases.findOneByOrFail({ id: leaseId! })).toMatchObject({ state: 'draining', held: 1 });
    expect((await books(workspaceId)).spentHeld).toBe(PRICE);
    // The run never settles (its runner died unrecorded): once no run can settle any more, the rest is voided.
    await ledger.replicas[1]!.leases.sweep(FAR());
    expect(await leases.findOneByOrFail({ id: leaseId! })).toMatchObject({ state: 'closed', held: 0 });
    expect(await books(workspaceId)).toMatchObject({ spentPosted: 0n, spentHeld: 0n, overageHeld: 0 });
    expect((await ledger.accounts.account(workspaceId)).balance).toEqual(before);

    // A counter lost with Redis: the lease keeps its money for the runs in flight until it closes, then gives it back.
    const lost = await ledger.replicas[0]!.leases.grant({ workspaceId, seenLeaseId: leaseId });
    await take(workspaceId);
    await ledger.redis.del(leaseCounterKey(workspaceId));
    await ledger.replicas[0]!.leases.sweep(new Date(Date.now() + 5_000));
    expect(await leases.findOneByOrFail({ id: lost.leaseId! })).toMatchObject({ state: 'draining', held: lost.units });
    const billed = await ledger.replicas[1]!.reservations.settle({ workspaceId, executionId: newId('exec'), billable: true, leaseId: lost.leaseId! });
    expect(billed.paid_by!.charges).toEqual([{ source: 'promotional', grant_id: 'g0', amount_microcents: Number(PRICE) }]);
    await ledger.replicas[0]!.leases.sweep(FAR());
    expect(await books(workspaceId)).toMatchObject({ overageBilled: 1, spentPosted: PRICE, spentHeld: 0n, overageHeld: 0, committed: 1 });

    // A lease paid from a grant that expires within its time stops giving units when the grant expires.
    const expiring = new Date(Date.now() + 1_000);
    const shortLived = await workspace({ included_decisions: 0 }, [{ kind: 'promotional', cents: 1, expiresAt: expiring }]);
    const short = await ledger.replicas[0]!.leases.grant({ workspaceId: shortLived, seenLeaseId: null });
    expect((await leases.findOneByOrFail({ id: short.leaseId! })).takesUntil).toEqual(expiring);
    await expectBooksBalance();
  });

  it('many settlements over two replicas, one killed mid-way: every edge exact, the books balance', async () => {
    // 4 cents of credits (80 decisions) under a 3-cent cap (60), past 30 included: 90 billed, then SPEND_CAP_REACHED.
    const workspaceId = await workspace({ included_decisions: 30 }, [
      { kind: 'promotional', cents: 2, expiresAt: new Date(Date.now() + 86_400_000) },
      { kind: 'paid', cents: 2 },
    ]);
    await ledger.accounts.setSpendCap({ workspaceId, spend_cap_cents: 3 });
    const outcomes = await runUntilRefused(workspaceId, 18, 1);
    expect(outcomes.map((outcome) => outcome.how)).toContain('lease');
    // What the sweeper would do for runs whose settlement died with the replica: the runner says they were billable.
    await settlePending(workspaceId);
    await closeEveryLease();
    const settled = await books(workspaceId);
    expect(settled.spentPosted).toBeLessThanOrEqual(3_000_000n);
    expect(settled).toMatchObject({ overageHeld: 0, spentHeld: 0n });
    // Runs lost with the killed replica billed nothing; what they held is back: runs now find exactly the rest.
    await toTheEdge(workspaceId, 'SPEND_CAP_REACHED');
    expect(await books(workspaceId)).toMatchObject({ overageBilled: 60, spentPosted: 3_000_000n, committed: 90 });
    expect((await ledger.accounts.account(workspaceId)).balance).toMatchObject({ promotional_cents: 0, paid_cents: 1 });
    await expectBooksBalance();
  });
});

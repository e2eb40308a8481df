import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { Currency, ServiceError } from '@ds/contracts';
import { Transfer } from '@ds/billing';
import { newId } from '@ds/ids';
import { createLogger, Metrics, NatsLink } from '@ds/platform';
import { AccountsService } from './accounts.service';
import { CreditsService } from './credits.service';
import { LedgerAccountEntity, ReservationEntity, TransferEntity } from './entities';
import { LedgerStore } from './ledger.store';
import { billingLedger } from './main';
import { PlanOverrides } from './plans';
import { ReservationsService } from './reservations.service';
import { ExecutionOutcomes, Outcomes, Sweeper } from './sweeper';
import { defined } from '../../../test/e2e/support/api';
import { checkBooks } from '../../../test/support/ledger-books';
import { useMigratedDatabase } from '../../../test/support/service-database';
import { billingTestConfig } from '../../../test/support/service-configs';

/**
 * The service logic against a real PostgreSQL: a database of its own (dropped at the end), the service's own
 * entities and migrations, the services called directly. Only the runner's answer about outcomes is stubbed.
 */
const config = billingTestConfig();
const logger = createLogger('billing-ledger', 'silent');
const DAY = 86_400_000;

const database = useMigratedDatabase('billing', billingLedger.database, 20);
let db: DataSource;
let accounts: AccountsService;
let credits: CreditsService;
let reservations: ReservationsService;
/** What the ledger announced over NATS: [subject, payload]. */
const announced: Array<[string, string]> = [];
const announcing = {
  connection: { publish: (subject: string, payload: string) => announced.push([subject, payload]) },
  logger: { warn: () => undefined },
} as unknown as NatsLink;

beforeAll(async () => {
  db = database.dataSource;
  accounts = new AccountsService(db, announcing);
  credits = new CreditsService(db);
  reservations = new ReservationsService(db, config);
});

const inDays = (days: number) => new Date(Date.now() + days * DAY).toISOString();

async function workspace(overrides: PlanOverrides, plan = 'genesis'): Promise<string> {
  const workspaceId = randomUUID();
  await accounts.setPlan({ workspaceId, plan, overrides });
  return workspaceId;
}

function grant(
  workspaceId: string,
  grantId: string,
  kind: 'promotional' | 'paid',
  amount_cents: number,
  fields: { currency?: Currency; expires_at?: string } = {},
) {
  return credits.grant({ workspaceId, grantId, kind, amount_cents, currency: fields.currency ?? 'usd', expires_at: fields.expires_at });
}

async function reserve(workspaceId: string): Promise<string> {
  const executionId = newId('exec');
  await reservations.reserve({ workspaceId, executionId });
  return executionId;
}

async function run(workspaceId: string) {
  const executionId = await reserve(workspaceId);
  return reservations.settle({ workspaceId, executionId, billable: true });
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; details: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error('expected a refusal');
}

function outcomesStub(answers: Record<string, Outcomes[string]>, calls: string[][] = [], decisions: Record<string, string> = {}): ExecutionOutcomes {
  return {
    outcomes: async (_workspaceId, executionIds) => {
      calls.push(executionIds);
      return {
        outcomes: Object.fromEntries(Object.entries(answers).filter(([id]) => executionIds.includes(id))),
        decisions: Object.fromEntries(Object.entries(decisions).filter(([id]) => executionIds.includes(id))),
      };
    },
    leaseExecutions: async () => ({ billable: [] }),
  };
}

function sweeper(runner: ExecutionOutcomes): Sweeper {
  return new Sweeper(db, reservations, credits, runner, config, logger, { registry: new Registry() } as unknown as Metrics);
}

async function backdate(executionIds: string[], minutes: number): Promise<void> {
  await db.query(`UPDATE reservations SET created_at = now() - make_interval(mins => $2) WHERE execution_id = ANY($1::text[])`, [executionIds, minutes]);
}

/** The usage answer, checked on the way to add up: per day and per decision to `used`, per decision's credits to what was spent. */
async function usageOf(workspaceId: string) {
  const reply = await accounts.usageByDay(workspaceId);
  const total = (rows: Array<{ billed: number }>) => rows.reduce((sum, row) => sum + row.billed, 0);
  expect(total(reply.days)).toBe(reply.account.usage.used);
  expect(total(reply.decisions)).toBe(reply.account.usage.used);
  const [spend] = await db.query(`SELECT COALESCE(sum(credits_posted), 0)::bigint AS posted FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'spend'`, [
    workspaceId,
  ]);
  expect(reply.decisions.reduce((sum, row) => sum + row.credits_microcents, 0)).toBe(Number(spend.posted));
  return reply;
}

const stateOf = async (executionId: string) => (await db.getRepository(ReservationEntity).findOneByOrFail({ executionId })).state;
const entriesOf = (executionId: string) => db.getRepository(TransferEntity).findBy({ causeId: executionId });

describe('consumption order', () => {
  it('spends the included volume, then promotional grants soonest-expiring first, then the paid balance', async () => {
    // 1.5 cents a decision, so one decision is split across two grants.
    const ws = await workspace({ included_decisions: 2, price_per_million_cents: 1_500_000 });
    await grant(ws, 'paid-1', 'paid', 3);
    await grant(ws, 'late', 'promotional', 2, { expires_at: inDays(20) });
    await grant(ws, 'soon', 'promotional', 1, { expires_at: inDays(10) });
    await grant(ws, 'gone', 'promotional', 5, { expires_at: inDays(1) });
    // Time passes for "gone": it expired before any decision past the included volume.
    await db.query(`UPDATE ledger_accounts SET expires_at = now() - interval '1 minute' WHERE grant_id = 'gone'`);

    const paid = [];
    for (let i = 0; i < 6; i++) paid.push((await run(ws)).paid_by);
    expect(paid).toEqual([
      { funding: 'included', charges: [] },
      { funding: 'included', charges: [] },
      {
        funding: 'credits',
        charges: [
          { source: 'promotional', grant_id: 'soon', amount_microcents: 1_000_000 },
          { source: 'promotional', grant_id: 'late', amount_microcents: 500_000 },
        ],
      },
      { funding: 'credits', charges: [{ source: 'promotional', grant_id: 'late', amount_microcents: 1_500_000 }] },
      { funding: 'credits', charges: [{ source: 'paid', amount_microcents: 1_500_000 }] },
      { funding: 'credits', charges: [{ source: 'paid', amount_microcents: 1_500_000 }] },
    ]);
    expect(await refusal(reserve(ws))).toEqual({
      code: 'CREDITS_EXHAUSTED',
      details: { used: 6, included: 2, availableCents: 0, currency: 'usd', billingUrl: 'http://app.test/app/billing' },
    });

    const account = await accounts.account(ws);
    expect(account.usage).toMatchObject({ used: 6, included: 2, reserved: 0 });
    expect(account.balance).toEqual({ currency: 'usd', available_cents: 0, promotional_cents: 0, paid_cents: 0, credits: [] });
    expect(account.spend_cap).toEqual({ spend_cap_cents: null, spent_cents: 6, currency: 'usd' });

    expect(await credits.expireDue(new Date())).toBeGreaterThanOrEqual(1);
    const expired = await db.getRepository(LedgerAccountEntity).findOneByOrFail({ id: `${ws}:usd:expired` });
    expect(expired.creditsPosted).toBe(5_000_000n);
  });

  it('lists usable credits in consumption order with what remains of each', async () => {
    const ws = await workspace({ included_decisions: 0, price_per_million_cents: 500_000 });
    await grant(ws, 'p', 'paid', 10);
    await grant(ws, 'undated', 'promotional', 4);
    await grant(ws, 'dated', 'promotional', 2, { expires_at: '2099-01-01T00:00:00Z' });
    await run(ws);
    expect((await accounts.account(ws)).balance).toEqual({
      currency: 'usd',
      available_cents: 15,
      promotional_cents: 5,
      paid_cents: 10,
      credits: [
        { id: 'dated', kind: 'promotional', remaining_cents: 1, currency: 'usd', expires_at: '2099-01-01T00:00:00.000Z' },
        { id: 'undated', kind: 'promotional', remaining_cents: 4, currency: 'usd', expires_at: null },
        { id: 'paid_balance', kind: 'paid', remaining_cents: 10, currency: 'usd', expires_at: null },
      ],
    });
  });
});

describe('step 6 refusals', () => {
  it('CREDITS_EXHAUSTED shows the cents left even when they do not pay for one decision', async () => {
    const ws = await workspace({ included_decisions: 1, price_per_million_cents: 2_000_000 });
    await grant(ws, 'p', 'paid', 1);
    await run(ws);
    expect(await refusal(reserve(ws))).toEqual({
      code: 'CREDITS_EXHAUSTED',
      details: { used: 1, included: 1, availableCents: 1, currency: 'usd', billingUrl: 'http://app.test/app/billing' },
    });
  });

  it('SPEND_CAP_REACHED counts what the billing cycle paid, in the workspace currency', async () => {
    const ws = await workspace({ included_decisions: 0, price_per_million_cents: 1_000_000 });
    await grant(ws, 'reais', 'paid', 10, { currency: 'brl' });
    await accounts.setSpendCap({ workspaceId: ws, spend_cap_cents: 2 });
    await run(ws);
    await run(ws);
    const { usage } = await accounts.account(ws);
    expect(await refusal(reserve(ws))).toEqual({
      code: 'SPEND_CAP_REACHED',
      details: { spendCapCents: 2, spentCents: 2, currency: 'brl', periodEnd: usage.period_end, billingUrl: 'http://app.test/app/billing' },
    });
    await accounts.setSpendCap({ workspaceId: ws, spend_cap_cents: null });
    await run(ws);
    expect((await accounts.account(ws)).spend_cap).toEqual({ spend_cap_cents: null, spent_cents: 3, currency: 'brl' });
  });

  it('checks credits before the spend cap', async () => {
    const ws = await workspace({ included_decisions: 0 });
    await accounts.setSpendCap({ workspaceId: ws, spend_cap_cents: 0 });
    expect((await refusal(reserve(ws))).code).toBe('CREDITS_EXHAUSTED');
    await grant(ws, 'p', 'paid', 100);
    expect((await refusal(reserve(ws))).code).toBe('SPEND_CAP_REACHED');
  });

  it('QUOTA_EXCEEDED on a hard-cap plan or a plan without a price, whatever credits remain', async () => {
    for (const overrides of [{ hard_cap: true }, { price_per_million_cents: null }]) {
      const ws = await workspace({ included_decisions: 1, ...overrides }, 'developer');
      await grant(ws, 'p', 'paid', 100);
      await run(ws);
      const { usage } = await accounts.account(ws);
      expect(await refusal(reserve(ws))).toEqual({
        code: 'QUOTA_EXCEEDED',
        details: { used: 1, included: 1, periodEnd: usage.period_end, upgradeUrl: 'http://app.test/app/billing/plans' },
      });
    }
  });

  it('a refusal holds nothing and records nothing', async () => {
    const ws = await workspace({ included_decisions: 0 });
    const executionId = newId('exec');
    await refusal(reservations.reserve({ workspaceId: ws, executionId }));
    expect(await db.getRepository(ReservationEntity).countBy({ executionId })).toBe(0);
    expect(await entriesOf(executionId)).toEqual([]);
  });
});

describe('exactly once', () => {
  it('commits once however often the settle arrives, at once or later', async () => {
    const ws = await workspace({});
    const executionId = await reserve(ws);
    const settles = await Promise.all(Array.from({ length: 5 }, () => reservations.settle({ workspaceId: ws, executionId, billable: true })));
    expect(settles).toEqual(Array(5).fill({ state: 'committed', paid_by: { funding: 'included', charges: [] } }));
    expect(await reservations.settle({ workspaceId: ws, executionId, billable: true })).toMatchObject({ state: 'committed' });
    expect((await entriesOf(executionId)).map((t) => t.phase).sort()).toEqual(['pending', 'post']);
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 1, reserved: 0 });
    expect(await refusal(reservations.settle({ workspaceId: ws, executionId, billable: false }))).toMatchObject({ code: 'CONFLICT' });
    expect(await reservations.reserve({ workspaceId: ws, executionId })).toEqual({ reserved: true });
    expect(await entriesOf(executionId)).toHaveLength(2);
  });

  it('holds once when the reserve arrives twice, and a released run gives nothing away', async () => {
    const ws = await workspace({});
    const executionId = newId('exec');
    await Promise.all([reservations.reserve({ workspaceId: ws, executionId }), reservations.reserve({ workspaceId: ws, executionId })]);
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 0, reserved: 1 });
    expect(await reservations.settle({ workspaceId: ws, executionId, billable: false })).toEqual({ state: 'released' });
    expect(await reservations.settle({ workspaceId: ws, executionId, billable: false })).toEqual({ state: 'released' });
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 0, reserved: 0 });
    expect(await refusal(reservations.settle({ workspaceId: ws, executionId, billable: true }))).toMatchObject({ code: 'CONFLICT' });
    expect(await refusal(reservations.reserve({ workspaceId: ws, executionId }))).toMatchObject({ code: 'CONFLICT' });
  });

  it('answers settles of executions it never held, and keeps execution ids to their workspace', async () => {
    const ws = await workspace({});
    expect(await reservations.settle({ workspaceId: ws, executionId: newId('exec'), billable: false })).toEqual({ state: 'released' });
    expect(await refusal(reservations.settle({ workspaceId: ws, executionId: newId('exec'), billable: true }))).toMatchObject({ code: 'NOT_FOUND' });
    const executionId = await reserve(ws);
    expect(await refusal(reservations.reserve({ workspaceId: randomUUID(), executionId }))).toMatchObject({ code: 'CONFLICT' });
    expect(await refusal(reservations.settle({ workspaceId: await workspace({}), executionId, billable: true }))).toMatchObject({ code: 'CONFLICT' });
    expect(await refusal(reservations.reserve({ workspaceId: ws, executionId: 'no spaces' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      details: [{ path: 'executionId', message: expect.any(String) }],
    });
    expect(await refusal(reservations.settle({ workspaceId: ws, executionId, billable: 'yes' as unknown as boolean }))).toMatchObject({
      code: 'INVALID_REQUEST',
    });
  });

  it('recognises an entry id written twice as a duplicate, and with another amount as a conflict', async () => {
    const ws = await workspace({});
    await grant(ws, 'p', 'paid', 5);
    const entry = defined((await entriesOf('p'))[0]);
    const { createdAt: _createdAt, ...transfer } = entry;
    await db.transaction((manager) => new LedgerStore(manager).post([transfer as Transfer]));
    expect((await accounts.account(ws)).balance.paid_cents).toBe(5);
    const conflict = db.transaction((manager) => new LedgerStore(manager).post([{ ...transfer, amount: transfer.amount + 1n } as Transfer]));
    expect(await refusal(conflict)).toMatchObject({ code: 'CONFLICT' });
    expect((await accounts.account(ws)).balance.paid_cents).toBe(5);
  });
});

describe('usage per decision', () => {
  it('books each billed decision and its charges under the decision its settlement names, old settlements under none', async () => {
    // One decision included, then 1.5 cents a decision from credits.
    const ws = await workspace({ included_decisions: 1, price_per_million_cents: 1_500_000 });
    await grant(ws, 'paid-1', 'paid', 10);
    const settle = async (decisionId: string | undefined, billable = true) => {
      const executionId = await reserve(ws);
      await reservations.settleBatch([{ workspaceId: ws, executionId, billable, ...(decisionId ? { decisionId } : {}) }]);
      return executionId;
    };
    const first = await settle('dec_alpha');
    await settle('dec_alpha');
    await settle('dec_beta');
    await settle(undefined);
    await settle('dec_beta', false);
    await settle('dec_alpha');

    const reply = await usageOf(ws);
    expect(reply.account.usage).toMatchObject({ used: 5, reserved: 0 });
    expect(reply.decisions).toEqual([
      { decision_id: 'dec_alpha', billed: 3, credits_microcents: 3_000_000 },
      { decision_id: 'dec_beta', billed: 1, credits_microcents: 1_500_000 },
      { decision_id: null, billed: 1, credits_microcents: 1_500_000 },
    ]);
    expect(reply.account.spend_cap.spent_cents).toBe(6);
    // The entry that bills the run names the decision; the hold it resolves does not.
    expect((await entriesOf(first)).map((entry) => [entry.phase, entry.decisionId]).sort()).toEqual([
      ['pending', null],
      ['post', 'dec_alpha'],
    ]);
    // The account alone reads no decisions.
    expect(await accounts.account(ws)).toEqual(reply.account);
  });

  it('refuses a settlement naming something that is not a decision id, and bills nothing for it', async () => {
    const ws = await workspace({});
    const executionId = await reserve(ws);
    for (const decisionId of ['dec_', 'exec_123', 42, '']) {
      expect(await refusal(reservations.settle({ workspaceId: ws, executionId, billable: true, decisionId: decisionId as string }))).toEqual({
        code: 'INVALID_REQUEST',
        details: [{ path: 'decisionId', message: 'must be a decision id' }],
      });
    }
    expect((await usageOf(ws)).decisions).toEqual([]);
    expect(await stateOf(executionId)).toBe('pending');
  });
});

describe('the sweeper', () => {
  it('settles what the runner never settled, by what the runner says of each execution', async () => {
    const ws = await workspace({});
    const [billable, notBillable, unknown, unanswered, fresh] = [await reserve(ws), await reserve(ws), await reserve(ws), await reserve(ws), await reserve(ws)];
    await backdate([billable, notBillable, unknown, unanswered], 10);
    const calls: string[][] = [];
    const report = await sweeper(outcomesStub({ [billable]: 'billable', [notBillable]: 'not_billable', [unknown]: 'unknown' }, calls)).sweep();

    expect(calls).toEqual([expect.arrayContaining([billable, notBillable, unknown, unanswered])]);
    expect(report).toMatchObject({ committed: 1, released: 2, left: 1 });
    expect([await stateOf(billable), await stateOf(notBillable), await stateOf(unknown), await stateOf(unanswered), await stateOf(fresh)]).toEqual([
      'committed',
      'released',
      'released',
      'pending',
      'pending',
    ]);
    expect(await db.getRepository(ReservationEntity).findOneByOrFail({ executionId: billable })).toMatchObject({ settledBy: 'sweeper' });
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 1, reserved: 2 });
    // The runner's own settle, arriving late, finds the same outcome.
    expect(await reservations.settle({ workspaceId: ws, executionId: billable, billable: true })).toMatchObject({ state: 'committed' });
  });

  it('books what it bills under the decision the runner names, and under none when the runner does not say', async () => {
    const ws = await workspace({});
    const [named, unnamed] = [await reserve(ws), await reserve(ws)];
    await backdate([named, unnamed], 10);
    await sweeper(outcomesStub({ [named]: 'billable', [unnamed]: 'billable' }, [], { [named]: 'dec_swept' })).sweep();
    expect((await usageOf(ws)).decisions).toEqual([
      { decision_id: 'dec_swept', billed: 1, credits_microcents: 0 },
      { decision_id: null, billed: 1, credits_microcents: 0 },
    ]);
  });

  it('leaves everything for the next sweep when the runner does not answer', async () => {
    const ws = await workspace({});
    const executionId = await reserve(ws);
    await backdate([executionId], 10);
    const silent: ExecutionOutcomes = {
      outcomes: async () => Promise.reject(new ServiceError('INTERNAL_ERROR', 'no answer')),
      leaseExecutions: async () => Promise.reject(new ServiceError('INTERNAL_ERROR', 'no answer')),
    };
    expect((await sweeper(silent).sweep()).left).toBeGreaterThanOrEqual(1);
    expect(await stateOf(executionId)).toBe('pending');
    await sweeper(outcomesStub({ [executionId]: 'billable' })).sweep();
    expect(await stateOf(executionId)).toBe('committed');
  });

  it('bills once with several replicas sweeping at the same time', async () => {
    const ws = await workspace({});
    const executionIds = await Promise.all(Array.from({ length: 20 }, () => reserve(ws)));
    await backdate(executionIds, 10);
    const answers = Object.fromEntries(executionIds.map((id, i) => [id, i % 2 === 0 ? ('billable' as const) : ('unknown' as const)]));
    const calls: string[][] = [];
    await Promise.all([1, 2, 3].map(() => sweeper(outcomesStub(answers, calls)).sweep()));
    const asked = calls.flat().filter((id) => executionIds.includes(id));
    expect(new Set(asked).size).toBe(asked.length);
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 10, reserved: 0 });
    for (const executionId of executionIds) expect((await entriesOf(executionId)).length).toBe(2);
  });

  it('runs on its timer and stops cleanly', async () => {
    const ws = await workspace({});
    const executionId = await reserve(ws);
    await backdate([executionId], 10);
    const timed = new Sweeper(db, reservations, credits, outcomesStub({ [executionId]: 'not_billable' }), { ...config, sweepIntervalMs: 100 }, logger, {
      registry: new Registry(),
    } as unknown as Metrics);
    timed.start();
    const deadline = Date.now() + 5_000;
    while ((await stateOf(executionId)) === 'pending' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await timed.stop();
    expect(await stateOf(executionId)).toBe('released');
  });
});

describe('no overspend under concurrency', () => {
  const settled = <T>(promises: Array<Promise<T>>) => Promise.allSettled(promises);
  const codes = (results: PromiseSettledResult<unknown>[]) =>
    results.map((result) => (result.status === 'fulfilled' ? 'ok' : result.reason instanceof ServiceError ? result.reason.code : String(result.reason)));
  const count = (list: string[], value: string) => list.filter((item) => item === value).length;

  it('50 runs at the edge of the included volume take only what remains', async () => {
    const ws = await workspace({ included_decisions: 12, price_per_million_cents: null });
    await run(ws);
    await run(ws);
    const ids = Array.from({ length: 50 }, () => newId('exec'));
    const results = codes(await settled(ids.map((executionId) => reservations.reserve({ workspaceId: ws, executionId }))));
    expect([count(results, 'ok'), count(results, 'QUOTA_EXCEEDED')]).toEqual([10, 40]);
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 2, reserved: 10 });
    const held = ids.filter((_, i) => results[i] === 'ok');
    await Promise.all(held.map((executionId, i) => reservations.settle({ workspaceId: ws, executionId, billable: i < 7 })));
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 9, reserved: 0 });
  });

  it('the one-statement reserve takes from the budget as it is, after another replica took from it and after a plan change', async () => {
    const burst = async (replica: ReservationsService, runs: number) =>
      codes(await settled(Array.from({ length: runs }, () => replica.reserve({ workspaceId: ws, executionId: newId('exec') }))));
    const ws = await workspace({ included_decisions: 5, price_per_million_cents: null });
    const other = new ReservationsService(db, config);
    // Each replica's first reserve takes the locked path; its second, the one-statement path, remembers the budget.
    expect(await burst(reservations, 1)).toEqual(['ok']);
    expect(await burst(reservations, 1)).toEqual(['ok']);
    expect(await burst(other, 1)).toEqual(['ok']);
    expect(await burst(other, 1)).toEqual(['ok']);
    // This replica last saw 2 of 5 taken; 4 are: one more fits, not three.
    expect(count(await burst(reservations, 10), 'ok')).toBe(1);
    expect((await accounts.account(ws)).usage).toMatchObject({ reserved: 5, included: 5 });
    await accounts.setPlan({ workspaceId: ws, plan: 'genesis', overrides: { included_decisions: 20, price_per_million_cents: null } });
    expect(count(await burst(reservations, 3), 'ok')).toBe(3);
    // Lowered to 10 with 8 taken: the 12 this replica saw room for under the plan it read are not there.
    await accounts.setPlan({ workspaceId: ws, plan: 'genesis', overrides: { included_decisions: 10, price_per_million_cents: null } });
    const results = await burst(reservations, 10);
    expect([count(results, 'ok'), count(results, 'QUOTA_EXCEEDED')]).toEqual([2, 8]);
    expect((await accounts.account(ws)).usage).toMatchObject({ reserved: 10, included: 10 });
  });

  it('50 runs at the edge of a balance spend at most what remains', async () => {
    const ws = await workspace({ included_decisions: 0, price_per_million_cents: 1_500_000 });
    await grant(ws, 'promo', 'promotional', 4, { expires_at: inDays(30) });
    await grant(ws, 'p', 'paid', 6);
    const ids = Array.from({ length: 50 }, () => newId('exec'));
    const results = codes(await settled(ids.map((executionId) => reservations.reserve({ workspaceId: ws, executionId }))));
    // 10 cents pay for 6 decisions at 1.5 cents; 1 cent is left.
    expect([count(results, 'ok'), count(results, 'CREDITS_EXHAUSTED')]).toEqual([6, 44]);
    expect((await accounts.account(ws)).balance).toMatchObject({ available_cents: 1 });
    const held = ids.filter((_, i) => results[i] === 'ok');
    await Promise.all(held.map((executionId, i) => reservations.settle({ workspaceId: ws, executionId, billable: i % 2 === 0 })));
    const account = await accounts.account(ws);
    expect(account.balance.available_cents).toBe(5);
    expect(account.spend_cap.spent_cents).toBe(4);
  });

  it('50 runs at the edge of the spend cap pass it by nothing', async () => {
    const ws = await workspace({ included_decisions: 0, price_per_million_cents: 1_000_000 });
    await grant(ws, 'p', 'paid', 1_000);
    await accounts.setSpendCap({ workspaceId: ws, spend_cap_cents: 5 });
    const results = codes(await settled(Array.from({ length: 50 }, () => reserve(ws))));
    expect([count(results, 'ok'), count(results, 'SPEND_CAP_REACHED')]).toEqual([5, 45]);
  });
});

describe('operator requests', () => {
  it('grants once per grant id, refuses the same id with other fields, and checks every field', async () => {
    const ws = await workspace({});
    const first = await grant(ws, 'g1', 'promotional', 300, { expires_at: '2099-06-01T00:00:00Z' });
    expect(first).toEqual({
      id: 'g1',
      kind: 'promotional',
      amount_cents: 300,
      currency: 'usd',
      expires_at: '2099-06-01T00:00:00.000Z',
      granted_at: expect.any(String),
    });
    expect(await grant(ws, 'g1', 'promotional', 300, { expires_at: '2099-06-01T00:00:00.000Z' })).toEqual(first);
    expect(await refusal(grant(ws, 'g1', 'promotional', 301, { expires_at: '2099-06-01T00:00:00Z' }))).toMatchObject({ code: 'CONFLICT' });
    expect((await accounts.account(ws)).balance.promotional_cents).toBe(300);
    expect(await refusal(grant(ws, 'g2', 'promotional', 1, { expires_at: '2001-01-01T00:00:00Z' }))).toEqual({
      code: 'INVALID_REQUEST',
      details: [{ path: 'expires_at', message: 'must be in the future' }],
    });
  });

  it('bills a workspace in the currency of its first grant', async () => {
    const ws = await workspace({});
    expect((await accounts.account(ws)).balance.currency).toBe('usd');
    await grant(ws, 'r1', 'paid', 50, { currency: 'brl' });
    expect((await accounts.account(ws)).balance).toMatchObject({ currency: 'brl', paid_cents: 50 });
    expect(await refusal(grant(ws, 'u1', 'paid', 50, { currency: 'usd' }))).toMatchObject({ code: 'CONFLICT' });
  });

  it('sets the spend cap and validates the plan', async () => {
    const ws = await workspace({});
    expect((await accounts.setSpendCap({ workspaceId: ws, spend_cap_cents: 0 })).spend_cap).toEqual({ spend_cap_cents: 0, spent_cents: 0, currency: 'usd' });
    announced.length = 0;
    expect(await refusal(accounts.setPlan({ workspaceId: ws, plan: 'platinum', overrides: undefined }))).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(announced).toEqual([]);
    expect((await accounts.setPlan({ workspaceId: ws, plan: 'growth', overrides: undefined })).plan).toMatchObject({
      name: 'growth',
      included_decisions: 25_000_000,
    });
    // Every gateway drops the limit it cached for the workspace, whoever asked for the change.
    expect(announced).toEqual([['v1.billing-ledger.plan.changed', ws]]);
  });

  it('starts a workspace it has not seen on the free plan, its period around now, however many ask at once', async () => {
    const ws = randomUUID();
    const [account] = await Promise.all([...Array.from({ length: 5 }, () => accounts.account(ws)), reserve(ws).then(() => undefined)]);
    if (!account) throw new Error('no account');
    expect(account.plan).toMatchObject({ name: 'genesis', included_decisions: 1_000_000, hard_cap: false });
    expect(new Date(account.usage.period_start).getTime()).toBeLessThanOrEqual(Date.now());
    expect(new Date(account.usage.period_end).getTime()).toBeGreaterThan(Date.now());
    expect(account.usage).toMatchObject({ used: 0, included: 1_000_000 });
    expect((await accounts.account(ws)).usage).toMatchObject({ used: 0, reserved: 1 });
  });
});

describe('the books', () => {
  it('balance: every ledger sums to zero and every balance equals its entries', async () => {
    const books = await checkBooks(db);
    expect(books.entries).toBeGreaterThan(100);
    expect({ drifted: books.drifted, unbalanced: books.unbalanced }).toEqual({ drifted: [], unbalanced: [] });
    const crossing = await db.query(`
      SELECT t.id FROM transfers t
      JOIN ledger_accounts d ON d.id = t.debit_account_id
      JOIN ledger_accounts c ON c.id = t.credit_account_id
      WHERE d.ledger <> t.ledger OR c.ledger <> t.ledger OR d.workspace_id <> t.workspace_id OR c.workspace_id <> t.workspace_id`);
    expect(crossing).toEqual([]);
  });

  it('are checked for real: a balance moved behind its entries’ back is named', async () => {
    const [moved] = (await db.query(`SELECT id FROM ledger_accounts ORDER BY id LIMIT 1`)) as Array<{ id: string }>;
    const rolledBack = new Error('rolled back');
    const seen = await db
      .transaction(async (manager) => {
        await manager.query(`UPDATE ledger_accounts SET debits_posted = debits_posted + 1 WHERE id = $1`, [moved!.id]);
        const books = await checkBooks(manager);
        expect(books.drifted.map((account) => [account.id, account.stored.debitsPosted - account.replayed.debitsPosted])).toEqual([[moved!.id, 1n]]);
        expect(books.unbalanced).toHaveLength(1);
        throw rolledBack;
      })
      .catch((error: unknown) => error);
    expect(seen).toBe(rolledBack);
  });

  it('are append-only', async () => {
    await expect(db.query(`UPDATE transfers SET amount = amount + 1`)).rejects.toThrow('append-only');
    await expect(db.query(`DELETE FROM transfers`)).rejects.toThrow('append-only');
  });
});

describe('execution-log retention asked by the runner', () => {
  it("answers each workspace's plan retention, and the default plan's for a workspace without an account", async () => {
    const growth = await workspace({}, 'growth');
    const enterprise = await workspace({}, 'enterprise');
    const unseen = randomUUID();
    const reply = await accounts.retention({ workspaceIds: [growth, enterprise, unseen] });
    expect(reply.retentionDays).toEqual({ [growth]: 30, [enterprise]: 365, [unseen]: 7 });
  });

  it("applies a workspace's own shorter setting, and its plan's again when a downgrade makes the plan's shorter", async () => {
    const growth = await workspace({}, 'growth');
    const other = await workspace({}, 'growth');
    expect(await accounts.setExecutionRetention({ workspaceId: growth, days: 20 })).toEqual({ days: 20, plan_days: 30, effective_days: 20 });
    expect((await accounts.retention({ workspaceIds: [growth, other] })).retentionDays).toEqual({ [growth]: 20, [other]: 30 });

    await accounts.setPlan({ workspaceId: growth, plan: 'developer', overrides: {} });
    expect(await accounts.executionRetention({ workspaceId: growth })).toEqual({ days: 20, plan_days: 14, effective_days: 14 });
    expect((await accounts.retention({ workspaceIds: [growth] })).retentionDays).toEqual({ [growth]: 14 });

    expect(await accounts.setExecutionRetention({ workspaceId: growth, days: null })).toEqual({ days: null, plan_days: 14, effective_days: 14 });
    expect((await accounts.retention({ workspaceIds: [growth] })).retentionDays).toEqual({ [growth]: 14 });
  });

  it("refuses a setting longer than the plan's, or not a whole number of days, and keeps the one it had", async () => {
    const genesis = await workspace({}, 'genesis');
    await accounts.setExecutionRetention({ workspaceId: genesis, days: 3 });
    for (const days of [8, 0, 2.5, '3', undefined]) {
      await expect(accounts.setExecutionRetention({ workspaceId: genesis, days })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        details: [{ path: 'days' }],
      });
    }
    expect(await accounts.executionRetention({ workspaceId: genesis })).toEqual({ days: 3, plan_days: 7, effective_days: 3 });
  });

  it("answers the plan's retention for a workspace the ledger has not seen", async () => {
    expect(await accounts.executionRetention({ workspaceId: randomUUID() })).toEqual({ days: null, plan_days: 7, effective_days: 7 });
  });

  it('refuses a request that is not a bounded list of ids', async () => {
    await expect(accounts.retention({ workspaceIds: 'ws' as unknown as string[] })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(accounts.retention({ workspaceIds: Array.from({ length: 1001 }, () => randomUUID()) })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(accounts.retention({ workspaceIds: ['bad id with spaces'] })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });
});

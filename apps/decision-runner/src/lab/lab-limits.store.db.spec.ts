import { DataSource } from 'typeorm';
import { SUBJECTS } from '@ds/contracts';
import { fitDailyCap, normalizeSchema } from '@ds/decision-schema';
import { RpcClient } from '@ds/platform';
import { decisionRunner } from '../main';
import { VersionCache } from '../decisions/version-cache';
import { QualityService } from '../quality/quality.service';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { LabLimits, LabTurn } from './lab-limits.store';
import { LabGate, LabPool } from './lab-pool';
import { DecisionStore } from '../decisions/decision.store';
import { QualityStore } from '../quality/quality.store';

/** A workspace's turn and daily budget for fits, against a real PostgreSQL with the runner's own migrations. */

const database = useMigratedDatabase('runner_lab_limits', decisionRunner.database, 8);
let db: DataSource;
let limits: LabLimits;
let quality: QualityService;
/** The plan the ledger answers for every workspace; the ledger's own tests cover the ledger. */
let plan = 'genesis';
let planLookups = 0;
const ledger = {
  call: async (subject: string) => {
    expect(subject).toBe(SUBJECTS.billing.account);
    planLookups++;
    return { plan: { name: plan } };
  },
} as unknown as RpcClient;

const schema = normalizeSchema({
  state: { type: 'text' },
  questions: [{ key: 'intent', kind: 'choice', instructions: 'What is wanted?', options: [{ value: 'refund' }, { value: 'exchange' }] }],
  fallbackAction: 'escalate',
});

beforeAll(async () => {
  db = database.dataSource;
  limits = new LabLimits(db);
  quality = new QualityService(DecisionStore.of(db), new QualityStore(db), ledger, new VersionCache(db), limits, new LabPool(1), new LabGate(1));
  await db.query(
    `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled) VALUES ('dec_f', 'ws_f', 'f', 'F', $1, 1, 1, true)`,
    [schema],
  );
  await db.query(`INSERT INTO decision_versions (decision_id, version, schema) VALUES ('dec_f', 1, $1)`, [schema]);
  // 40 live runs said refund at 0.9 and were right half the time; 20 replay copies say the same and are never read.
  await db.query(
    `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, action, distributions, outcome)
     SELECT 'exec_f' || i, 'ws_f', 'dec_f', 'f', 1, CASE WHEN i > 40 THEN 'replay' ELSE 'api' END, 'success', 'req_f', true, 'continue',
            '{"model":{"intent":{"refund":0.9,"exchange":0.1,"other":0}}}'::jsonb,
            jsonb_build_object('answers', jsonb_build_object('intent', CASE WHEN i % 2 = 0 THEN 'refund' ELSE 'exchange' END), 'action', null)
       FROM generate_series(1, 60) AS i`,
  );
});

const fit = (workspaceId = 'ws_f') => quality.fit({ workspaceId, decisionId: 'dec_f', version: 1 });
const used = async (workspaceId: string) =>
  ((await db.query(`SELECT coalesce(sum(used), 0)::int AS used FROM lab_budgets WHERE workspace_id = $1`, [workspaceId])) as Array<{ used: number }>)[0]!.used;

const holderOf = (turn: LabTurn): string | null => (turn.kind === 'taken' ? turn.holder : null);
/** As if the workspace's rest after its last fit had passed. */
const restOver = (workspaceId: string) => db.query(`UPDATE lab_turns SET expires_at = now() WHERE workspace_id = $1 AND holder = 'resting'`, [workspaceId]);

describe('lab turns', () => {
  it('go to exactly one of many takers at once, and to the next once ended', async () => {
    const turns = await Promise.all(Array.from({ length: 8 }, () => limits.takeTurn('ws_turn', 'fit', 60)));
    const taken = turns.map(holderOf).filter((holder): holder is string => holder !== null);
    expect(taken).toHaveLength(1);
    expect(turns.filter((turn) => turn.kind === 'running')).toHaveLength(7);
    expect(await limits.takeTurn('ws_turn', 'fit', 60)).toEqual({ kind: 'running' });
    // Another workspace has a turn of its own.
    expect((await limits.takeTurn('ws_turn_other', 'fit', 60)).kind).toBe('taken');
    await limits.endTurn('ws_turn', 'fit', 'someone else');
    expect(await limits.takeTurn('ws_turn', 'fit', 60)).toEqual({ kind: 'running' });
    await limits.endTurn('ws_turn', 'fit', taken[0]!);
    expect((await limits.takeTurn('ws_turn', 'fit', 60)).kind).toBe('taken');
  });

  it('lapse when their lease does, so a process that died holding one blocks nobody for good', async () => {
    expect((await limits.takeTurn('ws_lapse', 'fit', 60)).kind).toBe('taken');
    await db.query(`UPDATE lab_turns SET expires_at = now() - interval '1 second' WHERE workspace_id = 'ws_lapse'`);
    expect((await limits.takeTurn('ws_lapse', 'fit', 60)).kind).toBe('taken');
  });

  it('rest after they end for the time given, saying how long is left, then go to the next', async () => {
    const holder = holderOf(await limits.takeTurn('ws_rest', 'fit', 60))!;
    await limits.endTurn('ws_rest', 'fit', holder, 30);
    const resting = await limits.takeTurn('ws_rest', 'fit', 60);
    expect(resting).toEqual({ kind: 'resting', retryAfterSeconds: expect.any(Number) });
    expect((resting as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(29);
    expect((resting as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(30);
    // Ending a resting turn again changes nothing: only the holder could, and it no longer holds it.
    await limits.endTurn('ws_rest', 'fit', holder);
    expect((await limits.takeTurn('ws_rest', 'fit', 60)).kind).toBe('resting');
    await restOver('ws_rest');
    expect((await limits.takeTurn('ws_rest', 'fit', 60)).kind).toBe('taken');
  });
});

describe('lab budgets', () => {
  it('count exactly up to the cap when many spend at once, and a run given back can be spent again', async () => {
    const spent = await Promise.all(Array.from({ length: 30 }, () => limits.spend('ws_budget', 'fit', 12)));
    expect(spent.filter(Boolean)).toHaveLength(12);
    expect(await used('ws_budget')).toBe(12);
    await limits.giveBack('ws_budget', 'fit');
    expect(await limits.spend('ws_budget', 'fit', 12)).toBe(true);
    expect(await limits.spend('ws_budget', 'fit', 12)).toBe(false);
  });
});

describe('a calibration fit', () => {
  // Each case starts once the workspace's rest after the case before has passed; the rest has a case of its own.
  beforeEach(() => restOver('ws_f'));

  it('fits the live runs only, spends one run of the budget and ends its turn, leaving the workspace to rest', async () => {
    const reply = (await fit()) as { fitted: Array<{ question: string; outcomes: number }>; revision: number };
    expect(reply.fitted).toEqual([expect.objectContaining({ question: 'intent', source: 'model', outcomes: 40 })]);
    expect(reply.revision).toBe(2);
    expect(await used('ws_f')).toBe(1);
    expect(await db.query(`SELECT holder FROM lab_turns WHERE workspace_id = 'ws_f'`)).toEqual([{ holder: 'resting' }]);
  });

  it('is refused with RATE_LIMITED and a Retry-After while the workspace rests after its last fit, spending nothing', async () => {
    await expect(fit()).resolves.toMatchObject({ version: 1 });
    const before = [await used('ws_f'), planLookups];
    const refusal = await fit().catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringMatching(/a moment ago/), details: { retryAfter: expect.any(Number) } });
    expect((refusal as { details: { retryAfter: number } }).details.retryAfter).toBeGreaterThanOrEqual(1);
    expect([await used('ws_f'), planLookups]).toEqual(before);
  });

  it('is refused with CONFLICT while another replica’s fit of the workspace holds the turn, spending nothing', async () => {
    const holder = holderOf(await limits.takeTurn('ws_f', 'fit', 60))!;
    const before = [await used('ws_f'), planLookups];
    await expect(fit()).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/fit of this workspace is running/) });
    expect([await used('ws_f'), planLookups]).toEqual(before);
    await limits.endTurn('ws_f', 'fit', holder);
  });

  it('is refused with CONFLICT while a fit of the workspace runs in this process, and the first completes', async () => {
    // Holding the decision's row keeps the first fit at its last step, writing the maps into the draft, so that the
    // second is asked while the first surely runs.
    const blocker = db.createQueryRunner();
    await blocker.connect();
    await blocker.startTransaction();
    try {
      await blocker.query(`SELECT 1 FROM decisions WHERE id = 'dec_f' FOR UPDATE`);
      const first = fit();
      const held = async () => ((await db.query(`SELECT holder FROM lab_turns WHERE workspace_id = 'ws_f'`)) as Array<{ holder: string }>)[0]?.holder;
      for (let tries = 0; (await held()) === 'resting' || (await held()) === undefined; tries++) {
        if (tries > 500) throw new Error('the first fit never took its turn');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await expect(fit()).rejects.toMatchObject({ code: 'CONFLICT' });
      await blocker.commitTransaction();
      await expect(first).resolves.toMatchObject({ version: 1 });
    } finally {
      if (blocker.isTransactionActive) await blocker.rollbackTransaction();
      await blocker.release();
    }
  });

  it('is refused with RATE_LIMITED and a Retry-After past the plan’s daily cap, and ends its turn', async () => {
    await db.query(`UPDATE lab_budgets SET used = $1 WHERE workspace_id = 'ws_f'`, [fitDailyCap('genesis')]);
    const refusal = await fit().catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', details: { retryAfter: expect.any(Number) } });
    const retryAfter = (refusal as { details: { retryAfter: number } }).details.retryAfter;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(await db.query(`SELECT 1 FROM lab_turns WHERE workspace_id = 'ws_f'`)).toEqual([]);
    // A larger plan's cap is not spent yet.
    plan = 'developer';
    await expect(fit()).resolves.toMatchObject({ version: 1 });
  });

  it('spends nothing when the caller’s request or draft is refused', async () => {
    await db.query(`UPDATE decisions SET draft_schema = '{"questions": 3}' WHERE id = 'dec_f'`);
    const before = await used('ws_f');
    await expect(fit()).rejects.toMatchObject({ code: 'INVALID_SCHEMA' });
    await expect(quality.fit({ workspaceId: 'ws_f', decisionId: 'dec_f', version: 9 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await used('ws_f')).toBe(before);
    expect(await db.query(`SELECT 1 FROM lab_turns WHERE workspace_id = 'ws_f'`)).toEqual([]);
  });
});

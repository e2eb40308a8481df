import { DataSource } from 'typeorm';
import { RpcClient } from '@ds/platform';
import { normalizeSchema, outcomeLabels } from '@ds/decision-schema';
import { decisionRunner } from '../main';
import { LiveQualityLabels1796240000000 } from '../migrations/1796240000000-live-quality-labels';
import { labelColumns } from './outcomes.service';
import { VersionCache } from '../decisions/version-cache';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { OutcomesService } from './outcomes.service';
import { QualityService } from './quality.service';
import { LabLimits } from '../lab/lab-limits.store';
import { LabGate, LabPool } from '../lab/lab-pool';
import { ExecutionStore } from '../executions/execution.store';
import { DecisionStore } from '../decisions/decision.store';
import { QualityStore } from './quality.store';

/** The ledger's answer to the plan a fit asks for: the free plan, whose daily budget these tests stay under. */
const LEDGER = {
  call: async () => ({ plan: { name: 'genesis' } }),
} as unknown as RpcClient;

/** Outcomes and their labels against a real PostgreSQL with the runner's own migrations. */

const database = useMigratedDatabase('runner_outcomes', decisionRunner.database, 2);
let db: DataSource;
let outcomes: OutcomesService;
let quality: QualityService;

const schema = normalizeSchema({
  state: { type: 'text' },
  questions: [
    { key: 'intent', kind: 'choice', instructions: 'What is wanted?', options: [{ value: 'refund' }, { value: 'exchange' }] },
    { key: 'fraud', kind: 'probability', instructions: 'Judge it.', criterion: 'Fraud' },
  ],
  fallbackAction: 'escalate',
});

beforeAll(async () => {
  db = database.dataSource;
  const versions = new VersionCache(db);
  outcomes = new OutcomesService(new ExecutionStore(db), versions);
  quality = new QualityService(DecisionStore.of(db), new QualityStore(db), LEDGER, versions, new LabLimits(db), new LabPool(1), new LabGate(1));
  await db.query(
    `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled) VALUES ('dec_q', 'ws_q', 'q', 'Q', $1, 1, 1, true)`,
    [schema],
  );
  await db.query(`INSERT INTO decision_versions (decision_id, version, schema) VALUES ('dec_q', 1, $1)`, [schema]);
});

async function execution(id: string, createdAt = new Date(), ran: { source?: string; version?: number; decision?: string } = {}): Promise<void> {
  await db.query(
    `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, action, distributions, created_at)
     VALUES ($1, 'ws_q', $4, 'q', $5, $6, 'success', 'req_q', true, 'continue', $2, $3)`,
    [
      id,
      { model: { intent: { refund: 0.9, exchange: 0.1, other: 0 }, fraud: { yes: 0.2, no: 0.8 } } },
      createdAt,
      ran.decision ?? 'dec_q',
      ran.version ?? 1,
      ran.source ?? 'api',
    ],
  );
}

const labels = async (id: string) =>
  (await db.query('SELECT question, source, correct FROM quality_labels WHERE execution_id = $1 ORDER BY question', [id])) as Array<{
    question: string;
    source: string;
    correct: boolean;
  }>;

describe('outcomes in the database', () => {
  it('stores the outcome with one label per answer and the action, and a repeat replaces both', async () => {
    await execution('exec_q1');
    const first = await outcomes.record({
      workspaceId: 'ws_q',
      executionId: 'exec_q1',
      body: { answers: { intent: 'refund', fraud: true }, action: 'continue' },
    });
    expect(first).toMatchObject({ execution_id: 'exec_q1', answers: { intent: 'refund', fraud: true }, action: 'continue' });
    expect(await labels('exec_q1')).toEqual([
      { question: '', source: 'model', correct: true },
      { question: 'fraud', source: 'model', correct: false },
      { question: 'intent', source: 'model', correct: true },
    ]);
    await outcomes.record({ workspaceId: 'ws_q', executionId: 'exec_q1', body: { answers: { intent: 'exchange' } } });
    expect(await labels('exec_q1')).toEqual([{ question: 'intent', source: 'model', correct: false }]);
    const [row] = (await db.query(`SELECT outcome FROM executions WHERE id = 'exec_q1'`)) as Array<{ outcome: Record<string, unknown> }>;
    expect(row!.outcome).toMatchObject({ answers: { intent: 'exchange' }, action: null });
  });

  it('refuses a bad outcome without touching the stored one, and another workspace’s execution as not found', async () => {
    await execution('exec_q2');
    await outcomes.record({ workspaceId: 'ws_q', executionId: 'exec_q2', body: { action: 'block' } });
    await expect(outcomes.record({ workspaceId: 'ws_q', executionId: 'exec_q2', body: { answers: { intent: 'nope' } } })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    await expect(outcomes.record({ workspaceId: 'ws_other', executionId: 'exec_q2', body: { action: 'block' } })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(outcomes.record({ workspaceId: 'ws_q', executionId: 'exec_\u0000', body: { action: 'block' } })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await labels('exec_q2')).toEqual([{ question: '', source: 'model', correct: false }]);
  });

  it('labels go with their execution when retention deletes it', async () => {
    await execution('exec_q3', new Date(Date.now() - 90 * 86_400_000));
    await outcomes.record({ workspaceId: 'ws_q', executionId: 'exec_q3', body: { answers: { fraud: false } } });
    expect(await labels('exec_q3')).toHaveLength(1);
    await db.query(`DELETE FROM executions WHERE id = 'exec_q3'`);
    expect(await labels('exec_q3')).toEqual([]);
  });

  it('the report counts the labels of the version, within from and to', async () => {
    const report = (await quality.report({ workspaceId: 'ws_q', decisionId: 'dec_q', version: '1', from: undefined, to: undefined })) as any;
    expect(report.questions.map((q: { key: string; labelled: number }) => [q.key, q.labelled])).toEqual([
      ['intent', 1],
      ['fraud', 0],
    ]);
    expect(report.action).toEqual({ labelled: 1, agreement: 0 });
    const later = (await quality.report({ workspaceId: 'ws_q', decisionId: 'dec_q', version: undefined, from: '2999-01-01', to: undefined })) as any;
    expect(later.questions[0].labelled).toBe(0);
  });

  it('the report says which versions have outcomes, newest first, whatever its range, counting live runs only', async () => {
    // Rows as a later version would have left them (the decision here has one version, which the report reads).
    await execution('exec_qv3a', new Date(), { version: 3 });
    await execution('exec_qv3pg', new Date(), { version: 3, source: 'playground' });
    await db.query(`UPDATE executions SET outcome = '{"answers":{},"action":"block"}' WHERE id IN ('exec_qv3a', 'exec_qv3pg')`);
    const report = (await quality.report({ workspaceId: 'ws_q', decisionId: 'dec_q', version: '1', from: '2999-01-01', to: undefined })) as any;
    expect(report.action.labelled).toBe(0);
    expect(report.outcomes_by_version).toEqual([
      { version: 3, outcomes: 1 },
      { version: 1, outcomes: 2 },
    ]);
  });
});

describe('outcomes of executions that are not live runs', () => {
  const outcome = { answers: { intent: 'refund', fraud: true }, action: 'continue' } as const;

  it.each([
    ['a playground run of a deployed version', 'exec_nlpg', { source: 'playground', version: 1 }, 'a playground run'],
    ['a playground run of the draft', 'exec_nldraft', { source: 'playground', version: 0 }, 'a playground run'],
    ['a replay’s run', 'exec_nlrpl', { source: 'replay', version: 1 }, 'a replay’s run'],
    ['a replay’s run of the draft', 'exec_nlrpl0', { source: 'replay', version: 0 }, 'a replay’s run'],
    ['a shadow run', 'exec_nlsh', { source: 'shadow', version: 1 }, 'a shadow run'],
    ['a live source naming version 0', 'exec_nlapi0', { source: 'api', version: 0 }, 'a run of the draft'],
  ])('refuses %s with 409 CONFLICT, writing nothing', async (_what, id, ran, said) => {
    await execution(id, new Date(), ran);
    const refused = outcomes.record({ workspaceId: 'ws_q', executionId: id, body: outcome });
    await expect(refused).rejects.toMatchObject({ code: 'CONFLICT', status: 409 });
    await expect(refused).rejects.toThrow(`This execution is ${said}. Outcomes are recorded only for live runs of a deployed version`);
    expect(await labels(id)).toEqual([]);
    const [row] = (await db.query('SELECT outcome FROM executions WHERE id = $1', [id])) as Array<{ outcome: unknown }>;
    expect(row!.outcome).toBeNull();
  });

  it('refuses them before reading the body: a bad body on a playground run is still 409', async () => {
    await execution('exec_nlbody', new Date(), { source: 'playground', version: 0 });
    await expect(outcomes.record({ workspaceId: 'ws_q', executionId: 'exec_nlbody', body: { answers: { nope: 1 } } })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('takes outcomes of every live source', async () => {
    for (const source of ['api', 'webhook', 'mcp']) {
      await execution(`exec_live${source}`, new Date(), { source });
      await expect(outcomes.record({ workspaceId: 'ws_q', executionId: `exec_live${source}`, body: outcome })).resolves.toMatchObject({
        execution_id: `exec_live${source}`,
      });
      expect(await labels(`exec_live${source}`)).toHaveLength(3);
    }
  });
});

describe('the calibration fit and the migration count live runs only', () => {
  const distributions = { model: { intent: { refund: 0.9, exchange: 0.1, other: 0 }, fraud: { yes: 0.2, no: 0.8 } } };

  beforeAll(async () => {
    await db.query(
      `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled) VALUES ('dec_fit', 'ws_q', 'fit', 'Fit', $1, 1, 1, true)`,
      [schema],
    );
    await db.query(`INSERT INTO decision_versions (decision_id, version, schema) VALUES ('dec_fit', 1, $1)`, [schema]);
  });

  /** An execution with an outcome and its labels as an earlier release wrote them, whatever its source. */
  async function labelled(id: string, source: string, version = 1): Promise<void> {
    await execution(id, new Date(), { source, version, decision: 'dec_fit' });
    const answers = { intent: 'refund', fraud: false };
    await db.query(`UPDATE executions SET outcome = $1 WHERE id = $2`, [{ answers, action: 'continue', recorded_at: new Date().toISOString() }, id]);
    const labels = outcomeLabels(schema, distributions, { answers, action: 'continue' }, 'continue');
    await db.query(
      `INSERT INTO quality_labels (execution_id, decision_id, version, executed_at, question, kind, source, confidence, predicted, observed, correct)
       SELECT $1, 'dec_fit', $2, now(), * FROM unnest($3::text[], $4::text[], $5::text[], $6::float8[], $7::float8[], $8::boolean[], $9::boolean[])`,
      [id, version, ...labelColumns(labels)],
    );
  }

  const intentOutcomes = async () => {
    const fit = (await quality.fit({ workspaceId: 'ws_q', decisionId: 'dec_fit', version: 1 })) as {
      fitted: Array<{ question: string; outcomes: number }>;
      not_fitted: Array<{ question: string; outcomes: number }>;
    };
    return [...fit.fitted, ...fit.not_fitted].find((entry) => entry.question === 'intent')!.outcomes;
  };

  const labelledInReport = async () => {
    const report = (await quality.report({ workspaceId: 'ws_q', decisionId: 'dec_fit', version: '1', from: undefined, to: undefined })) as any;
    return report.action.labelled as number;
  };

  it('the fit reads the outcomes of live runs only', async () => {
    for (let i = 0; i < 5; i++) await labelled(`exec_fit_api_${i}`, 'api');
    for (let i = 0; i < 3; i++) await labelled(`exec_fit_sh_${i}`, 'shadow');
    await labelled('exec_fit_rpl', 'replay');
    await labelled('exec_fit_pg', 'playground');
    expect(await intentOutcomes()).toBe(5);
  });

  it('the migration removes the labels of executions that are not live runs, and the rollup with them', async () => {
    await labelled('exec_fit_draft', 'playground', 0);
    expect(await labelledInReport()).toBe(10);
    const runner = db.createQueryRunner();
    try {
      await new LiveQualityLabels1796240000000().up(runner);
    } finally {
      await runner.release();
    }
    expect(await labelledInReport()).toBe(5);
    const [left] = (await db.query(
      `SELECT count(*)::int AS n FROM quality_labels l JOIN executions e ON e.id = l.execution_id WHERE e.source NOT IN ('api', 'webhook', 'mcp') OR e.version < 1`,
    )) as Array<{ n: number }>;
    expect(left!.n).toBe(0);
    // The rollup equals the labels it counts: the day's cells read from the labels alone give the same report.
    const fromRollup = await quality.cells('dec_fit', 1, null, null);
    const fromLabels = await quality.cells('dec_fit', 1, null, null, false);
    expect(fromRollup).toEqual(fromLabels);
    // The outcomes stay on their executions, as reported.
    const [kept] = (await db.query(`SELECT count(*)::int AS n FROM executions WHERE decision_id = 'dec_fit' AND outcome IS NOT NULL`)) as Array<{ n: number }>;
    expect(kept!.n).toBe(11);
  });
});

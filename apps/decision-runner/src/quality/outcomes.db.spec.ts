import { DataSource } from 'typeorm';
import { RpcClient } from '@ds/platform';
import { normalizeSchema } from '@ds/decision-schema';
import { decisionRunner } from '../main';
import { VersionCache } from '../decisions/version-cache';
import { MigratedDatabase, migratedDatabase } from '../../../../test/support/service-database';
import { OutcomesService } from './outcomes.service';
import { QualityService } from './quality.service';
import { LabLimits } from '../lab/lab-limits';
import { LabGate, LabPool } from '../lab/lab-pool';

/** Only the report is read here; a fit would ask the ledger for the plan. */
const NO_LEDGER = {
  call: async () => {
    throw new Error('no ledger here');
  },
} as unknown as RpcClient;

/** Outcomes and their labels against a real PostgreSQL with the runner's own migrations. */

let database: MigratedDatabase;
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
  database = await migratedDatabase('runner_outcomes', decisionRunner.database, 2);
  db = database.dataSource;
  const versions = new VersionCache(db);
  outcomes = new OutcomesService(db, versions);
  quality = new QualityService(db, NO_LEDGER, versions, new LabLimits(db), new LabPool(1), new LabGate(1));
  await db.query(
    `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled) VALUES ('dec_q', 'ws_q', 'q', 'Q', $1, 1, 1, true)`,
    [schema],
  );
  await db.query(`INSERT INTO decision_versions (decision_id, version, schema) VALUES ('dec_q', 1, $1)`, [schema]);
});

afterAll(async () => {
  await database?.drop();
});

async function execution(id: string, createdAt = new Date()): Promise<void> {
  await db.query(
    `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, action, distributions, created_at)
     VALUES ($1, 'ws_q', 'dec_q', 'q', 1, 'api', 'success', 'req_q', true, 'continue', $2, $3)`,
    [id, { model: { intent: { refund: 0.9, exchange: 0.1, other: 0 }, fraud: { yes: 0.2, no: 0.8 } } }, createdAt],
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
});

import { DataSource } from 'typeorm';
import { createLogger, RpcClient } from '@ds/platform';
import { normalizeSchema, QualityCell } from '@ds/decision-schema';
import { decisionRunner } from '../main';
import { VersionCache } from '../decisions/version-cache';
import { ExecutionRetention } from '../retention/execution-retention';
import { QualityRollups1796120000000 } from '../migrations/1796120000000-quality-rollups';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { OutcomesService } from './outcomes.service';
import { QualityService } from './quality.service';
import { LabLimits } from '../lab/lab-limits.store';
import { LabGate, LabPool } from '../lab/lab-pool';
import { runnerTestConfig } from '../../../../test/support/service-configs';
import { ExecutionStore } from '../executions/execution.store';
import { DecisionStore } from '../decisions/decision.store';
import { QualityStore } from './quality.store';

/** Only the report is read here; a fit would ask the ledger for the plan. */
const NO_LEDGER = {
  call: async () => {
    throw new Error('no ledger here');
  },
} as unknown as RpcClient;

/**
 * The per-day and per-hour rollup of the quality report against the labels it counts, in a real PostgreSQL with the runner's
 * migrations: outcomes recorded, replaced (also concurrently), purged by retention and by a workspace's deletion,
 * and ranges whose first and last days and hours are partial. The rollup's answer must equal the labels' exactly.
 */

const DAY = 86_400_000;
const START = Date.UTC(2030, 5, 1);
const NOW = new Date(START + 6 * DAY);

const database = useMigratedDatabase('runner_quality_rollups', decisionRunner.database, 6);
let db: DataSource;
let outcomes: OutcomesService;
let quality: QualityService;

const schema = normalizeSchema({
  state: { type: 'text' },
  questions: [
    { key: 'intent', kind: 'choice', instructions: 'What is wanted?', options: [{ value: 'refund' }, { value: 'exchange' }] },
    { key: 'urgency', kind: 'score', instructions: 'How upset?', levels: ['calm', 'annoyed', 'furious'] },
    { key: 'fraud', kind: 'probability', instructions: 'Judge it.', criterion: 'Fraud' },
  ],
  settings: { confidenceSource: 'tokens' },
  fallbackAction: 'escalate',
});

let seed = 11;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

beforeAll(async () => {
  db = database.dataSource;
  const versions = new VersionCache(db);
  outcomes = new OutcomesService(new ExecutionStore(db), versions);
  quality = new QualityService(DecisionStore.of(db), new QualityStore(db), NO_LEDGER, versions, new LabLimits(db), new LabPool(1), new LabGate(1));
  for (const [id, workspace] of [
    ['dec_r', 'ws_r'],
    ['dec_gone', 'ws_gone'],
  ]) {
    await db.query(
      `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled) VALUES ($1, $2, 'r', 'R', $3, 1, 1, true)`,
      [id, workspace, schema],
    );
    await db.query(`INSERT INTO decision_versions (decision_id, version, schema) VALUES ($1, 1, $2)`, [id, schema]);
  }
});

/** An execution with drawn distributions (token probabilities for some), `hours` after START. */
async function execution(id: string, hours: number, workspace = 'ws_r', decision = 'dec_r'): Promise<void> {
  const p = 0.3 + random() * 0.7;
  const l = random();
  const model = {
    intent: { refund: p, exchange: 1 - p, other: 0 },
    urgency: { calm: (1 - l) / 2, annoyed: l, furious: (1 - l) / 2 },
    fraud: { yes: random(), no: 0 },
  };
  model.fraud.no = 1 - model.fraud.yes;
  const distributions = random() < 0.5 ? { model } : { model, tokens: { intent: { refund: p * p, exchange: 1 - p * p, other: 0 } } };
  await db.query(
    `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, action, distributions, created_at)
     VALUES ($1, $2, $3, 'r', 1, 'api', 'success', 'req_r', true, $4, $5, $6)`,
    [id, workspace, decision, pick(['continue', 'block']), distributions, new Date(START + hours * 3_600_000)],
  );
}

/** A drawn outcome: some answers, sometimes the action. */
function outcome(): { answers: Record<string, string | boolean>; action?: string } {
  const answers: Record<string, string | boolean> = {};
  if (random() < 0.8) answers.intent = pick(['refund', 'exchange', 'other']);
  if (random() < 0.6) answers.urgency = pick(['calm', 'annoyed', 'furious']);
  if (random() < 0.7) answers.fraud = random() < 0.5;
  return random() < 0.7 || Object.keys(answers).length === 0 ? { answers, action: pick(['continue', 'block', 'escalate']) } : { answers };
}

const record = (id: string, workspaceId = 'ws_r') => outcomes.record({ workspaceId, executionId: id, body: outcome() });

/**
 * Ranges over the six days: unbounded, whole days, partial days with whole hours, short and long partial hours,
 * within one day, one hour, across two days.
 */
const RANGES: Array<[string | null, string | null]> = [
  [null, null],
  ['2030-06-02', '2030-06-04'],
  ['2030-06-02', null],
  [null, '2030-06-03'],
  ['2030-06-01T20:30:00Z', '2030-06-04T03:15:00Z'],
  ['2030-06-01T02:00:00Z', '2030-06-04T21:45:00Z'],
  ['2030-06-02T03:00:00Z', '2030-06-02T07:00:00Z'],
  ['2030-06-02T01:00:00Z', '2030-06-02T23:00:00Z'],
  ['2030-06-02T22:00:00Z', '2030-06-03T02:00:00Z'],
  ['2030-06-03T10:00:00Z', null],
  [null, '2030-06-03T13:00:00Z'],
  ['2030-06-02T20:10:00Z', '2030-06-04T03:50:00Z'],
  ['2030-06-01T20:50:00Z', '2030-06-02T20:20:00Z'],
  ['2030-06-02T20:05:00Z', '2030-06-02T20:55:00Z'],
  ['2030-06-02T20:15:00Z', '2030-06-02T20:30:00Z'],
  ['2030-06-05', '2030-06-04'],
];

const date = (value: string | null) => (value === null ? null : new Date(value));

/** The cells from the rollup and from the labels alone, for every range, and the reports built from them. */
async function expectRollupEqualsLabels(decision = 'dec_r'): Promise<number> {
  let labelled = 0;
  for (const [from, to] of RANGES) {
    const rolled = await quality.cells(decision, 1, date(from), date(to));
    const direct = await quality.cells(decision, 1, date(from), date(to), false);
    expect({ from, to, cells: rolled }).toEqual({ from, to, cells: direct });
    if (from === null && to === null) labelled = direct.reduce((total, cell) => total + cell.count, 0);
  }
  const report = (from: string | undefined) => quality.report({ workspaceId: 'ws_r', decisionId: 'dec_r', version: '1', from, to: undefined });
  if (decision === 'dec_r') expect(await report('2030-06-02T05:00:00Z')).toBeTruthy();
  // No cell is left at zero: a subtracted label leaves nothing behind.
  const [{ zero }] = (await db.query('SELECT count(*)::int AS zero FROM quality_rollups WHERE count = 0')) as [{ zero: number }];
  expect(zero).toBe(0);
  return labelled;
}

/** The report's former query: float sums straight over the labels, what the report answered before the rollup. */
async function formerCells(from: Date, to: Date): Promise<QualityCell[]> {
  return (await db.query(
    `SELECT question, kind, source,
            CASE WHEN predicted IS NULL THEN NULL ELSE least(floor(predicted * 10), 9)::int END AS bin,
            CASE WHEN confidence IS NULL THEN NULL ELSE least(floor(confidence * 20), 19)::int END AS step,
            count(*)::int AS count, coalesce(sum(predicted), 0)::float8 AS predicted,
            (count(*) FILTER (WHERE observed))::int AS observed, (count(*) FILTER (WHERE correct))::int AS correct,
            coalesce(sum((predicted - observed::int) ^ 2) FILTER (WHERE kind = 'probability'), 0)::float8 AS brier,
            coalesce(sum(-ln(CASE WHEN observed THEN least(greatest(predicted, 1e-6), 1 - 1e-6)
                                  ELSE 1 - least(greatest(predicted, 1e-6), 1 - 1e-6) END)) FILTER (WHERE kind = 'probability'), 0)::float8 AS log_loss
       FROM quality_labels WHERE decision_id = 'dec_r' AND version = 1 AND executed_at >= $1 AND executed_at < $2
      GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
    [from, to],
  )) as QualityCell[];
}

describe('the quality rollup', () => {
  const ids: string[] = [];

  it('equals the labels after outcomes are recorded, over whole days and partial ones', async () => {
    for (let i = 0; i < 160; i++) {
      const id = `exec_r${String(i).padStart(4, '0')}`;
      ids.push(id);
      // Spread over five days, some at the very start of a day, a fifth within one hour (20:00 on the second day).
      await execution(id, i % 17 === 0 ? 24 * (i % 5) : i % 5 === 1 ? 44 + random() : random() * 5 * 24);
      await record(id);
    }
    expect(await expectRollupEqualsLabels()).toBeGreaterThan(400);
    // Both sources are rolled up: the tokens cells exist and match.
    const [{ tokens }] = (await db.query(`SELECT sum(count)::int AS tokens FROM quality_rollups WHERE source = 'tokens'`)) as [{ tokens: number }];
    expect(tokens).toBeGreaterThan(0);
  });

  it('answers what the former float query answered over the labels, to the last figures', async () => {
    const rolled = await quality.cells('dec_r', 1, null, null);
    const former = await formerCells(new Date(0), new Date('9999-12-31T00:00:00Z'));
    expect(rolled.map(({ predicted: _p, brier: _b, log_loss: _l, ...counts }) => counts)).toEqual(
      former.map(({ predicted: _p, brier: _b, log_loss: _l, ...counts }) => counts),
    );
    rolled.forEach((cell, i) => {
      expect(cell.predicted).toBeCloseTo(former[i]!.predicted, 10);
      expect(cell.brier).toBeCloseTo(former[i]!.brier, 10);
      expect(cell.log_loss).toBeCloseTo(former[i]!.log_loss, 10);
    });
  });

  it('follows replaced outcomes, also when many are replaced at once', async () => {
    for (const id of ids.filter((_, i) => i % 3 === 0)) await record(id);
    await expectRollupEqualsLabels();
    // Replacements racing on the same days' cells: the day locks order them, none deadlocks, and nothing drifts.
    const results = await Promise.allSettled(ids.filter((_, i) => i % 2 === 1).map((id) => record(id)));
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    await expectRollupEqualsLabels();
  });

  it('follows the retention purge, which cuts a day in two', async () => {
    const before = await expectRollupEqualsLabels();
    // Kept: 5 days before NOW = START + 1 day, and a cutoff inside the second day by moving NOW 10 hours on.
    const retention = new ExecutionRetention(db, { retentionDays: async (wss) => Object.fromEntries(wss.map((ws) => [ws, 5])) }, runnerConfig, silent);
    const purged = await retention.purge(new Date(NOW.getTime() + 10 * 3_600_000));
    expect(purged!.deleted).toBeGreaterThan(0);
    const after = await expectRollupEqualsLabels();
    expect(after).toBeLessThan(before);
    const [{ first }] = (await db.query(`SELECT min(bucket) AS first FROM quality_rollups WHERE decision_id = 'dec_r' AND grain = 86400`)) as [{ first: Date }];
    expect(first).toEqual(new Date('2030-06-02T00:00:00Z'));
  });

  it('follows a workspace’s deletion', async () => {
    for (let i = 0; i < 10; i++) {
      await execution(`exec_g${i}`, random() * 48, 'ws_gone', 'dec_gone');
      await record(`exec_g${i}`, 'ws_gone');
    }
    expect(await expectRollupEqualsLabels('dec_gone')).toBeGreaterThan(0);
    // What a workspace's deletion does to its executions; the labels go with them and the rollup follows.
    await db.query(`DELETE FROM executions WHERE workspace_id = 'ws_gone'`);
    expect(await db.query(`SELECT 1 FROM quality_rollups WHERE decision_id = 'dec_gone'`)).toEqual([]);
    expect(await expectRollupEqualsLabels()).toBeGreaterThan(0);
  });

  it('is backfilled from the labels by its migration', async () => {
    const rows = async () =>
      db.query(`SELECT decision_id, version, grain, bucket, question, kind, source, bin, step, count, observed, correct,
                     trim_scale(predicted) AS predicted, trim_scale(brier) AS brier, trim_scale(log_loss) AS log_loss
                FROM quality_rollups ORDER BY decision_id, version, grain, bucket, question, kind, source, bin, step`);
    const kept = await rows();
    expect(kept.length).toBeGreaterThan(0);
    const runner = db.createQueryRunner();
    try {
      const migration = new QualityRollups1796120000000();
      await migration.down(runner);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    expect(await rows()).toEqual(kept);
    await expectRollupEqualsLabels();
  });

  it('refuses to update a label in place, which would bypass the rollup', async () => {
    await expect(db.query(`UPDATE quality_labels SET correct = NOT correct WHERE execution_id = $1`, [ids.at(-1)])).rejects.toThrow(/never updated/);
  });
});

const runnerConfig = runnerTestConfig();
const silent = createLogger('decision-runner', 'silent');

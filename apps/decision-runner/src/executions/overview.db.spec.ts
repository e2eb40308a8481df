import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Evaluation } from '@ds/decision-schema';
import { createLogger } from '@ds/platform';
import { decisionRunner } from '../main';
import { RollupShards1796230000000 } from '../migrations/1796230000000-rollup-shards';
import { RuleRollups1796330000000 } from '../migrations/1796330000000-rule-rollups';
import { ExecutionRetention } from '../retention/execution-retention';
import { ExecutionBase, ExecutionRecorder, successRow } from './execution-recorder';
import { INSERT_EXECUTIONS, insertParameters } from './execution.store';
import { OverviewQuery } from './overview.query';
import { ROLLUP_READS, rollupStatements } from './rollups';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { writeGeneratedExecutions } from '../../../../test/support/generated-executions';
import { runnerTestConfig } from '../../../../test/support/service-configs';
import { ExecutionStore } from './execution.store';
import { DecisionStore } from '../decisions/decision.store';

/** Rollups written with the executions, read back as the overview, against a real PostgreSQL. */
const database = useMigratedDatabase('runner_overview', decisionRunner.database, 4);
let db: DataSource;
let recorder: ExecutionRecorder;
let overviews: OverviewQuery;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

beforeAll(async () => {
  db = database.dataSource;
  recorder = new ExecutionRecorder(db);
  overviews = new OverviewQuery(DecisionStore.of(db), new ExecutionStore(db));
  for (const [workspace, id, slug] of [
    ['ws_live', 'dec_live', 'triage'],
    ['ws_bulk', 'dec_bulk', 'bulk'],
    ['ws_shards', 'dec_shards', 'sharded'],
    ['ws_rules', 'dec_rules', 'ruled'],
  ]) {
    await db.query(`INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision) VALUES ($1, $2, $3, $3, '{}', 1)`, [id, workspace, slug]);
  }
});

function base(n: number): ExecutionBase {
  return {
    id: `exe_live_${n}`,
    workspaceId: 'ws_live',
    decisionId: 'dec_live',
    decisionSlug: 'triage',
    version: 1,
    source: n % 4 === 0 ? 'playground' : 'api',
    requestId: `req_${n}`,
    livemode: n % 4 !== 0,
    input: null,
  };
}

const ACTIONS = ['continue', 'block', 'escalate', 'fallback'] as const;
const REASONS = [{ type: 'default' }, { type: 'policy', rule: 1 }, { type: 'policy', rule: 0 }, { type: 'low_confidence', question: 'intent' }];

function evaluation(n: number): Evaluation {
  return {
    result: { intent: 'refund' },
    confidence: { intent: (n % 10) / 10 + 0.05 },
    probabilities: {},
    recorded: {},
    action: ACTIONS[n % 4],
    action_reason: REASONS[n % 4],
  } as unknown as Evaluation;
}

interface Counted {
  livemode: boolean;
  action: string | null;
  status: string;
  runs: number;
}

async function executionCounts(workspaceId: string): Promise<Counted[]> {
  return (await db.query(`SELECT livemode, action, status, count(*)::int AS runs FROM executions WHERE workspace_id = $1 GROUP BY 1, 2, 3`, [
    workspaceId,
  ])) as Counted[];
}

function expectSameCounts(overview: Awaited<ReturnType<OverviewQuery['overview']>>, counted: Counted[]): void {
  for (const kind of ['live', 'test'] as const) {
    const rows = counted.filter((row) => row.livemode === (kind === 'live'));
    const byAction: Record<string, number> = {};
    for (const row of rows) if (row.status === 'success') byAction[row.action!] = (byAction[row.action!] ?? 0) + row.runs;
    expect(overview.totals[kind].runs).toBe(rows.reduce((sum, row) => sum + row.runs, 0));
    expect(overview.totals[kind].errors).toBe(rows.filter((row) => row.status === 'error').reduce((sum, row) => sum + row.runs, 0));
    expect(overview.totals[kind].by_action).toEqual(byAction);
    const timelineRuns = overview.timeline.reduce((sum, point) => sum + point[kind].runs, 0);
    expect(timelineRuns).toBe(overview.totals[kind].runs);
  }
}

describe('decision overview', () => {
  it('counts what the run path wrote, batch by batch: runs by action, errors, fallbacks, latency, tokens, confidence', async () => {
    const records: Array<Promise<void>> = [];
    for (let n = 0; n < 300; n += 1) {
      records.push(
        n % 10 === 9
          ? recorder.recordError(base(n), new ServiceError('INVALID_STATE', 'no'))
          : recorder.recordSuccess(base(n), evaluation(n), { latency_ms: 100 + n, input_tokens: 10, output_tokens: 2, estimated_cost_usd: 0.5 }, null, true),
      );
      // Several batches, so that rollup rows are added to, not only created.
      if (n % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(records);

    const overview = await overviews.overview({ workspaceId: 'ws_live', decision: 'triage', from: new Date(Date.now() - HOUR).toISOString() });
    expect(overview.bucket_seconds).toBe(60);
    expectSameCounts(overview, await executionCounts('ws_live'));
    const successes = 270;
    const live = overview.totals.live;
    const test = overview.totals.test;
    expect(live.input_tokens + test.input_tokens).toBe(10 * successes);
    expect(live.cost_usd + test.cost_usd).toBeCloseTo(0.5 * successes, 6);
    // low_confidence (n % 4 === 3) is the only fallback reason written.
    const [fallbacks] = (await db.query(
      `SELECT count(*)::int AS n FROM executions WHERE workspace_id = 'ws_live' AND action_reason->>'type' = 'low_confidence'`,
    )) as Array<{ n: number }>;
    expect(live.fallbacks + test.fallbacks).toBe(fallbacks!.n);
    // Latencies run from 100 to 399 ms: both percentiles fall inside.
    expect(live.latency_p50_ms).toBeGreaterThanOrEqual(200);
    expect(live.latency_p50_ms).toBeLessThanOrEqual(300);
    expect(live.latency_p95_ms).toBeGreaterThan(live.latency_p50_ms!);
    expect(live.latency_p95_ms).toBeLessThanOrEqual(400);
    const confidenceRuns = [...overview.confidence.live, ...overview.confidence.test].flatMap((question) => question.bins).reduce((a, b) => a + b, 0);
    expect(confidenceRuns).toBe(successes);
    // Every fourth run (n % 4 === 0) is a playground run answered by default.
    expect(overview.reasons.live.map((reason) => reason.reason).sort()).toEqual(['low_confidence:intent', 'policy:0', 'policy:1']);
    expect(overview.reasons.test).toEqual([{ reason: 'default', runs: 75 }]);
  });

  it('answers the same counts as the execution log over 30 days of generated traffic, from day rollups, and over 7 days from hour rollups', async () => {
    const now = new Date();
    await writeGeneratedExecutions(db, {
      workspaceId: 'ws_bulk',
      decisionId: 'dec_bulk',
      first: 1,
      count: 5_000,
      from: new Date(now.getTime() - 29 * DAY),
      to: now,
    });
    const overview = await overviews.overview({ workspaceId: 'ws_bulk', decision: 'dec_bulk', from: new Date(now.getTime() - 30 * DAY).toISOString() }, now);
    expect(overview.bucket_seconds).toBe(86400);
    expectSameCounts(overview, await executionCounts('ws_bulk'));
    const week = await overviews.overview({ workspaceId: 'ws_bulk', decision: 'dec_bulk', from: new Date(now.getTime() - 7 * DAY).toISOString() }, now);
    expect(week.bucket_seconds).toBe(10800);
    const [lastWeek] = (await db.query(`SELECT count(*)::int AS n FROM executions WHERE workspace_id = 'ws_bulk' AND created_at >= $1`, [
      new Date(week.from),
    ])) as Array<{ n: number }>;
    expect(week.totals.live.runs + week.totals.test.runs).toBe(lastWeek!.n);
    expect(overview.confidence.live.map((question) => question.question)).toEqual(['intent', 'urgency']);
  });

  it('refuses a range it cannot draw and a decision of another workspace', async () => {
    await expect(overviews.overview({ workspaceId: 'ws_live', decision: 'triage', from: 'soon' })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(overviews.overview({ workspaceId: 'ws_bulk', decision: 'triage' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('drops rollups with the executions retention removes, and minute rollups after two days', async () => {
    const now = new Date();
    const old = { workspaceId: 'ws_bulk', decisionId: 'dec_bulk', first: 100_000, count: 200 };
    await writeGeneratedExecutions(db, { ...old, from: new Date(now.getTime() - 50 * DAY), to: new Date(now.getTime() - 45 * DAY) });
    const rollups = async (where: string): Promise<number> => {
      const [row] = (await db.query(
        `SELECT coalesce(sum(runs), 0)::int AS n FROM ${ROLLUP_READS.counts} WHERE workspace_id = 'ws_bulk' AND ${where}`,
      )) as Array<{
        n: number;
      }>;
      return row!.n;
    };
    expect(await rollups(`grain = 3600 AND bucket < now() - interval '40 days'`)).toBe(200);
    const retention = new ExecutionRetention(
      db,
      { retentionDays: async (ids) => Object.fromEntries(ids.map((id) => [id, 40])) },
      runnerTestConfig(),
      createLogger('decision-runner', 'silent'),
    );
    await retention.purge(now);
    expect(await rollups(`bucket < now() - interval '40 days'`)).toBe(0);
    expect(await rollups(`grain = 60 AND bucket < now() - interval '49 hours'`)).toBe(0);
    // What the log keeps is still counted, at both grains where they apply.
    const [kept] = (await db.query(`SELECT count(*)::int AS n FROM executions WHERE workspace_id = 'ws_bulk'`)) as Array<{ n: number }>;
    expect(await rollups('grain = 3600')).toBe(kept!.n);
    expect(await rollups('grain = 60')).toBeGreaterThan(0);
  });

  it('lets two runner replicas add runs of the same minute at once, each to its own rollup shard, and counts both', async () => {
    const row = (n: number) =>
      successRow(
        { ...base(n), id: `exe_shard_${n}`, workspaceId: 'ws_shards', decisionId: 'dec_shards', decisionSlug: 'sharded', livemode: true },
        evaluation(n),
        { latency_ms: 50, input_tokens: 3, output_tokens: 1, estimated_cost_usd: 0.25 },
        null,
        true,
        null,
      );
    const connect = async () => {
      const runner = db.createQueryRunner();
      await runner.connect();
      return runner;
    };
    const [first, second, third] = await Promise.all([connect(), connect(), connect()]);
    try {
      // The first replica's batch has added to its shard's rows and not committed yet.
      await first.query('BEGIN');
      await first.query(INSERT_EXECUTIONS.text, insertParameters([row(1)], 1));
      // A wait for a row lock fails this statement instead of hanging the test.
      await second.query("SET lock_timeout = '5s'");
      await expect(second.query(INSERT_EXECUTIONS.text, insertParameters([row(2)], 2))).resolves.toBeDefined();
      // The same shard does wait: that wait is what the shards take off the run path.
      await third.query("SET lock_timeout = '200ms'");
      await expect(third.query(INSERT_EXECUTIONS.text, insertParameters([row(3)], 1))).rejects.toMatchObject({ code: '55P03' });
      await first.query('COMMIT');
    } finally {
      await Promise.all([first.release(), second.release(), third.release()]);
    }
    // A runner of the previous version, still serving during a rolling update, writes the unsharded tables.
    const previousVersion = INSERT_EXECUTIONS.text.replace(rollupStatements('written', '$23::smallint'), rollupStatements('written', null));
    expect(previousVersion).not.toBe(INSERT_EXECUTIONS.text);
    await db.query(previousVersion, insertParameters([row(4)]).slice(0, -1));

    const overview = await overviews.overview({ workspaceId: 'ws_shards', decision: 'sharded', from: new Date(Date.now() - HOUR).toISOString() });
    expect(overview.totals.live.runs).toBe(3);
    expect(overview.totals.live.input_tokens).toBe(9);
    expect(overview.totals.live.cost_usd).toBeCloseTo(0.75, 6);
    expect(overview.totals.live.by_action).toEqual({ block: 1, escalate: 1, continue: 1 });
    const shards = (await db.query(
      `SELECT DISTINCT shard FROM execution_rollup_shards WHERE workspace_id = 'ws_shards'
       UNION SELECT DISTINCT shard FROM execution_histogram_shards WHERE workspace_id = 'ws_shards' ORDER BY 1`,
    )) as Array<{ shard: number }>;
    expect(shards.map((found) => found.shard)).toEqual([1, 2]);
  });

  it('folds the shards into the unsharded rollups when its migration is reverted, and counts the same after it runs again', async () => {
    const totals = async () =>
      db.query(`SELECT (SELECT sum(runs)::int FROM ${ROLLUP_READS.counts}) AS runs, (SELECT sum(cost_usd)::float8 FROM ${ROLLUP_READS.counts}) AS cost,
                       (SELECT sum(runs)::int FROM ${ROLLUP_READS.histograms}) AS binned`);
    const before = await totals();
    // Runs 1, 2 (shards 1 and 2) and 4 (unsharded) took the same minute's latency bin: one row once folded.
    const latencyRows = async (table: string) =>
      (
        (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = 'ws_shards' AND grain = 60 AND metric = 'latency'`)) as Array<{
          n: number;
        }>
      )[0]!.n;
    expect(await latencyRows('execution_histogram_shards')).toBe(2);
    const runner = db.createQueryRunner();
    try {
      const migration = new RollupShards1796230000000();
      await migration.down(runner);
      expect(await latencyRows('execution_histograms')).toBe(1);
      const [folded] = (await db.query(
        `SELECT (SELECT sum(runs)::int FROM execution_rollups) AS runs, (SELECT sum(cost_usd)::float8 FROM execution_rollups) AS cost,
                (SELECT sum(runs)::int FROM execution_histograms) AS binned`,
      )) as unknown[];
      expect(folded).toEqual((before as unknown[])[0]);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    expect(await totals()).toEqual(before);
    const overview = await overviews.overview({ workspaceId: 'ws_shards', decision: 'sharded', from: new Date(Date.now() - HOUR).toISOString() });
    expect(overview.totals.live.runs).toBe(3);
  });
  it('counts a policy rule per version, named from that version, and shows what a runner of the previous version wrote without one', async () => {
    const refund = { when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' }, and: [], action: 'block' };
    const angry = {
      when: { on: 'answer', question: 'intent', op: 'eq', value: 'billing' },
      and: [{ on: 'confidence', question: 'intent', op: 'gte', value: 0.6 }],
      action: 'escalate',
    };
    // Rule 0 of v3 is the refund rule; v4 inserted another rule at the top, so its rule 0 is another rule.
    await db.query(`INSERT INTO decision_versions (decision_id, version, schema) VALUES ('dec_rules', 3, $1), ('dec_rules', 4, $2)`, [
      JSON.stringify({ policies: [refund] }),
      JSON.stringify({ policies: [angry, refund] }),
    ]);
    const run = (n: number, version: number, rule: number) =>
      recorder.recordSuccess(
        { ...base(n), id: `exe_rules_${n}`, workspaceId: 'ws_rules', decisionId: 'dec_rules', decisionSlug: 'ruled', version, source: 'api', livemode: true },
        { ...evaluation(n), action: 'block', action_reason: { type: 'policy', rule } } as unknown as Evaluation,
        { latency_ms: 10, input_tokens: 1, output_tokens: 1, estimated_cost_usd: 0 },
        null,
        true,
      );
    await Promise.all([
      ...Array.from({ length: 4 }, (_, n) => run(n, 3, 0)),
      ...Array.from({ length: 6 }, (_, n) => run(10 + n, 4, 0)),
      ...Array.from({ length: 2 }, (_, n) => run(20 + n, 4, 1)),
    ]);
    // Two runs counted as a runner of the previous version counts them: in the count rollups only.
    await db.query(
      `INSERT INTO execution_rollup_shards (workspace_id, decision_id, grain, bucket, livemode, source, status, action, reason, shard, runs, input_tokens, output_tokens, cost_usd)
       VALUES ('ws_rules', 'dec_rules', 60, date_trunc('minute', now()), true, 'api', 'success', 'block', 'policy:0', 9, 2, 0, 0, 0)`,
    );
    const read = () => overviews.overview({ workspaceId: 'ws_rules', decision: 'ruled', from: new Date(Date.now() - HOUR).toISOString() });
    const expected = [
      { reason: 'policy:0', runs: 6, version: 4, rule_summary: 'intent = billing and confidence(intent) ≥ 0.6 → escalate' },
      { reason: 'policy:0', runs: 4, version: 3, rule_summary: 'intent = refund → block' },
      { reason: 'policy:0', runs: 2 },
      { reason: 'policy:1', runs: 2, version: 4, rule_summary: 'intent = refund → block' },
    ];
    expect((await read()).reasons.live).toEqual(expected);
    expect((await read()).totals.live.runs).toBe(14);

    // The migration fills the rule rollups from the execution log: reverted and run again, the same reasons.
    const runner = db.createQueryRunner();
    try {
      const migration = new RuleRollups1796330000000();
      await migration.down(runner);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    expect((await read()).reasons.live).toEqual(expected);
  });
});

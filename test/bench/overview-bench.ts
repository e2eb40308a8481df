import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Evaluation } from '@ds/decision-schema';
import { createLogger, dataSourceOptions } from '@ds/platform';
import { singleKeyring } from '@ds/sealing';
import { DEV_RUNNER_SECRETS_KEY } from '../../apps/decision-runner/src/config';
import { ExecutionRetention } from '../../apps/decision-runner/src/retention/execution-retention';
import { decisionRunner } from '../../apps/decision-runner/src/main';
import { ExecutionBase, ExecutionRecorder } from '../../apps/decision-runner/src/executions/execution-recorder';
import { OverviewQuery } from '../../apps/decision-runner/src/executions/overview.query';
import { writeGeneratedExecutions } from '../support/generated-executions';
import { migratedDatabase } from '../support/service-database';
import { intEnv, percentile, say } from './bench-support';
import { ExecutionStore } from '../../apps/decision-runner/src/executions/execution.store';
import { DecisionStore } from '../../apps/decision-runner/src/decisions/decision.store';

/**
 * `npm run bench:overview`: loads BENCH_EXECUTIONS (default 1,000,000) executions of one decision, spread over 30
 * days, into a fresh database with the runner's migrations and rollups, then times the overview the runner answers
 * for every range the application offers (each BENCH_REPEATS times, default 20), and what rollups cost the run
 * path's batched INSERT.
 */
const EXECUTIONS = intEnv('BENCH_EXECUTIONS', 1_000_000);
const REPEATS = intEnv('BENCH_REPEATS', 20);
/** Rows per loading statement: short enough to stay under the statement timeout on a busy machine. */
const CHUNK = 10_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Set to a database an earlier run kept (BENCH_KEEP_DATABASE=1 prints it) to time the reads again without loading. */
const REUSE_URL = process.env.BENCH_DATABASE_URL;
const KEEP = process.env.BENCH_KEEP_DATABASE === '1';

async function open(): Promise<{ db: DataSource; done: () => Promise<void>; fresh: boolean }> {
  if (REUSE_URL) {
    const db = new DataSource(dataSourceOptions(REUSE_URL, decisionRunner.database, 4));
    await db.initialize();
    return { db, done: () => db.destroy(), fresh: false };
  }
  const database = await migratedDatabase('overview_bench', decisionRunner.database, 4);
  if (KEEP) say(`database kept: BENCH_DATABASE_URL=${database.url}`);
  return { db: database.dataSource, done: () => (KEEP ? database.dataSource.destroy() : database.drop()), fresh: true };
}

async function load(db: DataSource, now: Date): Promise<void> {
  await db.query(`INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision) VALUES ('dec_bench', 'ws_bench', 'bench', 'bench', '{}', 1)`);
  const loadStarted = performance.now();
  for (let first = 0; first < EXECUTIONS; first += CHUNK) {
    const count = Math.min(CHUNK, EXECUTIONS - first);
    // Chunk i covers its own slice of the 30 days, so the table grows in time order as a real log does.
    const from = new Date(now.getTime() - 30 * DAY + (first / EXECUTIONS) * 30 * DAY);
    const to = new Date(now.getTime() - 30 * DAY + ((first + count) / EXECUTIONS) * 30 * DAY);
    await writeGeneratedExecutions(db, { workspaceId: 'ws_bench', decisionId: 'dec_bench', first, count, from, to });
  }
  say(`loaded ${EXECUTIONS} executions in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
  // The purge round keeps minute rollups for two days only, as it does in service; no workspace's retention applies.
  const retention = new ExecutionRetention(
    db,
    { retentionDays: async () => ({}) },
    {
      appUrl: '',
      executionPurgeIntervalMs: 0,
      allowPrivateTargets: false,
      secretsKeys: singleKeyring(DEV_RUNNER_SECRETS_KEY),
      secretsKeyIsDev: true,
      redisUrl: null,
      billingLeases: false,
      labWorkers: 1,
      labDbConnections: 1,
    },
    createLogger('decision-runner', 'silent'),
  );
  await retention.purge(now);
  await db.query('VACUUM ANALYZE');
}

async function main(): Promise<void> {
  const { db, done, fresh } = await open();
  try {
    const [latest] = (await db.query(`SELECT coalesce(max(created_at), now()) AS at FROM executions WHERE workspace_id = 'ws_bench'`)) as Array<{ at: Date }>;
    const now = fresh ? new Date() : new Date(latest!.at);
    if (fresh) await load(db, now);
    const [sizes] = (await db.query(
      `SELECT (SELECT count(*) FROM executions)::int AS executions, (SELECT count(*) FROM execution_rollup_totals)::int AS rollups,
              (SELECT count(*) FROM execution_histogram_totals)::int AS histograms`,
    )) as Array<{ executions: number; rollups: number; histograms: number }>;
    say(`${sizes!.executions} executions: ${sizes!.rollups} rollup rows, ${sizes!.histograms} histogram rows`);

    const overviews = new OverviewQuery(DecisionStore.of(db), new ExecutionStore(db));
    const ranges: Array<[string, number]> = [
      ['last hour', HOUR],
      ['last day', DAY],
      ['last 7 days', 7 * DAY],
      ['last 30 days', 30 * DAY],
    ];
    say("overview (the runner's answer to GET /app/v1/workspaces/{ws}/decisions/{id}/overview), ms:");
    for (const [name, span] of ranges) {
      const times: number[] = [];
      let runs = 0;
      for (let i = 0; i < REPEATS + 2; i += 1) {
        const started = performance.now();
        const answer = await overviews.overview(
          { workspaceId: 'ws_bench', decision: 'bench', from: new Date(now.getTime() - span).toISOString(), to: now.toISOString() },
          now,
        );
        // The first two warm the prepared statements and caches.
        if (i >= 2) times.push(performance.now() - started);
        runs = answer.totals.live.runs + answer.totals.test.runs;
      }
      times.sort((a, b) => a - b);
      say(
        `  ${name.padEnd(13)} runs ${String(runs).padStart(8)}  p50 ${percentile(times, 50).toFixed(1)}  p95 ${percentile(times, 95).toFixed(1)}  max ${times.at(-1)!.toFixed(1)}`,
      );
    }

    const recorder = new ExecutionRecorder(db);
    const evaluation = {
      result: { intent: 'refund' },
      confidence: { intent: 0.8, urgency: 0.6 },
      probabilities: {},
      action: 'escalate',
      action_reason: { type: 'policy', rule: 0 },
      recorded: { intent: { refund: 0.8, exchange: 0.2 }, urgency: { calm: 0.6, annoyed: 0.4 } },
    } as unknown as Evaluation;
    const base = (n: number): ExecutionBase => ({
      id: `exe_rec_${n}`,
      workspaceId: 'ws_bench',
      decisionId: 'dec_bench',
      decisionSlug: 'bench',
      version: 1,
      source: 'api',
      requestId: `req_${n}`,
      livemode: true,
      input: null,
    });
    const batches = 40;
    const batchTimes: number[] = [];
    for (let batch = 0; batch < batches; batch += 1) {
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 256 }, (_, i) => {
          const n = batch * 256 + i;
          return n % 20 === 0
            ? recorder.recordError(base(n), new ServiceError('INVALID_STATE', 'no'))
            : recorder.recordSuccess(base(n), evaluation, { latency_ms: 120, input_tokens: 240, output_tokens: 20, estimated_cost_usd: 0.00024 }, null, true);
        }),
      );
      batchTimes.push(performance.now() - started);
    }
    batchTimes.sort((a, b) => a - b);
    say(
      `run path: a 256-row execution INSERT with its rollups, ms: p50 ${percentile(batchTimes, 50).toFixed(1)}  p95 ${percentile(batchTimes, 95).toFixed(1)}`,
    );
    if (!fresh) await db.query(`DELETE FROM executions WHERE id LIKE 'exe_rec_%'`);
  } finally {
    await done();
  }
}

main().catch((error: unknown) => {
  say(`bench:overview failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});

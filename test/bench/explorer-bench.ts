import { ListExecutionsRequest } from '@ds/contracts';
import { decisionRunner } from '../../apps/decision-runner/src/main';
import { ExecutionsQuery } from '../../apps/decision-runner/src/executions/executions.query';
import { migratedDatabase } from '../support/service-database';
import { intEnv, percentile, say } from './bench-support';
import { ExecutionStore } from '../../apps/decision-runner/src/executions/execution.store';

/**
 * `npm run bench:explorer`: loads BENCH_EXECUTIONS (default 1,000,000) executions into one workspace of a fresh
 * database with the runner's migrations — half of them replays, the rest live, test, playground and shadow runs —
 * then times the executions list's first page with its bounded count, for the filters the application offers
 * (each BENCH_REPEATS times, default 20), and prints which index each statement reads.
 */
const EXECUTIONS = intEnv('BENCH_EXECUTIONS', 1_000_000);
const REPEATS = intEnv('BENCH_REPEATS', 20);
const CHUNK = 50_000;

async function main(): Promise<void> {
  const database = await migratedDatabase('explorer_bench', decisionRunner.database, 2);
  const db = database.dataSource;
  try {
    const loadStarted = performance.now();
    for (let first = 0; first < EXECUTIONS; first += CHUNK) {
      // Sources by n % 20: 10 replays, 6 live API calls, 1 webhook call, 1 test call, 1 playground run, 1 shadow run;
      // one live run in a hundred took the fallback after an engine timeout.
      await db.query(
        `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, action, action_reason, error)
         SELECT 'exe_' || n, 'ws_bench', 'dec_bench', CASE WHEN n % 3 = 0 THEN 'other' ELSE 'bench' END, 1 + n % 4,
                CASE WHEN n % 20 < 10 THEN 'replay' WHEN n % 20 < 16 THEN 'api' WHEN n % 20 = 16 THEN 'webhook' WHEN n % 20 = 17 THEN 'api'
                     WHEN n % 20 = 18 THEN 'playground' ELSE 'shadow' END,
                CASE WHEN n % 50 = 11 THEN 'error' ELSE 'success' END, 'req_bench', n % 20 <> 17,
                CASE WHEN n % 50 = 11 THEN NULL WHEN n % 100 = 13 THEN 'fallback' ELSE (ARRAY['continue', 'block', 'escalate'])[1 + n % 3] END,
                CASE WHEN n % 50 = 11 THEN NULL WHEN n % 100 = 13 THEN '{"type":"engine_error","code":"ENGINE_TIMEOUT"}'::jsonb
                     ELSE '{"type":"default"}'::jsonb END,
                CASE WHEN n % 50 = 11 THEN '{"code":"INVALID_STATE","message":"no"}'::jsonb END
           FROM generate_series($1::int, $2::int) AS n`,
        [first, Math.min(first + CHUNK, EXECUTIONS) - 1],
      );
    }
    await db.query('VACUUM ANALYZE executions');
    say(`loaded ${EXECUTIONS.toLocaleString('en-US')} executions in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

    const executions = new ExecutionsQuery(new ExecutionStore(db));
    const base: ListExecutionsRequest = { workspaceId: 'ws_bench', limit: 20, cursor: null, decision: null, status: null, includeTotal: true };
    const cases: Array<[string, Partial<ListExecutionsRequest>]> = [
      ['live (the application default)', { sources: ['live'] }],
      ['every source (the public default)', { sources: null }],
      ['replay', { sources: ['replay'] }],
      ['live, one decision', { sources: ['live'], decision: 'bench' }],
      ['live and replay, action block', { sources: ['live', 'replay'], action: 'block' }],
      ['live, error code ENGINE_TIMEOUT (1 in 100)', { sources: ['live'], errorCode: 'ENGINE_TIMEOUT' }],
      ['test (1 in 20)', { sources: ['test'] }],
    ];
    say('filters | count | page + count p50 ms | p95 ms | index of the page | index of the count');
    for (const [name, filters] of cases) {
      const request = { ...base, ...filters };
      const times: number[] = [];
      let total = '';
      for (let i = 0; i < REPEATS + 2; i++) {
        const started = performance.now();
        const reply = await executions.list(request);
        // Two warm-ups, not counted.
        if (i >= 2) times.push(performance.now() - started);
        total = `${reply.total_count!.toLocaleString('en-US')}${reply.total_capped ? '+' : ''}`;
      }
      times.sort((a, b) => a - b);
      const index = async ([sql, parameters]: [string, unknown[]]) => {
        const plan = ((await db.query(`EXPLAIN ${sql}`, parameters)) as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
        return [...new Set(plan.match(/executions_[a-z_]+/g) ?? ['none (sequential scan)'])].join(', ');
      };
      say(
        `${name} | ${total} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${await index(executions.pageQuery(request).getQueryAndParameters())} | ${await index(executions.countStatement(request))}`,
      );
    }
  } finally {
    await database.drop();
  }
}

main().catch((error: unknown) => {
  say(`bench:explorer failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});

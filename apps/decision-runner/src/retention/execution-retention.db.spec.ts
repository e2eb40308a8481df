import { DataSource } from 'typeorm';
import { createLogger } from '@ds/platform';
import { decisionRunner } from '../main';
import { ExecutionRetention, RetentionSource } from './execution-retention';
import { ROLLUP_TABLES, ROLLUP_WRITES, RULE_ROLLUPS } from '../executions/rollups';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { runnerTestConfig } from '../../../../test/support/service-configs';

/** The purge against a real PostgreSQL with the runner's own migrations; only the ledger's answer is stubbed. */
const config = runnerTestConfig();
const logger = createLogger('decision-runner', 'silent');
const DAY = 86_400_000;
const NOW = new Date('2030-06-01T12:00:00Z');

const database = useMigratedDatabase('runner_retention', decisionRunner.database, 4);
let db: DataSource;

beforeAll(() => {
  db = database.dataSource;
});

/** `count` executions of one workspace, all `ageDays` old at NOW. */
async function executions(workspaceId: string, ageDays: number, count: number): Promise<void> {
  await db.query(
    `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, created_at)
     SELECT 'exe_' || md5(random()::text || n), $1, 'dec_1', 'triage', 1, 'api', 'success', 'req_1', true, $2::timestamptz
     FROM generate_series(1, $3) AS n`,
    [workspaceId, new Date(NOW.getTime() - ageDays * DAY), count],
  );
}

/** One hour rollup row, one latency histogram row and one rule row of a decision in each table, the sharded ones in shard 3. */
async function rollupRows(workspaceId: string, decisionId: string): Promise<void> {
  const bucket = new Date(NOW.getTime() - DAY);
  for (const [table, sharded] of [
    [ROLLUP_WRITES.unsharded.counts, false],
    [ROLLUP_WRITES.sharded.counts, true],
  ] as const) {
    await db.query(
      `INSERT INTO ${table} (workspace_id, decision_id, grain, bucket, livemode, source, status, action, reason, runs, input_tokens, output_tokens, cost_usd${sharded ? ', shard' : ''})
       VALUES ($1, $2, 3600, $3, true, 'api', 'success', 'reply', 'default', 5, 0, 0, 0${sharded ? ', 3' : ''})`,
      [workspaceId, decisionId, bucket],
    );
  }
  for (const [table, sharded] of [
    [ROLLUP_WRITES.unsharded.histograms, false],
    [ROLLUP_WRITES.sharded.histograms, true],
  ] as const) {
    await db.query(
      `INSERT INTO ${table} (workspace_id, decision_id, grain, bucket, livemode, metric, question, bin, runs${sharded ? ', shard' : ''})
       VALUES ($1, $2, 3600, $3, true, 'latency', '', 0, 5${sharded ? ', 3' : ''})`,
      [workspaceId, decisionId, bucket],
    );
  }
  await db.query(
    `INSERT INTO ${RULE_ROLLUPS} (workspace_id, decision_id, grain, bucket, livemode, version, rule, shard, runs) VALUES ($1, $2, 3600, $3, true, 1, 0, 3, 5)`,
    [workspaceId, decisionId, bucket],
  );
}

/** Rollup rows of a workspace, by table. */
async function rollupsOf(workspaceId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ROLLUP_TABLES) {
    const [row] = (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = $1`, [workspaceId])) as Array<{ n: number }>;
    counts[table] = row!.n;
  }
  return counts;
}

async function countOf(workspaceId: string): Promise<Record<string, number>> {
  const rows = (await db.query(
    `SELECT floor(extract(epoch FROM ($2::timestamptz - created_at)) / 86400)::int AS age, count(*)::int AS n FROM executions WHERE workspace_id = $1 GROUP BY 1`,
    [workspaceId, NOW],
  )) as Array<{ age: number; n: number }>;
  return Object.fromEntries(rows.map((row) => [`${row.age}d`, row.n]));
}

describe('execution retention purge', () => {
  it("deletes executions older than each workspace's retention, in batches, and keeps the rest", async () => {
    const asked: string[][] = [];
    const source: RetentionSource = {
      retentionDays: async (ids) => {
        asked.push(ids);
        return Object.fromEntries(ids.filter((id) => id !== 'ws_unknown').map((id) => [id, id === 'ws_genesis' ? 7 : 30]));
      },
    };
    await executions('ws_genesis', 8, 2_500);
    await executions('ws_genesis', 6, 3);
    await executions('ws_growth', 8, 4);
    await executions('ws_growth', 31, 5);
    await executions('ws_unknown', 400, 2);

    const retention = new ExecutionRetention(db, source, config, logger);
    const report = await retention.purge(NOW);

    expect(report).toEqual({ workspaces: 2, deleted: 2_505, deletedWorkspaceRollups: 0 });
    expect(asked).toEqual([['ws_genesis', 'ws_growth', 'ws_unknown']]);
    expect(await countOf('ws_genesis')).toEqual({ '6d': 3 });
    expect(await countOf('ws_growth')).toEqual({ '8d': 4 });
    // No answer from the ledger for a workspace: nothing of it is deleted.
    expect(await countOf('ws_unknown')).toEqual({ '400d': 2 });
  });

  it('lets one replica purge at a time', async () => {
    let release: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const slowSource: RetentionSource = {
      retentionDays: async (ids) => {
        entered();
        await held;
        return Object.fromEntries(ids.map((id) => [id, 365]));
      },
    };
    const first = new ExecutionRetention(db, slowSource, config, logger).purge(NOW);
    // The first round holds the lock while it waits for the ledger.
    await inside;
    const second = await new ExecutionRetention(db, slowSource, config, logger).purge(NOW);
    release();
    expect(second).toBeNull();
    expect(await first).toEqual({ workspaces: 3, deleted: 2, deletedWorkspaceRollups: 0 });
  });

  it('deletes the rollups of workspaces with no decision left, in every rollup table, and keeps those of the rest', async () => {
    await db.query(
      `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled)
       VALUES ('dec_kept', 'ws_rollups_kept', 'kept', 'Kept', '{}'::jsonb, 1, 1, true)`,
    );
    await rollupRows('ws_rollups_kept', 'dec_kept');
    // Deleted by a runner that knew only the unsharded tables, or written by a batch committed after the deletion.
    await rollupRows('ws_rollups_deleted', 'dec_gone');
    // The ledger answers for no workspace: no execution is deleted, only rollups of deleted workspaces.
    const keepEverything: RetentionSource = { retentionDays: async () => ({}) };

    const report = await new ExecutionRetention(db, keepEverything, config, logger).purge(NOW);

    expect(report?.deletedWorkspaceRollups).toBe(1);
    const everyTable = Object.fromEntries(ROLLUP_TABLES.map((table) => [table, 1]));
    expect(await rollupsOf('ws_rollups_kept')).toEqual(everyTable);
    expect(await rollupsOf('ws_rollups_deleted')).toEqual(Object.fromEntries(ROLLUP_TABLES.map((table) => [table, 0])));
    // Nothing left to delete: the next round finds none.
    expect((await new ExecutionRetention(db, keepEverything, config, logger).purge(NOW))?.deletedWorkspaceRollups).toBe(0);
  });
});

import { DataSource } from 'typeorm';
import { createLogger } from '@ds/platform';
import { singleKeyring } from '@ds/sealing';
import { DecisionRunnerConfig, DEV_RUNNER_SECRETS_KEY } from '../config';
import { decisionRunner } from '../main';
import { ExecutionRetention, RetentionSource } from './execution-retention';
import { MigratedDatabase, migratedDatabase } from '../../../../test/support/service-database';

/** The purge against a real PostgreSQL with the runner's own migrations; only the ledger's answer is stubbed. */
const config: DecisionRunnerConfig = {
  appUrl: 'http://app.test',
  executionPurgeIntervalMs: 0,
  allowPrivateTargets: false,
  secretsKeys: singleKeyring(DEV_RUNNER_SECRETS_KEY),
  secretsKeyIsDev: true,
  redisUrl: null,
  billingLeases: false,
};
const logger = createLogger('decision-runner', 'silent');
const DAY = 86_400_000;
const NOW = new Date('2030-06-01T12:00:00Z');

let database: MigratedDatabase;
let db: DataSource;

beforeAll(async () => {
  database = await migratedDatabase('runner_retention', decisionRunner.database, 4);
  db = database.dataSource;
});

afterAll(async () => {
  await database?.drop();
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

    expect(report).toEqual({ workspaces: 2, deleted: 2_505 });
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
    expect(await first).toEqual({ workspaces: 3, deleted: 2 });
  });
});

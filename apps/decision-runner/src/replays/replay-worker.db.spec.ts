import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { NormalizedSchema, REPLAY_ENGINE_CONCURRENCY } from '@ds/decision-schema';
import { createLogger, dataSourceOptions } from '@ds/platform';
import { decisionRunner } from '../main';
import { pgPool } from '../pg-pool';
import { errorRow, executionBase, ExecutionBase } from '../executions/execution-recorder';
import { INSERT_EXECUTIONS, insertParameters } from '../executions/execution.store';
import { Executed, RunExecutor } from '../runs/run-executor';
import { ReplayWorker } from './replay-worker';
import { MigratedDatabase, migratedDatabase } from '../../../../test/support/service-database';

/**
 * Two workers on two data sources stand for two runner replicas (the lock is per session). The engine is the one
 * part stood in for: each call waits a little and answers a failure, so what is measured is how many calls the
 * workers have in flight at once across replicas.
 */
let database: MigratedDatabase;
let replicas: DataSource[] = [];

beforeAll(async () => {
  database = await migratedDatabase('runner_replay_worker', decisionRunner.database, 6);
  replicas = [database.dataSource, await new DataSource(dataSourceOptions(database.url, decisionRunner.database, 6)).initialize()];
});

afterAll(async () => {
  await replicas[1]?.destroy();
  await database?.drop();
});

/** Counts the calls in flight across every worker given it. */
class Engine {
  inFlight = 0;
  mostInFlight = 0;
  calls = 0;
  constructor(private readonly callMs: number) {}

  executor(): RunExecutor {
    return {
      execute: async (_mode: string, base: ExecutionBase): Promise<Executed> => {
        this.calls++;
        this.inFlight++;
        this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
        await new Promise((resolve) => setTimeout(resolve, this.callMs));
        this.inFlight--;
        const error = new ServiceError('ENGINE_ERROR', 'The engine failed.');
        return { status: 'failed', error, row: errorRow(base, error) };
      },
    } as unknown as RunExecutor;
  }
}

let replays = 0;

/** A running replay of `items` recorded executions of a new workspace; its id. */
async function replay(items: number): Promise<string> {
  const n = ++replays;
  const workspace = `ws_worker_${n}`;
  const decision = { id: `dec_worker_${n}`, slug: 'triage' };
  const db = replicas[0]!;
  await db.query(`INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision) VALUES ($1, $2, 'triage', 'triage', '{}', 1)`, [
    decision.id,
    workspace,
  ]);
  const originals = Array.from({ length: items }, (_, k) => {
    const base = executionBase(`exec_worker_${n}_${k + 1}`, workspace, decision, 1, 'api', `req_${n}_${k}`, true, { state: { k } });
    return errorRow(base, new ServiceError('ENGINE_ERROR', 'The engine failed.'));
  });
  await pgPool(db).query({ ...INSERT_EXECUTIONS, values: insertParameters(originals) });
  const id = `rpl_worker_${n}`;
  const schema: Partial<NormalizedSchema> = { settings: { timeoutMs: 5_000 } as NormalizedSchema['settings'] };
  await db.query(
    `INSERT INTO replays (id, workspace_id, decision_id, version, schema, selection, status) VALUES ($1, $2, $3, 1, $4, '{"last":1}', 'running')`,
    [id, workspace, decision.id, JSON.stringify(schema)],
  );
  await db.query(
    `INSERT INTO replay_items (replay_id, position, execution_id, replay_execution_id, status, old_action)
     SELECT $1, k, 'exec_worker_' || $2 || '_' || k, $1 || '_exec_' || k, 'pending', 'continue' FROM generate_series(1, $3) AS k`,
    [id, n, items],
  );
  return id;
}

async function counts(replayId: string): Promise<{ status: string; items: Record<string, number>; recorded: number }> {
  const db = replicas[0]!;
  const [row] = (await db.query(`SELECT status FROM replays WHERE id = $1`, [replayId])) as Array<{ status: string }>;
  const items = (await db.query(`SELECT status, count(*)::int AS n FROM replay_items WHERE replay_id = $1 GROUP BY status`, [replayId])) as Array<{
    status: string;
    n: number;
  }>;
  const [recorded] = (await db.query(`SELECT count(*)::int AS n FROM executions WHERE id LIKE $1 || '_exec_%'`, [replayId])) as Array<{ n: number }>;
  return { status: row!.status, items: Object.fromEntries(items.map((item) => [item.status, item.n])), recorded: recorded!.n };
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 300 && !(await condition()); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await condition()).toBe(true);
}

const logger = createLogger('test', 'silent');

describe('the replay worker', () => {
  it('runs every item once, with at most REPLAY_ENGINE_CONCURRENCY calls in flight across two replicas', async () => {
    const engine = new Engine(30);
    const workers = replicas.map((db) => new ReplayWorker(db, engine.executor(), logger));
    const replayId = await replay(12);
    workers.forEach((worker) => worker.start());
    await until(async () => (await counts(replayId)).status === 'completed');
    await Promise.all(workers.map((worker) => worker.stop()));
    expect(await counts(replayId)).toEqual({ status: 'completed', items: { failed: 12 }, recorded: 12 });
    expect(engine.calls).toBe(12);
    expect(engine.mostInFlight).toBe(REPLAY_ENGINE_CONCURRENCY);
  });

  it('when stopped, claims nothing more and records the calls in flight; the other replica takes over the rest', async () => {
    const engine = new Engine(200);
    const [first, second] = replicas.map((db) => new ReplayWorker(db, engine.executor(), logger));
    const replayId = await replay(6);
    first!.start();
    await until(async () => engine.inFlight === REPLAY_ENGINE_CONCURRENCY);
    await first!.stop();
    // Both calls in flight were recorded before the stop returned, and nothing else was claimed.
    expect(await counts(replayId)).toMatchObject({ status: 'running', items: { failed: REPLAY_ENGINE_CONCURRENCY, pending: 6 - REPLAY_ENGINE_CONCURRENCY } });
    second!.start();
    await until(async () => (await counts(replayId)).status === 'completed');
    await second!.stop();
    expect(await counts(replayId)).toEqual({ status: 'completed', items: { failed: 6 }, recorded: 6 });
    expect(engine.calls).toBe(6);
  });
});

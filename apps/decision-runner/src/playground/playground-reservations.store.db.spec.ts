import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { dataSourceOptions } from '@ds/platform';
import { decisionRunner } from '../main';
import { MigratedDatabase, migratedDatabase } from '../../../../test/support/service-database';
import { PLAYGROUND_RUNS_PER_DAY, PLAYGROUND_RUNS_PER_MINUTE } from './playground-limits';
import { PlaygroundReservations } from './playground-reservations.store';

/** The playground's windows with two runner replicas: two pools against one real PostgreSQL database. */

let database: MigratedDatabase;
let second: DataSource;
let replicas: PlaygroundReservations[];

beforeAll(async () => {
  database = await migratedDatabase('runner_playground', decisionRunner.database, 8);
  second = new DataSource(dataSourceOptions(database.url, decisionRunner.database, 8));
  await second.initialize();
  replicas = [new PlaygroundReservations(database.dataSource), new PlaygroundReservations(second)];
});

afterAll(async () => {
  if (second?.isInitialized) await second.destroy();
  await database?.drop();
});

async function attempt(replica: PlaygroundReservations, workspaceId: string, id: string): Promise<'reserved' | ServiceError> {
  try {
    await replica.reserve(workspaceId, id);
    return 'reserved';
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
}

it('lets exactly 30 of 300 parallel reservations through across two replicas, and refuses the rest with Retry-After', async () => {
  const workspaceId = randomUUID();
  const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => attempt(replicas[i % 2]!, workspaceId, `exec_${workspaceId}_${i}`)));
  expect(outcomes.filter((outcome) => outcome === 'reserved')).toHaveLength(PLAYGROUND_RUNS_PER_MINUTE);
  const refusals = outcomes.filter((outcome): outcome is ServiceError => outcome !== 'reserved');
  expect(refusals).toHaveLength(270);
  for (const refusal of refusals) {
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect((refusal.details as { retryAfter: number }).retryAfter).toBeGreaterThanOrEqual(1);
    expect((refusal.details as { retryAfter: number }).retryAfter).toBeLessThanOrEqual(60);
  }
  // Both replicas took places: the count is shared, not per process.
  const [places] = (await database.dataSource.query(`SELECT count(*)::int AS taken FROM playground_reservations WHERE workspace_id = $1`, [
    workspaceId,
  ])) as Array<{ taken: number }>;
  expect(places!.taken).toBe(PLAYGROUND_RUNS_PER_MINUTE);
});

it('gives a released place back, to either replica', async () => {
  const workspaceId = randomUUID();
  for (let i = 0; i < PLAYGROUND_RUNS_PER_MINUTE; i++) await replicas[i % 2]!.reserve(workspaceId, `exec_${workspaceId}_${i}`);
  expect(await attempt(replicas[0]!, workspaceId, `exec_${workspaceId}_x`)).toMatchObject({ code: 'RATE_LIMITED' });
  await replicas[1]!.release(`exec_${workspaceId}_7`);
  expect(await attempt(replicas[0]!, workspaceId, `exec_${workspaceId}_y`)).toBe('reserved');
  expect(await attempt(replicas[1]!, workspaceId, `exec_${workspaceId}_z`)).toMatchObject({ code: 'RATE_LIMITED' });
});

it('keeps the windows of workspaces apart, holds the day window, and forgets places older than a day', async () => {
  const busy = randomUUID();
  const other = randomUUID();
  // A day's places, all older than a minute: the minute window is empty, the day window full.
  await database.dataSource.query(
    `INSERT INTO playground_reservations (id, workspace_id, reserved_at)
     SELECT $1 || n, $2, now() - interval '2 hours' FROM generate_series(1, $3::int) AS n`,
    [`old_${busy}_`, busy, PLAYGROUND_RUNS_PER_DAY],
  );
  const refused = await attempt(replicas[0]!, busy, `exec_${busy}_new`);
  expect(refused).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('a day') });
  // The oldest place leaves the day window 22 hours from now.
  const { retryAfter } = (refused as ServiceError).details as { retryAfter: number };
  expect(Math.abs(retryAfter - 22 * 3600)).toBeLessThanOrEqual(5);
  expect(await attempt(replicas[1]!, other, `exec_${other}_1`)).toBe('reserved');

  await database.dataSource.query(`UPDATE playground_reservations SET reserved_at = now() - interval '25 hours' WHERE workspace_id = $1`, [busy]);
  expect(await attempt(replicas[1]!, busy, `exec_${busy}_later`)).toBe('reserved');
  const [left] = (await database.dataSource.query(`SELECT count(*)::int AS kept FROM playground_reservations WHERE workspace_id = $1`, [busy])) as Array<{
    kept: number;
  }>;
  expect(left!.kept).toBe(1);
});

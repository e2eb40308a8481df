import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { decisionRunner } from '../main';
import { pgPool } from '../pg-pool';
import { claimNextItem, ClaimedItem, completeIfFinished, releaseItem, takeBackAbandonedClaims } from './replay-queue.store';
import { useMigratedDatabase } from '../../../../test/support/service-database';

/** The replay queue's statements against a real PostgreSQL with the runner's own migrations. */
const database = useMigratedDatabase('runner_replay_queue', decisionRunner.database, 4);
let db: DataSource;
let pool: Pool;

beforeAll(() => {
  db = database.dataSource;
  pool = pgPool(db);
});

beforeEach(async () => {
  await db.query(`DELETE FROM replays`);
});

let replays = 0;

/** A running replay of `items` pending executions in `workspace`, started `ageSeconds` ago; its id. */
async function replay(workspace: string, items: number, ageSeconds: number, timeoutMs = 5_000): Promise<string> {
  const decision = `dec_${workspace}`;
  await db.query(
    `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision) VALUES ($1, $2, 'triage', 'triage', '{}', 1) ON CONFLICT DO NOTHING`,
    [decision, workspace],
  );
  const id = `rpl_${workspace}_${++replays}`;
  await db.query(
    `INSERT INTO replays (id, workspace_id, decision_id, version, schema, selection, status, created_at)
     VALUES ($1, $2, $3, 1, $4, '{"last":1}', 'running', now() - make_interval(secs => $5))`,
    [id, workspace, decision, JSON.stringify({ settings: { timeoutMs } }), ageSeconds],
  );
  await db.query(
    `INSERT INTO replay_items (replay_id, position, execution_id, replay_execution_id, status, old_action)
     SELECT $1, n, 'exec_old_' || n, $1 || '_exec_' || n, 'pending', 'continue' FROM generate_series(1, $2) AS n`,
    [id, items],
  );
  return id;
}

async function claims(count: number): Promise<ClaimedItem[]> {
  const claimed: ClaimedItem[] = [];
  for (let k = 0; k < count; k++) {
    const item = await claimNextItem(pool, `test#${k}`);
    if (item) claimed.push(item);
  }
  return claimed;
}

async function statuses(replayId: string): Promise<string[]> {
  const rows = (await db.query(`SELECT status FROM replay_items WHERE replay_id = $1 ORDER BY position`, [replayId])) as Array<{ status: string }>;
  return rows.map((row) => row.status);
}

describe('claiming replay items', () => {
  it("serves workspaces in turn: B's single item is claimed in the first round although A queued 40 earlier", async () => {
    const a = await replay('ws_a', 40, 600);
    const b = await replay('ws_b', 1, 60);
    const firstRound = await claims(2);
    expect(firstRound.map((item) => [item.workspace_id, item.replay_id, item.position])).toEqual([
      ['ws_a', a, 1],
      ['ws_b', b, 1],
    ]);
    expect(firstRound[1]).toMatchObject({ decision_id: 'dec_ws_b', version: 1, execution_id: 'exec_old_1', replay_execution_id: `${b}_exec_1` });
    expect(await statuses(b)).toEqual(['running']);
  });

  it('rotates over three workspaces, each taking its replays oldest first and in position order', async () => {
    const names = new Map([
      [await replay('ws_a', 40, 900), 'a1'],
      [await replay('ws_a', 5, 800), 'a2'],
      [await replay('ws_b', 3, 700), 'b'],
      [await replay('ws_c', 1, 10), 'c'],
    ]);
    const order = (await claims(9)).map((item) => `${names.get(item.replay_id)}:${item.position}`);
    expect(order).toEqual(['a1:1', 'b:1', 'c:1', 'a1:2', 'b:2', 'a1:3', 'b:3', 'a1:4', 'a1:5']);
  });

  it('gives a workspace that comes back later its turn before one served all along', async () => {
    await replay('ws_a', 40, 600);
    await claims(5);
    const b = await replay('ws_b', 2, 0);
    const next = await claims(3);
    expect(next.map((item) => item.workspace_id)).toEqual(['ws_b', 'ws_a', 'ws_b']);
    expect(await statuses(b)).toEqual(['running', 'running']);
  });

  it('takes nothing from a cancelled replay, and nothing twice', async () => {
    const a = await replay('ws_a', 2, 60);
    await db.query(`UPDATE replays SET status = 'cancelled' WHERE id = $1`, [a]);
    await db.query(`UPDATE replay_items SET status = 'cancelled' WHERE replay_id = $1`, [a]);
    const b = await replay('ws_b', 1, 30);
    expect((await claims(3)).map((item) => item.replay_id)).toEqual([b]);
  });
});

describe('items in flight', () => {
  it('are put back pending when no slot was free, or cancelled when their replay was cancelled meanwhile', async () => {
    const a = await replay('ws_a', 2, 60);
    const [first, second] = await claims(2);
    expect([first!.replay_id, second!.replay_id]).toEqual([a, a]);
    await releaseItem(pool, first!);
    expect(await statuses(a)).toEqual(['pending', 'running']);
    // Another claim's release does nothing.
    await releaseItem(pool, { ...second!, claim: 'someone-else' });
    expect(await statuses(a)).toEqual(['pending', 'running']);
    await db.query(`UPDATE replays SET status = 'cancelled' WHERE id = $1`, [a]);
    await releaseItem(pool, second!);
    expect(await statuses(a)).toEqual(['pending', 'cancelled']);
  });

  it('keep their replay running until they finish', async () => {
    const a = await replay('ws_a', 1, 60);
    const [item] = await claims(1);
    await completeIfFinished(pool, a);
    expect(((await db.query(`SELECT status FROM replays WHERE id = $1`, [a])) as Array<{ status: string }>)[0]!.status).toBe('running');
    await db.query(`UPDATE replay_items SET status = 'done' WHERE replay_id = $1 AND position = $2`, [a, item!.position]);
    await completeIfFinished(pool, a);
    expect(((await db.query(`SELECT status FROM replays WHERE id = $1`, [a])) as Array<{ status: string }>)[0]!.status).toBe('completed');
  });

  it('are taken back once their claim outlives the engine deadline and the margin: pending again, or failed (and counted) when the replay is over', async () => {
    const running = await replay('ws_a', 2, 120, 1_000);
    const cancelled = await replay('ws_b', 2, 120, 1_000);
    await claims(4);
    // A claim younger than the deadline and margin stays.
    expect(await takeBackAbandonedClaims(pool, 60_000)).toBe(0);
    await db.query(`UPDATE replay_items SET claimed_at = now() - interval '10 seconds' WHERE position = 1`);
    await db.query(`UPDATE replays SET status = 'cancelled' WHERE id = $1`, [cancelled]);
    expect(await takeBackAbandonedClaims(pool, 5_000)).toBe(2);
    expect(await statuses(running)).toEqual(['pending', 'running']);
    expect(await statuses(cancelled)).toEqual(['failed', 'running']);
    const [failed] = (await db.query(`SELECT error, claimed_by FROM replay_items WHERE replay_id = $1 AND position = 1`, [cancelled])) as Array<{
      error: { code: string };
      claimed_by: string;
    }>;
    expect(failed).toMatchObject({ error: { code: 'INTERNAL_ERROR' }, claimed_by: expect.stringMatching(/^test#/) });
    const [again] = await claims(1);
    expect(again).toMatchObject({ replay_id: running, position: 1 });
  });
});

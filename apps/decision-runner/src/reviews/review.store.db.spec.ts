import { DataSource } from 'typeorm';
import { decisionRunner } from '../main';
import { MigratedDatabase, migratedDatabase } from '../../../../test/support/service-database';
import { NewReviewItem, ReviewStore } from './review.store';

/** Review items against a real PostgreSQL with the runner's own migrations. */

let database: MigratedDatabase;
let db: DataSource;
let store: ReviewStore;

const NOW = new Date('2026-11-28T12:00:00Z');
const minutes = (n: number) => new Date(NOW.getTime() + n * 60_000);

beforeAll(async () => {
  database = await migratedDatabase('runner_reviews', decisionRunner.database, 4);
  db = database.dataSource;
  store = new ReviewStore(db);
});

afterAll(async () => {
  await database?.drop();
});

let next = 0;

/** An execution of workspace `ws` and its review item, due `dueIn` minutes after NOW. */
async function item(ws: string, dueIn: number, reason = 'action'): Promise<NewReviewItem> {
  const n = ++next;
  const executionId = `exec_r${String(n).padStart(6, '0')}`;
  await db.query(
    `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, action, created_at)
     VALUES ($1, $2, 'dec_r', 'r', 1, 'api', 'success', 'req_r', true, 'escalate', $3)`,
    [executionId, ws, minutes(dueIn - 60)],
  );
  const review: NewReviewItem = {
    id: `rev_r${String(n).padStart(6, '0')}`,
    workspaceId: ws,
    decisionId: 'dec_r',
    decisionSlug: 'r',
    version: 1,
    executionId,
    reason,
    executedAt: minutes(dueIn - 60),
    dueAt: minutes(dueIn),
  };
  await store.insert([review]);
  return review;
}

const list = (
  ws: string,
  status: 'open' | 'claimed' | 'expired' | 'resolved' | 'unresolved',
  extra: { after?: { dueAt: Date; id: string }; limit?: number } = {},
) => store.list(ws, { status, decisionId: null, reason: null, after: extra.after ?? null, limit: extra.limit ?? 100 }, NOW);

describe('review items', () => {
  it('keep one item per execution: a second insert of the same execution changes nothing', async () => {
    const first = await item('ws_once', 10);
    await store.insert([{ ...first, id: 'rev_rsecond', reason: 'audit' }]);
    expect((await list('ws_once', 'unresolved')).map((row) => [row.id, row.reason])).toEqual([[first.id, 'action']]);
  });

  it('are listed by status at an instant, oldest due first, paged by due time and id', async () => {
    const late = await item('ws_list', -30);
    const soon = await item('ws_list', 30);
    const held = await item('ws_list', 60);
    const done = await item('ws_list', 90);
    expect(await store.claim('ws_list', held.id, 'usr_a', NOW, minutes(15))).toBe(true);
    expect(await store.resolve('ws_list', done.id, 'usr_a', NOW, { answers: {}, action: 'continue', note: null }, async () => true)).toBe(true);

    const ids = async (status: Parameters<typeof list>[1]) => (await list('ws_list', status)).map((row) => row.id);
    expect(await ids('unresolved')).toEqual([late.id, soon.id, held.id]);
    expect(await ids('expired')).toEqual([late.id]);
    expect(await ids('open')).toEqual([soon.id]);
    expect(await ids('claimed')).toEqual([held.id]);
    expect(await ids('resolved')).toEqual([done.id]);
    expect((await list('ws_list', 'unresolved', { after: { dueAt: soon.dueAt, id: soon.id } })).map((row) => row.id)).toEqual([held.id]);
    // One row past the limit says more follow.
    expect(await list('ws_list', 'unresolved', { limit: 1 })).toHaveLength(2);
    expect(await list('ws_other', 'unresolved')).toEqual([]);
  });

  it('are claimed by exactly one of many reviewers at once, renewed by the holder, taken over once the claim lapsed', async () => {
    const contested = await item('ws_race', 30);
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => store.claim('ws_race', contested.id, `usr_${i}`, NOW, minutes(15))));
    expect(claims.filter(Boolean)).toHaveLength(1);
    const [row] = await list('ws_race', 'claimed');
    const holder = row!.claimed_by!;
    expect(await store.claim('ws_race', contested.id, holder, minutes(1), minutes(16))).toBe(true);
    expect(await store.claim('ws_race', contested.id, 'usr_late', minutes(10), minutes(25))).toBe(false);
    expect(await store.release('ws_race', contested.id, 'usr_late', minutes(10))).toBe(false);
    // Past the renewed claim, anyone may take it.
    expect(await store.claim('ws_race', contested.id, 'usr_late', minutes(17), minutes(32))).toBe(true);
    expect(await store.release('ws_race', contested.id, 'usr_late', minutes(18))).toBe(true);
    expect(await list('ws_race', 'claimed')).toEqual([]);
  });

  it('are resolved once, and not at all when the outcome written beside it fails', async () => {
    const reviewed = await item('ws_resolve', 30);
    expect(await store.resolve('ws_resolve', reviewed.id, 'usr_a', NOW, { answers: {}, action: 'block', note: null }, async () => false)).toBe(false);
    expect((await list('ws_resolve', 'open')).map((row) => row.id)).toEqual([reviewed.id]);
    expect(await store.claim('ws_resolve', reviewed.id, 'usr_b', NOW, minutes(15))).toBe(true);
    expect(await store.resolve('ws_resolve', reviewed.id, 'usr_a', NOW, { answers: {}, action: 'block', note: null }, async () => true)).toBe(false);
    const twice = await Promise.all(
      ['usr_b', 'usr_b'].map((user) => store.resolve('ws_resolve', reviewed.id, user, NOW, { answers: {}, action: 'continue', note: 'ok' }, async () => true)),
    );
    expect(twice.filter(Boolean)).toHaveLength(1);
    const [resolved] = await list('ws_resolve', 'resolved');
    expect(resolved).toMatchObject({ resolved_by: 'usr_b', claimed_by: null, resolution: { action: 'continue', note: 'ok' } });
  });

  it('go with their execution, as retention and a workspace deletion delete it', async () => {
    const kept = await item('ws_gone', 30);
    const gone = await item('ws_gone', 40);
    await db.query('DELETE FROM executions WHERE id = $1', [gone.executionId]);
    expect((await list('ws_gone', 'unresolved')).map((row) => row.id)).toEqual([kept.id]);
    expect(await store.find('ws_gone', gone.id)).toBeUndefined();
  });

  it('sum up what is not resolved for the metrics', async () => {
    const summary = await store.unresolvedSummary();
    expect(summary.count).toBeGreaterThan(3);
    expect(summary.earliestDueAt).toEqual(minutes(-30));
  });
});

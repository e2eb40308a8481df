import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DeliveryMessage } from '@ds/contracts';
import { createLogger } from '@ds/platform';
import { singleKeyring } from '@ds/sealing';
import { isSigningSecret } from '@ds/webhooks';
import { DeliveryConfig } from './config';
import { DeliveriesStore } from './deliveries.store';
import { delivery } from './main';
import { DeliveryPurge } from './purge';
import { SigningSecretsService } from './signing-secrets.service';
import { defined } from '../../../test/e2e/support/api';
import { useMigratedDatabase } from '../../../test/support/service-database';

/** Against a real PostgreSQL with the delivery service's own migrations. */
const database = useMigratedDatabase('delivery_store', delivery.database, 5);
let db: DataSource;
let store: DeliveriesStore;
let secrets: SigningSecretsService;
let counter = 0;

beforeAll(() => {
  db = database.dataSource;
  store = new DeliveriesStore(db);
  secrets = new SigningSecretsService(
    db,
    { secretsKeys: singleKeyring(randomBytes(32)), secretsKeyIsDev: false } as DeliveryConfig,
    createLogger('delivery', 'silent'),
  );
});

function message(workspaceId: string, overrides: Partial<DeliveryMessage> = {}): DeliveryMessage {
  counter++;
  return {
    deliveryId: `dlv_${String(counter).padStart(20, '0')}`,
    workspaceId,
    decisionId: 'dec_1',
    decisionSlug: 'triage',
    executionId: `exec_${counter}`,
    destinationKey: 'ops',
    kind: 'webhook',
    livemode: true,
    url: 'https://hooks.example.com/in',
    method: 'POST',
    headers: {},
    body: '{"id":"x"}',
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}

describe('deliveries', () => {
  it('are recorded once however often their message is consumed', async () => {
    const m = message('ws_rec');
    expect(await store.record(m)).toEqual({ status: 'pending', sequence: 1, attemptCount: 0 });
    expect(await store.record(m)).toEqual({ status: 'pending', sequence: 1, attemptCount: 0 });
    const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM deliveries WHERE id = $1`, [m.deliveryId]);
    expect(count).toBe(1);
  });

  it('refuse a message whose id belongs to another workspace', async () => {
    const m = message('ws_a');
    await store.record(m);
    expect(await store.record({ ...m, workspaceId: 'ws_b' })).toBeNull();
  });

  it('count an attempt before it is made, so one cut short shows as interrupted', async () => {
    const m = message('ws_att');
    await store.record(m);
    const first = await store.beginAttempt(m.deliveryId, 1);
    expect(first?.attempt).toBe(1);
    const second = await store.beginAttempt(m.deliveryId, 1);
    expect(second?.attempt).toBe(2);
    await store.finishAttempt(
      second!.attemptId,
      m.deliveryId,
      1,
      { outcome: 'failed', responseStatus: 500, durationMs: 12, error: 'the receiver answered 500' },
      { status: 'pending', nextAttemptAt: new Date(Date.now() + 5_000) },
    );
    const view = await store.get('ws_att', m.deliveryId);
    expect(view).toMatchObject({ status: 'pending', attempt_count: 2, sequence: 1 });
    expect(view!.next_attempt_at).not.toBeNull();
    expect(view!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'interrupted', response_status: null }),
      expect.objectContaining({ attempt: 2, outcome: 'failed', response_status: 500, duration_ms: 12, error: 'the receiver answered 500' }),
    ]);
    expect(await store.beginAttempt(m.deliveryId, 2)).toBeNull();
  });

  it('finish, then start a new sequence only from a failure', async () => {
    const m = message('ws_seq');
    await store.record(m);
    const a = await store.beginAttempt(m.deliveryId, 1);
    await store.finishAttempt(
      a!.attemptId,
      m.deliveryId,
      1,
      { outcome: 'gone', responseStatus: 410, durationMs: 3, error: 'gone' },
      { status: 'failed', nextAttemptAt: null },
    );
    expect(await store.beginAttempt(m.deliveryId, 1)).toBeNull();
    expect(await store.startSequence(m.deliveryId, 3)).toBe(false);
    expect(await store.startSequence(m.deliveryId, 2)).toBe(true);
    expect(await store.startSequence(m.deliveryId, 2)).toBe(false);
    expect(await store.record(m)).toEqual({ status: 'pending', sequence: 2, attemptCount: 0 });
    const b = await store.beginAttempt(m.deliveryId, 2);
    expect(b?.attempt).toBe(1);
    await store.finishAttempt(
      b!.attemptId,
      m.deliveryId,
      2,
      { outcome: 'succeeded', responseStatus: 200, durationMs: 4, error: null },
      { status: 'succeeded', nextAttemptAt: null },
    );
    const view = await store.get('ws_seq', m.deliveryId);
    expect(view).toMatchObject({ status: 'succeeded', sequence: 2, attempt_count: 1 });
    expect(view!.completed_at).not.toBeNull();
    expect(view!.attempts.map((x) => [x.sequence, x.attempt, x.outcome])).toEqual([
      [1, 1, 'gone'],
      [2, 1, 'succeeded'],
    ]);
    expect(await store.startSequence(m.deliveryId, 3)).toBe(false);
  });

  it('are listed newest first, by decision and status, page by page, never another workspace’s', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const m = message('ws_list', { decisionId: i % 2 === 0 ? 'dec_even' : 'dec_odd' });
      ids.push(m.deliveryId);
      await store.record(m);
    }
    await store.record(message('ws_other'));
    const first = await store.list({ workspaceId: 'ws_list', limit: 2, cursor: null, decisionId: null, status: null });
    expect(first.data.map((d) => d.id)).toEqual([ids[4], ids[3]]);
    expect(first.has_more).toBe(true);
    const second = await store.list({ workspaceId: 'ws_list', limit: 2, cursor: first.next_cursor, decisionId: null, status: null });
    expect(second.data.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    const last = await store.list({ workspaceId: 'ws_list', limit: 2, cursor: second.next_cursor, decisionId: null, status: null });
    expect(last).toMatchObject({ has_more: false, next_cursor: null });
    expect(last.data.map((d) => d.id)).toEqual([ids[0]]);
    const even = await store.list({ workspaceId: 'ws_list', limit: 10, cursor: null, decisionId: 'dec_even', status: 'pending' });
    expect(even.data.map((d) => d.id)).toEqual([ids[4], ids[2], ids[0]]);
    expect((await store.list({ workspaceId: 'ws_list', limit: 10, cursor: null, decisionId: null, status: 'succeeded' })).data).toEqual([]);
    await expect(store.list({ workspaceId: 'ws_list', limit: 10, cursor: 'bogus', decisionId: null, status: null })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    expect(await store.get('ws_other', defined(ids[0]))).toBeNull();
  });

  it('are purged with their attempts after 30 days, and the oldest pending age is measured', async () => {
    const old = message('ws_purge', { createdAt: new Date(Date.now() - 31 * 86_400_000).toISOString() });
    const recent = message('ws_purge', { createdAt: new Date(Date.now() - 29 * 86_400_000).toISOString() });
    await store.record(old);
    await store.record(recent);
    await store.beginAttempt(old.deliveryId, 1);
    expect(await store.oldestPendingAgeSeconds()).toBeGreaterThan(31 * 86_400 - 60);
    const purge = new DeliveryPurge(store, secrets, 0, createLogger('delivery', 'silent'));
    expect((await purge.purge()).deliveries).toBe(1);
    expect(await store.get('ws_purge', old.deliveryId)).toBeNull();
    expect(await store.get('ws_purge', recent.deliveryId)).not.toBeNull();
    const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM delivery_attempts WHERE delivery_id = $1`, [old.deliveryId]);
    expect(count).toBe(0);
    expect((await purge.purge()).deliveries).toBe(0);
  });

  it('of a deleted workspace are dropped, not recorded again, however late their message comes', async () => {
    const before = message('ws_deleted');
    expect(await store.record(before)).toMatchObject({ status: 'pending' });
    await secrets.signing('ws_deleted');
    await store.purgeWorkspace('ws_deleted');
    expect(await store.get('ws_deleted', before.deliveryId)).toBeNull();
    // The same message redelivered, and one queued by a run that was in flight.
    expect(await store.record(before)).toBe('workspace-deleted');
    expect(await store.record(message('ws_deleted'))).toBe('workspace-deleted');
    const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM deliveries WHERE workspace_id = 'ws_deleted'`);
    expect(count).toBe(0);
    // Another workspace is untouched, and deleting twice is harmless.
    expect(await store.record(message('ws_alive'))).toMatchObject({ status: 'pending' });
    await store.purgeWorkspace('ws_deleted');
  });

  it('forget a deleted workspace after the 30 days the stream keeps its messages', async () => {
    await store.purgeWorkspace('ws_long_gone');
    await db.query(`UPDATE deleted_workspaces SET deleted_at = now() - interval '31 days' WHERE workspace_id = 'ws_long_gone'`);
    await store.purgeWorkspace('ws_recently_gone');
    await store.purge();
    const rows = (await db.query(`SELECT workspace_id FROM deleted_workspaces WHERE workspace_id LIKE 'ws_%gone' ORDER BY workspace_id`)) as Array<{
      workspace_id: string;
    }>;
    expect(rows.map((row) => row.workspace_id)).toEqual(['ws_recently_gone']);
  });
});

describe('signing secrets', () => {
  it('are created on demand, one per workspace even when asked at once', async () => {
    expect(await secrets.view('ws_new')).toBeNull();
    const answers = await Promise.all(Array.from({ length: 5 }, () => secrets.signing('ws_new')));
    const first = defined(answers[0]);
    for (const answer of answers) expect(answer).toEqual(first);
    expect(first).toHaveLength(1);
    const secret = first[0]!;
    expect(isSigningSecret(secret)).toBe(true);
    expect(await secrets.view('ws_new')).toMatchObject({ hint: `whsec_…${secret.slice(-4)}`, previous_expires_at: null });
  });

  it('rotate with the previous secret signing beside the new one for 24 hours; a second rotation ends the first overlap', async () => {
    const [original] = await secrets.signing('ws_rot');
    const first = await secrets.rotate('ws_rot');
    expect(isSigningSecret(first.secret)).toBe(true);
    const overlap = Date.parse(first.previous_expires_at!) - Date.now();
    expect(overlap).toBeGreaterThan(23.9 * 3600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600_000);
    expect(await secrets.signing('ws_rot')).toEqual([first.secret, original]);
    const second = await secrets.rotate('ws_rot');
    expect(await secrets.signing('ws_rot')).toEqual([second.secret, first.secret]);
    expect(await secrets.purgeExpired()).toBeGreaterThanOrEqual(1);
    expect(await secrets.signing('ws_rot')).toEqual([second.secret, first.secret]);
  });

  it('rotate a workspace that had none into one current secret and no overlap', async () => {
    const rotated = await secrets.rotate('ws_fresh');
    expect(rotated.previous_expires_at).toBeNull();
    expect(await secrets.signing('ws_fresh')).toEqual([rotated.secret]);
  });

  it('stay consistent under concurrent rotations', async () => {
    await secrets.signing('ws_race');
    await Promise.all(Array.from({ length: 4 }, () => secrets.rotate('ws_race')));
    const [{ current }] = await db.query(`SELECT count(*)::int AS current FROM signing_secrets WHERE workspace_id = 'ws_race' AND expires_at IS NULL`);
    expect(current).toBe(1);
    expect(await secrets.signing('ws_race')).toHaveLength(2);
  });
});

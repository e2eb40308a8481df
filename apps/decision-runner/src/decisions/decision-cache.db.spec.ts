import { DataSource } from 'typeorm';
import { createLogger, NatsLink } from '@ds/platform';
import { firstValueFrom } from 'rxjs';
import { NatsServer, startNats, waitFor } from '../../../../test/e2e/support/cluster';
import { decisionRunner } from '../main';
import { pgPool } from '../pg-pool';
import { DecisionCache } from './decision-cache';
import { MigratedDatabase, migratedDatabase } from '../../../../test/support/service-database';

/** Two runner replicas' caches over one real PostgreSQL and one real nats-server. */
const logger = createLogger('decision-runner', 'silent');

let database: MigratedDatabase;
let db: DataSource;
let nats: NatsServer;
let linkA: NatsLink;
let linkB: NatsLink;
let links: NatsLink[] = [];
let replicaA: DecisionCache;
let replicaB: DecisionCache;

beforeAll(async () => {
  database = await migratedDatabase('runner_decision_cache', decisionRunner.database, 4);
  db = database.dataSource;
  nats = await startNats();
  [linkA, linkB] = await Promise.all([NatsLink.open(nats.url, 'replica-a', logger), NatsLink.open(nats.url, 'replica-b', logger)]);
  links = [linkA, linkB];
  replicaA = new DecisionCache(db, linkA);
  replicaB = new DecisionCache(db, linkB);
});

afterAll(async () => {
  replicaA?.onModuleDestroy();
  replicaB?.onModuleDestroy();
  await Promise.all(links.map((link) => link.close()));
  await nats?.stop();
  await database?.drop();
});

/** Once both have round-tripped to the server, every broadcast sent before has reached both replicas. */
async function broadcastsDelivered(): Promise<void> {
  for (const link of links) await link.connection.flush();
}

async function insertDecision(id: string, workspaceId: string, slug: string, activeVersion: number | null): Promise<void> {
  await db.query(
    `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled)
     VALUES ($1, $2, $3, $3, '{}', 1, $4, true)`,
    [id, workspaceId, slug, activeVersion],
  );
}

describe('DecisionCache', () => {
  it('reads a decision once, then answers from memory until a change is broadcast, on every replica', async () => {
    await insertDecision('dec_shared', 'ws_1', 'triage', 1);
    const expected = { id: 'dec_shared', slug: 'triage', activeVersion: 1, endpointEnabled: true, shadow: null };
    expect(await replicaA.get('ws_1', 'triage')).toEqual(expected);
    expect(await replicaB.get('ws_1', 'triage')).toEqual(expected);

    // Changed behind the caches' back: both keep what they read.
    await db.query(`UPDATE decisions SET active_version = 2, endpoint_enabled = false WHERE id = 'dec_shared'`);
    expect(await replicaA.get('ws_1', 'triage')).toEqual(expected);
    expect(await replicaB.get('ws_1', 'triage')).toEqual(expected);

    // A tells everyone, B included.
    replicaA.changed('ws_1', 'triage');
    await broadcastsDelivered();
    const changed = { id: 'dec_shared', slug: 'triage', activeVersion: 2, endpointEnabled: false, shadow: null };
    expect(await replicaA.get('ws_1', 'triage')).toEqual(changed);
    expect(await replicaB.get('ws_1', 'triage')).toEqual(changed);
  });

  it('keeps "not found" only until the decision is created', async () => {
    expect(await replicaB.get('ws_1', 'later')).toBeNull();
    await insertDecision('dec_later', 'ws_1', 'later', null);
    expect(await replicaB.get('ws_1', 'later')).toBeNull();
    replicaA.changed('ws_1', 'later');
    await broadcastsDelivered();
    expect(await replicaB.get('ws_1', 'later')).toEqual({ id: 'dec_later', slug: 'later', activeVersion: null, endpointEnabled: true, shadow: null });
  });

  it('drops only the changed decision, and tells workspaces apart', async () => {
    await insertDecision('dec_w2', 'ws_2', 'triage', 5);
    await insertDecision('dec_other', 'ws_2', 'other', 1);
    expect(await replicaB.get('ws_2', 'triage')).toMatchObject({ id: 'dec_w2', activeVersion: 5 });
    expect(await replicaB.get('ws_2', 'other')).toMatchObject({ id: 'dec_other', activeVersion: 1 });
    await db.query(`UPDATE decisions SET active_version = active_version + 1 WHERE workspace_id = 'ws_2'`);
    replicaA.changed('ws_2', 'triage');
    await broadcastsDelivered();
    expect(await replicaB.get('ws_2', 'triage')).toMatchObject({ id: 'dec_w2', activeVersion: 6 });
    expect(await replicaB.get('ws_2', 'other')).toMatchObject({ id: 'dec_other', activeVersion: 1 });
    expect(await replicaB.get('ws_1', 'triage')).toMatchObject({ id: 'dec_shared' });
  });

  it('drops everything on a broadcast it cannot read', async () => {
    await insertDecision('dec_garbled', 'ws_3', 'triage', 1);
    expect(await replicaB.get('ws_3', 'triage')).toMatchObject({ activeVersion: 1 });
    await db.query(`UPDATE decisions SET active_version = 9 WHERE id = 'dec_garbled'`);
    linkA.connection.publish('v1.decision-runner.decision.changed', 'not json');
    await broadcastsDelivered();
    expect(await replicaB.get('ws_3', 'triage')).toMatchObject({ activeVersion: 9 });
  });

  it('shares one read among the runs that miss at once', async () => {
    await insertDecision('dec_busy', 'ws_4', 'busy', 1);
    // Counts the statements that reach the real pool; every one still runs.
    const reads = jest.spyOn(pgPool(db), 'query');
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => replicaA.get('ws_4', 'busy')));
      expect(answers.map((answer) => answer?.id)).toEqual(Array.from({ length: 20 }, () => 'dec_busy'));
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('forgets everything when its NATS connection drops, since broadcasts may have been missed meanwhile', async () => {
    await insertDecision('dec_outage', 'ws_5', 'triage', 1);
    expect(await replicaB.get('ws_5', 'triage')).toMatchObject({ activeVersion: 1 });
    const disconnected = firstValueFrom(linkB.disconnects);
    await nats.stop();
    await disconnected;
    // Deployed while NATS was down: nobody heard of it.
    await db.query(`UPDATE decisions SET active_version = 2 WHERE id = 'dec_outage'`);
    await nats.start();
    await waitFor(async () => links.every((link) => link.connected), 20_000, 'both replicas reconnected');
    expect(await replicaB.get('ws_5', 'triage')).toMatchObject({ activeVersion: 2 });
  });
});

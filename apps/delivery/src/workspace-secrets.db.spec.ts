import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { createLogger } from '@ds/platform';
import { DeliveryConfig } from './config';
import { delivery } from './main';
import { WorkspaceSecretsService } from './workspace-secrets.service';
import { useMigratedDatabase } from '../../../test/support/service-database';
import { keyring, randomKeyText } from '../../../test/support/keyrings';

/** Workspace secrets against a real PostgreSQL: sealed at rest, 50 per workspace under races, resealed after a key rotation. */
const logger = createLogger('delivery', 'silent');
const firstKey = randomKeyText();
const secondKey = randomKeyText();

const database = useMigratedDatabase('delivery_workspace_secrets', delivery.database, 8);
let db: DataSource;

function service(keys = keyring(firstKey)): WorkspaceSecretsService {
  return new WorkspaceSecretsService(db, { secretsKeys: keys, secretsKeyIsDev: false } as DeliveryConfig, logger);
}

beforeAll(async () => {
  db = database.dataSource;
});

describe('workspace secrets', () => {
  it('creates, replaces, lists names only, and gives values back only through values()', async () => {
    const ws = randomUUID();
    const secrets = service();
    const created = await secrets.put(ws, 'CRM_TOKEN', 'tok-one');
    expect(created).toEqual({ created: true, secret: { name: 'CRM_TOKEN', created_at: expect.any(String), updated_at: expect.any(String) } });
    const replaced = await secrets.put(ws, 'CRM_TOKEN', 'tok-two');
    expect(replaced.created).toBe(false);
    expect(replaced.secret.created_at).toBe(created.secret.created_at);
    await secrets.put(ws, 'A_FIRST', 'a');
    expect((await secrets.list(ws)).data.map((secret) => secret.name)).toEqual(['A_FIRST', 'CRM_TOKEN']);
    expect(JSON.stringify(await secrets.list(ws))).not.toContain('tok-');
    expect(await secrets.values(ws, ['CRM_TOKEN', 'UNSET', 'not a name'])).toEqual({ CRM_TOKEN: 'tok-two' });
    // Another workspace sees none of them.
    expect(await secrets.values(randomUUID(), ['CRM_TOKEN'])).toEqual({});
  });

  it('keeps values sealed at rest, bound to their workspace and name', async () => {
    const ws = randomUUID();
    const secrets = service();
    await secrets.put(ws, 'BOUND', 'plain-value-123');
    const [row] = (await db.query(`SELECT t::text AS whole_row FROM workspace_secrets t WHERE workspace_id = $1`, [ws])) as Array<{ whole_row: string }>;
    expect(row!.whole_row).not.toContain('plain-value-123');
    // A sealed value copied onto another name does not open: the read is refused, never answered with it.
    await db.query(
      `INSERT INTO workspace_secrets (workspace_id, name, sealed, key_id) SELECT workspace_id, 'COPIED', sealed, key_id FROM workspace_secrets WHERE workspace_id = $1`,
      [ws],
    );
    await expect(secrets.values(ws, ['COPIED'])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('holds 50 per workspace when creates race, and still replaces one of the 50', async () => {
    const ws = randomUUID();
    const secrets = service();
    const outcomes = await Promise.allSettled(Array.from({ length: 55 }, (_, i) => secrets.put(ws, `S_${i}`, `v${i}`)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(50);
    for (const outcome of outcomes.filter((o) => o.status === 'rejected')) {
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT', details: { limit: 50 } });
    }
    const [held] = (await secrets.list(ws)).data;
    expect((await secrets.put(ws, held!.name, 'replaced')).created).toBe(false);
  });

  it('deletes by name, and answers 404 for an unknown or malformed one', async () => {
    const ws = randomUUID();
    const secrets = service();
    await secrets.put(ws, 'GONE', 'v');
    expect(await secrets.delete(ws, 'GONE')).toEqual({ deleted: true });
    await expect(secrets.delete(ws, 'GONE')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(secrets.delete(ws, '../etc')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('seals every secret again under the new first key after a rotation, so the old key can go', async () => {
    const ws = randomUUID();
    await service(keyring(firstKey)).put(ws, 'ROTATED', 'kept-across-rotation');
    const rotated = service(keyring(`${secondKey},${firstKey}`));
    const counts = await rotated.sealAtRest();
    // The copied row of the test above opens under no key: it is counted and left, the rest go on.
    expect(counts.resealed).toBeGreaterThanOrEqual(1);
    expect(await service(keyring(secondKey)).values(ws, ['ROTATED'])).toEqual({ ROTATED: 'kept-across-rotation' });
  });
});

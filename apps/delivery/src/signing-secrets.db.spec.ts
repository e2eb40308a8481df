import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { createLogger, migrateDatabase } from '@ds/platform';
import { Keyring } from '@ds/sealing';
import { isSigningSecret, newSigningSecret } from '@ds/webhooks';
import { DeliveryConfig } from './config';
import { delivery } from './main';
import { Deliveries1795448851605 } from './migrations/1795448851605-deliveries';
import { SigningSecretsService } from './signing-secrets.service';
import { useMigratedDatabase } from '../../../test/support/service-database';
import { keyring, randomKeyText, refusal } from '../../../test/support/keyrings';

/**
 * Signing secrets at rest against a real PostgreSQL: the database starts at the delivery schema from before sealing,
 * holds plaintext secrets there, and is then migrated, as an installation that upgrades.
 */
const logger = createLogger('delivery', 'silent');
const oldKey = randomKeyText();
const newKey = randomKeyText();

const database = useMigratedDatabase('delivery_sealing', { ...delivery.database, migrations: [Deliveries1795448851605] }, 4);
let db: DataSource;
const legacy = { current: newSigningSecret(), previous: newSigningSecret(), expired: newSigningSecret() };

function service(keys: Keyring): SigningSecretsService {
  return new SigningSecretsService(db, { secretsKeys: keys, secretsKeyIsDev: false } as DeliveryConfig, logger);
}

interface RawRow {
  id: string;
  workspace_id: string;
  unsealed_secret: string | null;
  sealed: Buffer | null;
  key_id: string | null;
  whole_row: string;
}

async function raw(workspaceId: string): Promise<RawRow[]> {
  return (await db.query(
    `SELECT id::text AS id, workspace_id, unsealed_secret, sealed, key_id, t::text AS whole_row FROM signing_secrets t WHERE workspace_id = $1 ORDER BY id`,
    [workspaceId],
  )) as RawRow[];
}

/** Neither the secret nor its random part appears in the row, as text or among the sealed bytes. */
function expectNoPlaintext(rows: RawRow[], secrets: readonly string[]): void {
  for (const row of rows) {
    expect(row.unsealed_secret).toBeNull();
    expect(row.whole_row).not.toContain('whsec_');
    for (const secret of secrets) {
      expect(row.whole_row).not.toContain(secret.slice('whsec_'.length));
      expect(row.sealed!.includes(Buffer.from(secret))).toBe(false);
    }
  }
}

beforeAll(async () => {
  db = database.dataSource;
  // Written by the delivery service before signing secrets were sealed.
  await db.query(`INSERT INTO signing_secrets (workspace_id, secret, expires_at) VALUES ('ws_legacy', $1, now() + interval '1 hour')`, [legacy.previous]);
  await db.query(`INSERT INTO signing_secrets (workspace_id, secret) VALUES ('ws_legacy', $1)`, [legacy.current]);
  await db.query(`INSERT INTO signing_secrets (workspace_id, secret, expires_at) VALUES ('ws_legacy_expired', $1, now() - interval '1 hour')`, [
    legacy.expired,
  ]);
  await migrateDatabase(database.url, delivery.database, logger);
});

describe('signing secrets at rest', () => {
  it('from before the migration are read as they are, then sealed at start-up, once', async () => {
    const secrets = service(keyring(`old:${oldKey}`));
    expect(await secrets.signing('ws_legacy')).toEqual([legacy.current, legacy.previous]);
    expect((await raw('ws_legacy')).map((row) => row.unsealed_secret)).toEqual([legacy.previous, legacy.current]);

    expect(await secrets.sealAtRest()).toEqual({ sealed: 3, resealed: 0, unreadable: 0 });
    const rows = [...(await raw('ws_legacy')), ...(await raw('ws_legacy_expired'))];
    expect(rows.map((row) => row.key_id)).toEqual(['old', 'old', 'old']);
    expectNoPlaintext(rows, Object.values(legacy));
    expect(await secrets.signing('ws_legacy')).toEqual([legacy.current, legacy.previous]);
    expect(await secrets.view('ws_legacy')).toMatchObject({ hint: `whsec_…${legacy.current.slice(-4)}` });

    expect(await secrets.sealAtRest()).toEqual({ sealed: 0, resealed: 0, unreadable: 0 });
  });

  it('are stored sealed when created and when rotated', async () => {
    const secrets = service(keyring(`old:${oldKey}`));
    const [first] = await secrets.signing('ws_new');
    const rotated = await secrets.rotate('ws_new');
    expect(isSigningSecret(first)).toBe(true);
    expect(await secrets.signing('ws_new')).toEqual([rotated.secret, first]);
    const rows = await raw('ws_new');
    expect(rows).toHaveLength(2);
    expect(rows.map((row) => row.key_id)).toEqual(['old', 'old']);
    expectNoPlaintext(rows, [first!, rotated.secret]);
    expect(await db.query(`SELECT id FROM signing_secrets WHERE unsealed_secret IS NOT NULL`)).toEqual([]);
  });

  it('are read after DELIVERY_SECRETS_KEY is rotated, sealed again under the new key, and then need only it', async () => {
    const before = service(keyring(`old:${oldKey}`));
    const [secret] = await before.signing('ws_rotate_key');

    const rotated = service(keyring(`new:${newKey},old:${oldKey}`));
    expect(await rotated.signing('ws_rotate_key')).toEqual([secret]);
    const [created] = await rotated.signing('ws_created_after');
    expect((await raw('ws_created_after')).map((row) => row.key_id)).toEqual(['new']);

    const swept = await rotated.sealAtRest();
    expect(swept.sealed).toBe(0);
    expect(swept.resealed).toBeGreaterThanOrEqual(1);
    expect(swept.unreadable).toBe(0);
    expect((await raw('ws_rotate_key')).map((row) => row.key_id)).toEqual(['new']);

    const newOnly = service(keyring(`new:${newKey}`));
    expect(await newOnly.signing('ws_rotate_key')).toEqual([secret]);
    expect(await newOnly.signing('ws_created_after')).toEqual([created]);
    expect(await newOnly.signing('ws_legacy')).toEqual([legacy.current, legacy.previous]);
    expect(await newOnly.sealAtRest()).toEqual({ sealed: 0, resealed: 0, unreadable: 0 });
  });

  it('under a key no longer listed are reported and never signed with, nor replaced', async () => {
    const gone = service(keyring(`gone:${randomKeyText()}`));
    await gone.signing('ws_orphan');
    const keys = keyring(`new:${newKey}`);
    const secrets = service(keys);
    expect(await secrets.sealAtRest()).toEqual({ sealed: 0, resealed: 0, unreadable: 1 });
    expect(String(await refusal(secrets.signing('ws_orphan')))).toContain('DELIVERY_SECRETS_KEY does not open');
    expect(await refusal(secrets.view('ws_orphan'))).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect((await raw('ws_orphan')).map((row) => row.key_id)).toEqual(['gone']);
  });

  it('copied onto another workspace’s row, or another row of the same workspace, do not open', async () => {
    const secrets = service(keyring(`new:${newKey}`));
    await secrets.signing('ws_victim');
    await secrets.signing('ws_thief');
    await secrets.rotate('ws_thief');
    const [victim] = await raw('ws_victim');
    const [previous, current] = await raw('ws_thief');
    await db.query(`UPDATE signing_secrets SET sealed = $2, key_id = $3 WHERE id = $1`, [current!.id, victim!.sealed, victim!.key_id]);
    const refused = await refusal(secrets.signing('ws_thief'));
    expect(refused).toBeInstanceOf(Error);
    expect(refused).not.toBeInstanceOf(ServiceError);
    expect(await refusal(secrets.view('ws_thief'))).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });

    await db.query(`UPDATE signing_secrets SET sealed = $2, key_id = $3 WHERE id = $1`, [current!.id, previous!.sealed, previous!.key_id]);
    expect(String(await refusal(secrets.signing('ws_thief')))).toContain(`signing secret ${current!.id}`);
  });

  it('refuse a row that holds its secret twice, or neither way', async () => {
    const secrets = service(keyring(`new:${newKey}`));
    await secrets.signing('ws_constraint');
    const [row] = await raw('ws_constraint');
    await expect(db.query(`UPDATE signing_secrets SET unsealed_secret = 'whsec_x' WHERE id = $1`, [row!.id])).rejects.toThrow(/signing_secrets_held_once/);
    await expect(db.query(`UPDATE signing_secrets SET sealed = NULL, key_id = NULL WHERE id = $1`, [row!.id])).rejects.toThrow(/signing_secrets_held_once/);
    await expect(db.query(`UPDATE signing_secrets SET key_id = NULL WHERE id = $1`, [row!.id])).rejects.toThrow(/signing_secrets_held_once/);
  });
});

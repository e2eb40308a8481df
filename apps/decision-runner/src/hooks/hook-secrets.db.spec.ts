import { DataSource } from 'typeorm';
import { createLogger, migrateDatabase } from '@ds/platform';
import { Keyring } from '@ds/sealing';
import { DecisionRunnerConfig } from '../config';
import { decisionRunner } from '../main';
import { DecisionHooks1795448775114 } from '../migrations/1795448775114-decision-hooks';
import { ExecutionRetention1764400000000 } from '../migrations/1764400000000-execution-retention';
import { Initial1763780000000 } from '../migrations/1763780000000-initial';
import { MigratedDatabase, migratedDatabase } from '../../../../test/support/service-database';
import { newHookSecret, newHookToken, tokenHash } from './hook-credentials';
import { HooksService } from './hooks.service';
import { keyring, randomKeyText, refusal } from '../../../../test/support/keyrings';
import { DecisionStore } from '../decisions/decision.store';
import { HookStore } from './hook.store';

/**
 * Secret-URL secrets at rest against a real PostgreSQL: the database starts at the runner schema from before
 * sealing, holds plaintext secrets there, and is then migrated, as an installation that upgrades.
 */
const logger = createLogger('decision-runner', 'silent');
const oldKey = randomKeyText();
const newKey = randomKeyText();

let database: MigratedDatabase;
let db: DataSource;

function service(keys: Keyring): HooksService {
  return new HooksService(DecisionStore.of(db), new HookStore(db), { secretsKeys: keys, secretsKeyIsDev: false } as DecisionRunnerConfig, logger);
}

let sequence = 0;
async function decision(workspaceId: string): Promise<{ workspaceId: string; decisionId: string }> {
  sequence += 1;
  const decisionId = `dec_sealed${String(sequence).padStart(10, '0')}`;
  await db.query(
    `INSERT INTO decisions (id, workspace_id, slug, name, draft_schema, revision, active_version, endpoint_enabled)
     VALUES ($1, $2, $3, $3, '{}', 1, 1, true)`,
    [decisionId, workspaceId, `sealed-${sequence}`],
  );
  return { workspaceId, decisionId };
}

interface RawRow {
  unsealed_secret: string | null;
  sealed_secret: Buffer | null;
  secret_key_id: string | null;
  whole_row: string;
}

async function raw(decisionId: string): Promise<RawRow> {
  const [row] = (await db.query(`SELECT unsealed_secret, sealed_secret, secret_key_id, h::text AS whole_row FROM decision_hooks h WHERE decision_id = $1`, [
    decisionId,
  ])) as RawRow[];
  if (!row) throw new Error(`no hook for ${decisionId}`);
  return row;
}

/** Neither the secret nor its random part appears in the row, as text or among the sealed bytes. */
function expectNoPlaintext(row: RawRow, secret: string): void {
  expect(row.unsealed_secret).toBeNull();
  expect(row.whole_row).not.toContain('whsec_');
  expect(row.whole_row).not.toContain(secret.slice('whsec_'.length));
  expect(row.sealed_secret!.includes(Buffer.from(secret))).toBe(false);
}

const legacySecret = newHookSecret();
const legacyToken = newHookToken();
let legacy: { workspaceId: string; decisionId: string };
let legacyWithout: { workspaceId: string; decisionId: string };
const legacyWithoutToken = newHookToken();

beforeAll(async () => {
  database = await migratedDatabase(
    'runner_sealing',
    { ...decisionRunner.database, migrations: [Initial1763780000000, ExecutionRetention1764400000000, DecisionHooks1795448775114] },
    4,
  );
  db = database.dataSource;
  // Written by decision-runner before secret-URL secrets were sealed: one URL with a secret, one without.
  legacy = await decision('ws_legacy');
  legacyWithout = await decision('ws_legacy');
  await db.query(`INSERT INTO decision_hooks (decision_id, workspace_id, token_hash, secret) VALUES ($1, $2, $3, $4)`, [
    legacy.decisionId,
    legacy.workspaceId,
    tokenHash(legacyToken),
    legacySecret,
  ]);
  await db.query(`INSERT INTO decision_hooks (decision_id, workspace_id, token_hash) VALUES ($1, $2, $3)`, [
    legacyWithout.decisionId,
    legacyWithout.workspaceId,
    tokenHash(legacyWithoutToken),
  ]);
  await migrateDatabase(database.url, decisionRunner.database, logger);
});

afterAll(async () => {
  await database?.drop();
});

describe('secret-URL secrets at rest', () => {
  it('from before the migration are read as they are, then sealed at start-up, once', async () => {
    const hooks = service(keyring(`old:${oldKey}`));
    expect((await hooks.resolve(tokenHash(legacyToken)))?.secret).toBe(legacySecret);
    expect((await raw(legacy.decisionId)).unsealed_secret).toBe(legacySecret);

    expect(await hooks.sealAtRest()).toEqual({ sealed: 1, resealed: 0, unreadable: 0 });
    const row = await raw(legacy.decisionId);
    expect(row.secret_key_id).toBe('old');
    expectNoPlaintext(row, legacySecret);
    expect(await hooks.resolve(tokenHash(legacyToken))).toEqual({ ...legacy, slug: expect.any(String), secret: legacySecret });
    expect((await hooks.resolve(tokenHash(legacyWithoutToken)))?.secret).toBeNull();
    expect(await raw(legacyWithout.decisionId)).toMatchObject({ unsealed_secret: null, sealed_secret: null, secret_key_id: null });

    expect(await hooks.sealAtRest()).toEqual({ sealed: 0, resealed: 0, unreadable: 0 });
  });

  it('are stored sealed when created, and gone when deleted', async () => {
    const hooks = service(keyring(`old:${oldKey}`));
    const ref = await decision('ws_new');
    const token = (await hooks.enable(ref)).token!;
    const secret = (await hooks.createSecret(ref)).secret!;
    expect((await hooks.resolve(tokenHash(token)))?.secret).toBe(secret);
    const row = await raw(ref.decisionId);
    expect(row.secret_key_id).toBe('old');
    expectNoPlaintext(row, secret);

    await hooks.deleteSecret(ref);
    expect(await raw(ref.decisionId)).toMatchObject({ unsealed_secret: null, sealed_secret: null, secret_key_id: null });
    expect((await hooks.resolve(tokenHash(token)))?.secret).toBeNull();
    expect(await db.query(`SELECT decision_id FROM decision_hooks WHERE unsealed_secret IS NOT NULL`)).toEqual([]);
  });

  it('are read after RUNNER_SECRETS_KEY is rotated, sealed again under the new key, and then need only it', async () => {
    const before = service(keyring(`old:${oldKey}`));
    const ref = await decision('ws_rotate_key');
    const token = (await before.enable(ref)).token!;
    const secret = (await before.createSecret(ref)).secret!;

    const rotated = service(keyring(`new:${newKey},old:${oldKey}`));
    expect((await rotated.resolve(tokenHash(token)))?.secret).toBe(secret);
    const swept = await rotated.sealAtRest();
    expect(swept).toMatchObject({ sealed: 0, unreadable: 0 });
    expect(swept.resealed).toBeGreaterThanOrEqual(2);
    expect((await raw(ref.decisionId)).secret_key_id).toBe('new');

    const newOnly = service(keyring(`new:${newKey}`));
    expect((await newOnly.resolve(tokenHash(token)))?.secret).toBe(secret);
    expect((await newOnly.resolve(tokenHash(legacyToken)))?.secret).toBe(legacySecret);
    expect(await newOnly.sealAtRest()).toEqual({ sealed: 0, resealed: 0, unreadable: 0 });
  });

  it('under a key no longer listed are reported and refuse the call, never answered as no secret', async () => {
    const gone = service(keyring(`gone:${randomKeyText()}`));
    const ref = await decision('ws_orphan');
    const token = (await gone.enable(ref)).token!;
    await gone.createSecret(ref);
    const hooks = service(keyring(`new:${newKey}`));
    expect(await hooks.sealAtRest()).toEqual({ sealed: 0, resealed: 0, unreadable: 1 });
    expect(await refusal(hooks.resolve(tokenHash(token)))).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect((await raw(ref.decisionId)).secret_key_id).toBe('gone');
    // A new secret replaces the one no key opens.
    const secret = (await hooks.createSecret(ref)).secret!;
    expect((await hooks.resolve(tokenHash(token)))?.secret).toBe(secret);
  });

  it('copied onto another workspace’s URL, or another URL of the same workspace, do not open', async () => {
    const hooks = service(keyring(`new:${newKey}`));
    const victim = await decision('ws_victim');
    const thief = await decision('ws_thief');
    const sibling = await decision('ws_victim');
    for (const ref of [victim, thief, sibling]) {
      await hooks.enable(ref);
      await hooks.createSecret(ref);
    }
    const stolen = await raw(victim.decisionId);
    for (const target of [thief, sibling]) {
      await db.query(`UPDATE decision_hooks SET sealed_secret = $2, secret_key_id = $3 WHERE decision_id = $1`, [
        target.decisionId,
        stolen.sealed_secret,
        stolen.secret_key_id,
      ]);
      const token = (await hooks.rotate(target)).token!;
      expect(await refusal(hooks.resolve(tokenHash(token)))).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    }
  });

  it('refuse a row that holds its secret twice, or a sealed value without its key id', async () => {
    const hooks = service(keyring(`new:${newKey}`));
    const ref = await decision('ws_constraint');
    await hooks.enable(ref);
    await hooks.createSecret(ref);
    await expect(db.query(`UPDATE decision_hooks SET unsealed_secret = 'whsec_x' WHERE decision_id = $1`, [ref.decisionId])).rejects.toThrow(
      /decision_hooks_secret_held_once/,
    );
    await expect(db.query(`UPDATE decision_hooks SET secret_key_id = NULL WHERE decision_id = $1`, [ref.decisionId])).rejects.toThrow(
      /decision_hooks_secret_held_once/,
    );
  });
});

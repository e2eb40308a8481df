import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { credentialAad } from '@ds/engine';
import { createLogger, NatsLink } from '@ds/platform';
import { Keyring, sealWithKeyring } from '@ds/sealing';
import { EngineProxyConfig } from '../config';
import { engineProxy } from '../main';
import { CredentialsService } from './credentials.service';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { keyring, randomKeyText } from '../../../../test/support/keyrings';

/** Key rotation against a real PostgreSQL with engine-proxy's migrations; the change notices go nowhere. */
const logger = createLogger('engine-proxy', 'silent');
const notices: string[] = [];
const nats = { connection: { publish: (_subject: string, workspaceId: string) => notices.push(workspaceId) } } as unknown as NatsLink;

const database = useMigratedDatabase('engine_keys', engineProxy.database, 4);
let db: DataSource;

function service(keys: Keyring): CredentialsService {
  return new CredentialsService(db, { credentialsKeys: keys, credentialsKeyIsDev: false } as EngineProxyConfig, nats, logger);
}

beforeAll(async () => {
  db = database.dataSource;
});

describe('provider keys across a rotation of ENGINE_CREDENTIALS_KEY', () => {
  it('are sealed again under the new first key, and one under a key no longer listed is reported, not lost', async () => {
    const oldKey = randomKeyText();
    const newKey = randomKeyText();
    const bareKey = randomKeyText();
    const saved = randomUUID();
    const legacy = randomUUID();
    const orphan = randomUUID();
    await service(keyring(`old:${oldKey}`)).setKey({ workspaceId: saved, provider: 'openai', apiKey: 'sk-saved-under-old' });
    // Saved before keys had ids: the row names the key by its fingerprint.
    await service(keyring(bareKey)).setKey({ workspaceId: legacy, provider: 'anthropic', apiKey: 'sk-ant-legacy-key' });
    const lost = sealWithKeyring(keyring(`gone:${randomKeyText()}`), 'sk-orphaned-key', credentialAad(orphan, 'openai'));
    await db.query(
      `INSERT INTO provider_credentials (workspace_id, use_own_key, provider, sealed, key_id, last4) VALUES ($1, true, 'openai', $2, 'gone', 'nkey')`,
      [orphan, lost.sealed],
    );

    const rotated = service(keyring(`new:${newKey},old:${oldKey},legacy:${bareKey}`));
    expect(await rotated.resealUnderPrimaryKey()).toEqual({ resealed: 2, unreadable: 1 });
    const rows = (await db.query('SELECT workspace_id, key_id FROM provider_credentials')) as Array<{ workspace_id: string; key_id: string }>;
    expect(Object.fromEntries(rows.map((row) => [row.workspace_id, row.key_id]))).toEqual({ [saved]: 'new', [legacy]: 'new', [orphan]: 'gone' });
    expect(notices).toEqual(expect.arrayContaining([saved, legacy]));

    // The old keys can go now: the new key alone opens what was resealed.
    const newOnly = service(keyring(`new:${newKey}`));
    expect((await newOnly.forWorkspace(saved)).key).toEqual({ provider: 'openai', apiKey: 'sk-saved-under-old' });
    expect((await newOnly.forWorkspace(legacy)).key).toEqual({ provider: 'anthropic', apiKey: 'sk-ant-legacy-key' });
    expect(await newOnly.forWorkspace(orphan)).toMatchObject({ key: null, unreadable: true });
    expect(await newOnly.resealUnderPrimaryKey()).toEqual({ resealed: 0, unreadable: 1 });
  });
});

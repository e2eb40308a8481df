import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ListWorkspaceSecretsReply, PutWorkspaceSecretReply, ServiceError, WorkspaceSecretView } from '@ds/contracts';
import { SECRET_NAME, SECRETS_PER_WORKSPACE } from '@ds/decision-schema';
import { Logger, PLATFORM, rowsAffected, sealAtRest, SealingCounts } from '@ds/platform';
import { openWithKeyring, rowAad, sealWithKeyring } from '@ds/sealing';
import { DeliveryConfig } from './config';

interface SecretRow {
  workspace_id: string;
  name: string;
  sealed: Buffer;
  key_id: string;
  created_at: Date;
  updated_at: Date;
}

/** Rows sealed again per statement after DELIVERY_SECRETS_KEY is rotated. */
const RESEAL_BATCH = 100;

/** Binds a sealed value to its workspace and name: a value copied onto another row does not open. */
export function workspaceSecretAad(workspaceId: string, name: string): Buffer {
  return rowAad('workspace_secrets', workspaceId, name);
}

function view(row: Pick<SecretRow, 'name' | 'created_at' | 'updated_at'>): WorkspaceSecretView {
  return { name: row.name, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

function notFound(): ServiceError {
  return new ServiceError('NOT_FOUND', 'No secret with this name in the workspace.');
}

/**
 * A workspace's secrets: named values filled into destination headers as calls leave (deliveries here, sync agent
 * calls in the runner). Sealed at rest under DELIVERY_SECRETS_KEY; their values leave this service only to the
 * runner, and no reply of the API carries them.
 */
@Injectable()
export class WorkspaceSecretsService implements OnApplicationBootstrap {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: DeliveryConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    void this.sealAtRest().catch((error: unknown) => this.logger.error({ err: error }, 'sealing workspace secrets under the current key failed'));
  }

  async list(workspaceId: string): Promise<ListWorkspaceSecretsReply> {
    const rows = (await this.db.query('SELECT name, created_at, updated_at FROM workspace_secrets WHERE workspace_id = $1 ORDER BY name', [
      workspaceId,
    ])) as SecretRow[];
    return { data: rows.map(view) };
  }

  /** Creates or replaces a secret; the 51st name is refused, replacing one of the 50 is not. */
  async put(workspaceId: string, secretName: string, value: string): Promise<PutWorkspaceSecretReply> {
    const { sealed, keyId } = sealWithKeyring(this.config.secretsKeys, value, workspaceSecretAad(workspaceId, secretName));
    return this.db.transaction(async (manager) => {
      // One workspace's writes queue here, so the count holds when creates race.
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('delivery.workspace-secrets'), hashtext($1))`, [workspaceId]);
      const [counted] = (await manager.query('SELECT count(*)::int AS held, bool_or(name = $2) AS exists FROM workspace_secrets WHERE workspace_id = $1', [
        workspaceId,
        secretName,
      ])) as Array<{ held: number; exists: boolean | null }>;
      // count(*) without GROUP BY answers exactly one row.
      const { held, exists } = counted!;
      if (!exists && held >= SECRETS_PER_WORKSPACE) {
        throw new ServiceError('CONFLICT', `A workspace holds at most ${SECRETS_PER_WORKSPACE} secrets; delete one first.`, { limit: SECRETS_PER_WORKSPACE });
      }
      // An INSERT answers its RETURNING rows as they are (no affected count, unlike UPDATE and DELETE).
      const [row] = (await manager.query(
        `INSERT INTO workspace_secrets (workspace_id, name, sealed, key_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (workspace_id, name) DO UPDATE SET sealed = EXCLUDED.sealed, key_id = EXCLUDED.key_id, updated_at = now()
         RETURNING name, created_at, updated_at`,
        [workspaceId, secretName, sealed, keyId],
      )) as SecretRow[];
      return { created: !exists, secret: view(row!) };
    });
  }

  async delete(workspaceId: string, name: string): Promise<{ deleted: true }> {
    if (typeof name !== 'string' || !SECRET_NAME.test(name)) throw notFound();
    const removed = rowsAffected(await this.db.query('DELETE FROM workspace_secrets WHERE workspace_id = $1 AND name = $2', [workspaceId, name]));
    if (removed === 0) throw notFound();
    return { deleted: true };
  }

  /**
   * The values of the named secrets that are set. A value no key of the ring opens is a fault of the service's
   * configuration, not of the caller: 503, and the call is tried again later rather than sent without it.
   */
  async values(workspaceId: string, names: readonly string[]): Promise<Record<string, string>> {
    const wanted = names.filter((name) => typeof name === 'string' && SECRET_NAME.test(name));
    if (wanted.length === 0) return {};
    const rows = (await this.db.query('SELECT workspace_id, name, sealed, key_id FROM workspace_secrets WHERE workspace_id = $1 AND name = ANY($2)', [
      workspaceId,
      wanted,
    ])) as SecretRow[];
    const values: Record<string, string> = {};
    for (const row of rows) {
      const value = openWithKeyring(this.config.secretsKeys, row.key_id, row.sealed, workspaceSecretAad(row.workspace_id, row.name));
      if (value === null) {
        this.logger.error({ workspaceId, name: row.name, keyId: row.key_id }, 'a workspace secret opens with no key of DELIVERY_SECRETS_KEY');
        throw new ServiceError('SERVICE_UNAVAILABLE', 'A secret cannot be read right now; try again later.');
      }
      values[row.name] = value;
    }
    return values;
  }

  /** After DELIVERY_SECRETS_KEY is rotated, every secret sealed again under its first key. */
  sealAtRest(): Promise<SealingCounts> {
    const keyring = this.config.secretsKeys;
    return sealAtRest<SecretRow, { workspaceId: string; name: string }>(
      {
        secrets: 'workspace secrets',
        keyVariable: 'DELIVERY_SECRETS_KEY',
        primaryKeyId: keyring.primaryId,
        nextBatch: async (after) =>
          (await this.db.query(
            `SELECT workspace_id, name, sealed, key_id FROM workspace_secrets
              WHERE (workspace_id, name) > ($1, $2) AND key_id <> $3
              ORDER BY workspace_id, name LIMIT ${RESEAL_BATCH}`,
            [after?.workspaceId ?? '', after?.name ?? '', keyring.primaryId],
          )) as SecretRow[],
        cursorOf: (row) => ({ workspaceId: row.workspace_id, name: row.name }),
        isPlaintext: () => false,
        plaintextOf: (row) => openWithKeyring(keyring, row.key_id, row.sealed, workspaceSecretAad(row.workspace_id, row.name)),
        writeSealed: async (row, value) => {
          const { sealed, keyId } = sealWithKeyring(keyring, value, workspaceSecretAad(row.workspace_id, row.name));
          const written = await this.db.query(`UPDATE workspace_secrets SET sealed = $3, key_id = $4 WHERE workspace_id = $1 AND name = $2 AND sealed = $5`, [
            row.workspace_id,
            row.name,
            sealed,
            keyId,
            row.sealed,
          ]);
          return rowsAffected(written) > 0;
        },
      },
      this.logger,
    );
  }
}

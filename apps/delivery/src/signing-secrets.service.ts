import { Inject, Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { RotatedSigningSecretReply, ServiceError, SigningSecretView } from '@ds/contracts';
import { Logger, PLATFORM, rowsAffected, rowsReturned, sealAtRest, SealingCounts } from '@ds/platform';
import { openWithKeyring, rowAad, sealWithKeyring } from '@ds/sealing';
import { newSigningSecret, ROTATION_OVERLAP_MS, secretHint } from '@ds/webhooks';
import { DeliveryConfig } from './config';

/** A signing secret as stored: sealed, or still in plaintext until the start-up sweep reaches it. */
interface StoredSecret {
  id: string;
  workspace_id: string;
  unsealed_secret: string | null;
  sealed: Buffer | null;
  key_id: string | null;
}

const STORED_COLUMNS = 'id::text AS id, workspace_id, unsealed_secret, sealed, key_id';
/** Rows sealed per statement by the start-up sweep. */
const SEAL_BATCH = 100;

/** Binds a sealed secret to its workspace and row: a value copied onto another row does not open. */
export function signingSecretAad(workspaceId: string, secretId: string): Buffer {
  return rowAad('signing_secrets', workspaceId, secretId);
}

/**
 * Each workspace's `whsec_` signing secret: created on demand (the first delivery, or the first rotation), and
 * rotated with an overlap during which the previous secret signs beside the new one. Rotating again during an
 * overlap ends the earlier overlap, so an attempt carries at most two signatures. Secrets are stored sealed under
 * DELIVERY_SECRETS_KEY; each is opened only to sign or to show its last four characters.
 */
@Injectable()
export class SigningSecretsService implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: DeliveryConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    if (this.config.secretsKeyIsDev) {
      this.logger.warn(
        'DELIVERY_SECRETS_KEY is unset: signing secrets are encrypted with the public development key; set it (openssl rand -base64 32) anywhere but a laptop',
      );
    }
  }

  onApplicationBootstrap(): void {
    // In the background: a start must not wait on (or fail with) a sweep that resumes at the next start, and rows
    // the sweep has not reached yet are read as they are.
    void this.sealAtRest().catch((error: unknown) => this.logger.error({ err: error }, 'sealing signing secrets under the current key failed'));
  }

  /** The secrets that sign now, newest first; creates the workspace's first secret when it has none. */
  async signing(workspaceId: string): Promise<string[]> {
    const current = await this.valid(workspaceId);
    if (current.length > 0) return current;
    await this.insert(this.db.manager, workspaceId, newSigningSecret(), 'unless a current one exists');
    return this.valid(workspaceId);
  }

  async rotate(workspaceId: string): Promise<RotatedSigningSecretReply> {
    const secret = newSigningSecret();
    return this.db.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('delivery.signing-secret'), hashtext($1))`, [workspaceId]);
      await manager.query(`UPDATE signing_secrets SET expires_at = now() WHERE workspace_id = $1 AND expires_at > now()`, [workspaceId]);
      const [rotated] = rowsReturned<{ expires_at: Date }>(
        await manager.query(
          `UPDATE signing_secrets SET expires_at = now() + make_interval(secs => $2::double precision / 1000) WHERE workspace_id = $1 AND expires_at IS NULL RETURNING expires_at`,
          [workspaceId, ROTATION_OVERLAP_MS],
        ),
      );
      await this.insert(manager, workspaceId, secret, 'always');
      const previous = rotated?.expires_at ?? null;
      return { secret, previous_expires_at: previous ? previous.toISOString() : null };
    });
  }

  async view(workspaceId: string): Promise<SigningSecretView | null> {
    const rows = (await this.db.query(
      `SELECT ${STORED_COLUMNS}, created_at, expires_at FROM signing_secrets
        WHERE workspace_id = $1 AND (expires_at IS NULL OR expires_at > now()) ORDER BY created_at DESC`,
      [workspaceId],
    )) as Array<StoredSecret & { created_at: Date; expires_at: Date | null }>;
    const current = rows.find((row) => row.expires_at === null);
    if (!current) return null;
    const secret = this.plaintextOf(current);
    if (secret === null) {
      this.reportUnreadable(current);
      throw new ServiceError('SERVICE_UNAVAILABLE', 'The signing secret cannot be read right now; try again later.');
    }
    const previous = rows.find((row) => row.expires_at !== null);
    return { hint: secretHint(secret), created_at: current.created_at.toISOString(), previous_expires_at: previous?.expires_at?.toISOString() ?? null };
  }

  /** Deletes secrets that stopped signing; answers how many. */
  async purgeExpired(): Promise<number> {
    return rowsAffected(await this.db.query(`DELETE FROM signing_secrets WHERE expires_at IS NOT NULL AND expires_at <= now()`));
  }

  /** Plaintext secrets sealed, and after a rotation of DELIVERY_SECRETS_KEY every secret sealed again under its first key. */
  sealAtRest(): Promise<SealingCounts> {
    const keyring = this.config.secretsKeys;
    return sealAtRest<StoredSecret, string>(
      {
        secrets: 'signing secrets',
        keyVariable: 'DELIVERY_SECRETS_KEY',
        primaryKeyId: keyring.primaryId,
        nextBatch: async (after) =>
          (await this.db.query(
            `SELECT ${STORED_COLUMNS} FROM signing_secrets
              WHERE id > $1 AND (unsealed_secret IS NOT NULL OR key_id <> $2)
              ORDER BY id LIMIT ${SEAL_BATCH}`,
            [after ?? '0', keyring.primaryId],
          )) as StoredSecret[],
        cursorOf: (row) => row.id,
        isPlaintext: (row) => row.unsealed_secret !== null,
        plaintextOf: (row) => this.plaintextOf(row),
        writeSealed: async (row, secret) => {
          const { sealed, keyId } = sealWithKeyring(keyring, secret, signingSecretAad(row.workspace_id, row.id));
          const written = await this.db.query(
            `UPDATE signing_secrets SET sealed = $2, key_id = $3, unsealed_secret = NULL
              WHERE id = $1 AND unsealed_secret IS NOT DISTINCT FROM $4 AND sealed IS NOT DISTINCT FROM $5`,
            [row.id, sealed, keyId, row.unsealed_secret, row.sealed],
          );
          return rowsAffected(written) > 0;
        },
      },
      this.logger,
    );
  }

  private async valid(workspaceId: string): Promise<string[]> {
    const rows = (await this.db.query(
      `SELECT ${STORED_COLUMNS} FROM signing_secrets
        WHERE workspace_id = $1 AND (expires_at IS NULL OR expires_at > now()) ORDER BY expires_at IS NOT NULL, created_at DESC`,
      [workspaceId],
    )) as StoredSecret[];
    return rows.map((row) => {
      const secret = this.plaintextOf(row);
      if (secret !== null) return secret;
      // Never sign with fewer secrets than the workspace has: the attempt is handed back and retried, not sent.
      this.reportUnreadable(row);
      throw new Error(`signing secret ${row.id} is sealed under key id ${row.key_id}, which DELIVERY_SECRETS_KEY does not open`);
    });
  }

  /** Seals the secret under the row's own id, drawn first because the additional data names it. */
  private async insert(manager: EntityManager, workspaceId: string, secret: string, when: 'always' | 'unless a current one exists'): Promise<void> {
    const [drawn] = (await manager.query(`SELECT nextval(pg_get_serial_sequence('signing_secrets', 'id'))::text AS id`)) as Array<{ id: string }>;
    const id = drawn!.id;
    const { sealed, keyId } = sealWithKeyring(this.config.secretsKeys, secret, signingSecretAad(workspaceId, id));
    const onConflict = when === 'always' ? '' : ' ON CONFLICT (workspace_id) WHERE expires_at IS NULL DO NOTHING';
    await manager.query(`INSERT INTO signing_secrets (id, workspace_id, sealed, key_id) VALUES ($1, $2, $3, $4)${onConflict}`, [
      id,
      workspaceId,
      sealed,
      keyId,
    ]);
  }

  private plaintextOf(row: StoredSecret): string | null {
    if (row.unsealed_secret !== null) return row.unsealed_secret;
    if (row.sealed === null || row.key_id === null) return null;
    return openWithKeyring(this.config.secretsKeys, row.key_id, row.sealed, signingSecretAad(row.workspace_id, row.id));
  }

  private reportUnreadable(row: StoredSecret): void {
    this.logger.error(
      { workspaceId: row.workspace_id, secretId: row.id, sealedWith: row.key_id, currentKey: this.config.secretsKeys.primaryId },
      'a signing secret cannot be decrypted: DELIVERY_SECRETS_KEY lacks the key it was sealed under',
    );
  }
}

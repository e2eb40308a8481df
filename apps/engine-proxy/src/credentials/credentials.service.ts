import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  BROADCAST_SUBJECTS,
  DeleteProviderKeyReply,
  ENGINE_SETTINGS_BODY,
  EngineName,
  EngineSettingsReply,
  GetProviderKeyReply,
  LlmProvider,
  parseValue,
  PROVIDER_KEY_BODY,
  PROVIDER_KEY_INVALID,
  ProviderKeyView,
  ServiceError,
  SetEngineSettingsRequest,
  SetProviderKeyRequest,
} from '@ds/contracts';
import { credentialAad, lastFour } from '@ds/engine';
import { BroadcastInvalidatedCache, Logger, NatsLink, natsNotices, PLATFORM, rowsAffected, sealAtRest, SealingCounts } from '@ds/platform';
import { openWithKeyring, sealWithKeyring } from '@ds/sealing';
import { EngineProxyConfig } from '../config';

/** What a run needs to know about a workspace's credential. */
export interface WorkspaceCredential {
  useOwnKey: boolean;
  /** The engine of the workspace's decisions that pin none; null: the service's default. */
  defaultEngine: EngineName | null;
  /** The saved key, decrypted; null when none is saved. */
  key: { provider: LlmProvider; apiKey: string } | null;
  /** A key is saved but cannot be decrypted with this service's ENGINE_CREDENTIALS_KEY. */
  unreadable: boolean;
}

interface Row {
  use_own_key: boolean;
  default_engine: EngineName | null;
  provider: LlmProvider | null;
  sealed: Buffer | null;
  key_id: string | null;
  last4: string | null;
}

const NONE: WorkspaceCredential = { useOwnKey: false, defaultEngine: null, key: null, unreadable: false };
/** Re-read after this long even if no change notice arrived (for example during a NATS outage). */
const CACHE_TTL_MS = 30_000;
/** Workspaces whose credential one replica keeps; the least recently run leave first. */
const CACHE_MAX_ENTRIES = 10_000;
/** Replica-to-replica notice: the workspace id whose credential changed. */
const CHANGED_SUBJECT = BROADCAST_SUBJECTS.engineCredentialsChanged;
/** Rows read per statement when sealing again after a key rotation. */
const RESEAL_BATCH = 100;

/** A provider key as stored: sealed under the key its id names. */
interface StoredCredential {
  workspace_id: string;
  provider: LlmProvider;
  sealed: Buffer;
  key_id: string;
}

/**
 * Workspaces' own provider keys, encrypted at rest, and their choice between their own key and the
 * service's shared key. Every run looks its workspace up, so lookups are served from a short per-replica
 * cache; a change made through any replica is broadcast so that every replica drops its copy at once.
 */
@Injectable()
export class CredentialsService implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  /** By workspace id. */
  private readonly credentials: BroadcastInvalidatedCache<string, WorkspaceCredential>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: EngineProxyConfig,
    @Inject(PLATFORM.nats) nats: NatsLink,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {
    this.credentials = new BroadcastInvalidatedCache({ bus: natsNotices(nats), subject: CHANGED_SUBJECT, max: CACHE_MAX_ENTRIES, ttlMs: CACHE_TTL_MS });
  }

  onModuleInit(): void {
    if (this.config.credentialsKeyIsDev) {
      this.logger.warn(
        'ENGINE_CREDENTIALS_KEY is unset: workspaces’ provider keys are encrypted with the public development key; set it (openssl rand -base64 32) anywhere but a laptop',
      );
    }
    this.credentials.listen();
  }

  onApplicationBootstrap(): void {
    // In the background: a start must not wait on (or fail with) a rotation that can resume at the next start.
    void this.resealUnderPrimaryKey().catch((error: unknown) => this.logger.error({ err: error }, 'sealing provider keys under the current key failed'));
  }

  onModuleDestroy(): void {
    this.credentials.close();
  }

  /**
   * After a rotation, seals every stored provider key again under the first key of ENGINE_CREDENTIALS_KEY, so
   * that the older keys can be removed once no row names them; every replica drops its copy of a resealed key.
   */
  async resealUnderPrimaryKey(): Promise<Pick<SealingCounts, 'resealed' | 'unreadable'>> {
    const keyring = this.config.credentialsKeys;
    const { resealed, unreadable } = await sealAtRest<StoredCredential, { workspaceId: string; provider: string }>(
      {
        secrets: 'provider keys',
        keyVariable: 'ENGINE_CREDENTIALS_KEY',
        primaryKeyId: keyring.primaryId,
        nextBatch: async (after) =>
          (await this.db.query(
            `SELECT workspace_id, provider, sealed, key_id FROM provider_credentials
              WHERE sealed IS NOT NULL AND key_id <> $1 AND (workspace_id, provider) > ($2, $3)
              ORDER BY workspace_id, provider LIMIT ${RESEAL_BATCH}`,
            [keyring.primaryId, after?.workspaceId ?? '', after?.provider ?? ''],
          )) as StoredCredential[],
        cursorOf: (row) => ({ workspaceId: row.workspace_id, provider: row.provider }),
        // Provider keys were sealed from the start: none is ever in plaintext.
        isPlaintext: () => false,
        plaintextOf: (row) => openWithKeyring(keyring, row.key_id, row.sealed, credentialAad(row.workspace_id, row.provider)),
        writeSealed: async (row, apiKey) => {
          const { sealed, keyId } = sealWithKeyring(keyring, apiKey, credentialAad(row.workspace_id, row.provider));
          const written = await this.db.query(
            `UPDATE provider_credentials SET sealed = $2, key_id = $3 WHERE workspace_id = $1 AND provider = $4 AND key_id = $5 AND sealed = $6`,
            [row.workspace_id, sealed, keyId, row.provider, row.key_id, row.sealed],
          );
          if (rowsAffected(written) === 0) return false;
          this.changed(row.workspace_id);
          return true;
        },
      },
      this.logger,
    );
    return { resealed, unreadable };
  }

  forWorkspace(workspaceId: string): Promise<WorkspaceCredential> {
    return this.credentials.get(workspaceId, async () => {
      const row = await this.read(workspaceId);
      return row ? this.credentialOf(workspaceId, row) : NONE;
    });
  }

  async setKey(request: SetProviderKeyRequest): Promise<ProviderKeyView> {
    // The gateway checked the body already; the bus is checked again with the same schema, so no caller reaches the
    // keyring with a value of another shape.
    const { provider, api_key: apiKey } = parseValue(PROVIDER_KEY_BODY, { provider: request.provider, api_key: request.apiKey }, PROVIDER_KEY_INVALID);
    const { sealed, keyId } = sealWithKeyring(this.config.credentialsKeys, apiKey, credentialAad(request.workspaceId, provider));
    const view = { provider, last4: lastFour(apiKey) };
    // Saving a key is choosing it: that is what someone who pastes their key in expects.
    await this.db.query(
      `INSERT INTO provider_credentials (workspace_id, use_own_key, provider, sealed, key_id, last4)
       VALUES ($1, true, $2, $3, $4, $5)
       ON CONFLICT (workspace_id) DO UPDATE SET use_own_key = true, provider = EXCLUDED.provider, sealed = EXCLUDED.sealed,
         key_id = EXCLUDED.key_id, last4 = EXCLUDED.last4, updated_at = now()`,
      [request.workspaceId, provider, sealed, keyId, view.last4],
    );
    this.changed(request.workspaceId);
    return view;
  }

  async getKey(workspaceId: string): Promise<GetProviderKeyReply> {
    const row = await this.read(workspaceId);
    return viewOf(row);
  }

  async deleteKey(workspaceId: string): Promise<DeleteProviderKeyReply> {
    const deleted = rowsAffected(
      await this.db.query(
        `UPDATE provider_credentials SET provider = NULL, sealed = NULL, key_id = NULL, last4 = NULL, updated_at = now()
         WHERE workspace_id = $1 AND sealed IS NOT NULL`,
        [workspaceId],
      ),
    );
    this.changed(workspaceId);
    return { deleted: deleted > 0 };
  }

  async settings(workspaceId: string): Promise<EngineSettingsReply> {
    const row = await this.read(workspaceId);
    return {
      useOwnKey: row?.use_own_key ?? false,
      providerKey: viewOf(row),
      llmProvider: this.config.llm.protocol,
      defaultEngine: row?.default_engine ?? null,
      serviceDefaultEngine: this.config.defaultEngine,
    };
  }

  async setSettings(request: SetEngineSettingsRequest): Promise<EngineSettingsReply> {
    // Leaving a setting out changes nothing; `defaultEngine: null` goes back to the service's default.
    parseValue(ENGINE_SETTINGS_BODY, { use_own_key: request.useOwnKey, default_engine: request.defaultEngine }, 'The engine settings are not valid.');
    const useOwnKey = request.useOwnKey ?? null;
    if (useOwnKey === true && !viewOf(await this.read(request.workspaceId))) {
      // Choosing a key that is not there would make every llm run fail with ENGINE_NOT_CONFIGURED.
      throw new ServiceError('CONFLICT', 'Save a provider key (and test it) before choosing to use it: without one every run would fail.', [
        { path: 'use_own_key', message: 'no provider key is saved' },
      ]);
    }
    await this.db.query(
      `INSERT INTO provider_credentials (workspace_id, use_own_key, default_engine) VALUES ($1, COALESCE($2, false), $3)
       ON CONFLICT (workspace_id) DO UPDATE SET
         use_own_key = COALESCE($2, provider_credentials.use_own_key),
         default_engine = CASE WHEN $4 THEN EXCLUDED.default_engine ELSE provider_credentials.default_engine END,
         updated_at = now()`,
      [request.workspaceId, useOwnKey, request.defaultEngine ?? null, request.defaultEngine !== undefined],
    );
    this.changed(request.workspaceId);
    return this.settings(request.workspaceId);
  }

  private async read(workspaceId: string): Promise<Row | null> {
    const rows = (await this.db.query('SELECT use_own_key, default_engine, provider, sealed, key_id, last4 FROM provider_credentials WHERE workspace_id = $1', [
      workspaceId,
    ])) as Row[];
    return rows[0] ?? null;
  }

  private credentialOf(workspaceId: string, row: Row): WorkspaceCredential {
    const base = { useOwnKey: row.use_own_key, defaultEngine: row.default_engine };
    if (row.sealed === null || row.provider === null) return { ...base, key: null, unreadable: false };
    const apiKey = openWithKeyring(this.config.credentialsKeys, row.key_id ?? '', row.sealed, credentialAad(workspaceId, row.provider));
    if (apiKey === null) {
      this.logger.error(
        { workspaceId, sealedWith: row.key_id, currentKey: this.config.credentialsKeys.primaryId },
        'a saved provider key cannot be decrypted: ENGINE_CREDENTIALS_KEY lacks the key it was saved under',
      );
      return { ...base, key: null, unreadable: true };
    }
    return { ...base, key: { provider: row.provider, apiKey }, unreadable: false };
  }

  /** A deleted workspace's credential goes with it; deleting twice deletes nothing more. */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    await this.db.query('DELETE FROM provider_credentials WHERE workspace_id = $1', [workspaceId]);
    this.changed(workspaceId);
  }

  private changed(workspaceId: string): void {
    this.credentials.invalidate(workspaceId);
  }
}

function viewOf(row: Row | null): ProviderKeyView | null {
  return row?.provider && row.last4 ? { provider: row.provider, last4: row.last4 } : null;
}

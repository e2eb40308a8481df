import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Subscription } from 'nats';
import { DataSource } from 'typeorm';
import {
  DeleteProviderKeyReply,
  EngineSettingsReply,
  GetProviderKeyReply,
  LlmProvider,
  ProviderKeyView,
  ServiceError,
  SetEngineSettingsRequest,
  SetProviderKeyRequest,
} from '@ds/contracts';
import { credentialAad, credentialsKeyId, isProvider, lastFour, openCredential, providerKeyProblem, sealCredential } from '@ds/engine';
import { Logger, NatsLink, PLATFORM } from '@ds/platform';
import { EngineProxyConfig } from '../config';

/** What a run needs to know about a workspace's credential. */
export interface WorkspaceCredential {
  useOwnKey: boolean;
  /** The saved key, decrypted; null when none is saved. */
  key: { provider: LlmProvider; apiKey: string } | null;
  /** A key is saved but cannot be decrypted with this service's ENGINE_CREDENTIALS_KEY. */
  unreadable: boolean;
}

interface Row {
  use_own_key: boolean;
  provider: LlmProvider | null;
  sealed: Buffer | null;
  key_id: string | null;
  last4: string | null;
}

const NONE: WorkspaceCredential = { useOwnKey: false, key: null, unreadable: false };
/** Re-read after this long even if no change notice arrived (for example during a NATS outage). */
const CACHE_TTL_MS = 30_000;
/** Replica-to-replica notice: the workspace id whose credential changed. */
const CHANGED_SUBJECT = 'v1.engine-proxy.credentials.changed';

/**
 * Workspaces' own provider keys, encrypted at rest, and their choice between their own key and the
 * service's shared key. Every run looks its workspace up, so lookups are served from a short per-replica
 * cache; a change made through any replica is broadcast so that every replica drops its copy at once.
 */
@Injectable()
export class CredentialsService implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new Map<string, { value: WorkspaceCredential; at: number }>();
  private subscription: Subscription | null = null;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: EngineProxyConfig,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    if (this.config.credentialsKeyIsDev) {
      this.logger.warn('ENGINE_CREDENTIALS_KEY is unset: workspaces’ provider keys are encrypted with the public development key; set it (openssl rand -base64 32) anywhere but a laptop');
    }
    this.subscription = this.nats.connection.subscribe(CHANGED_SUBJECT, { callback: (_error, message) => this.cache.delete(message.string()) });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  async forWorkspace(workspaceId: string): Promise<WorkspaceCredential> {
    const cached = this.cache.get(workspaceId);
    if (cached && Date.now() - cached.at < CACHE_TTL_MS) return cached.value;
    const row = await this.read(workspaceId);
    const value = row ? this.credentialOf(workspaceId, row) : NONE;
    this.cache.set(workspaceId, { value, at: Date.now() });
    return value;
  }

  async setKey(request: SetProviderKeyRequest): Promise<ProviderKeyView> {
    const issues: Array<{ path: string; message: string }> = [];
    if (!isProvider(request.provider)) issues.push({ path: 'provider', message: 'must be anthropic or openai' });
    const problem = providerKeyProblem(request.apiKey);
    if (problem) issues.push({ path: 'api_key', message: problem });
    if (issues.length > 0 || !isProvider(request.provider) || typeof request.apiKey !== 'string') {
      throw new ServiceError('INVALID_REQUEST', 'The provider key is not valid.', issues);
    }
    const provider = request.provider;
    const sealed = sealCredential(this.config.credentialsKey, request.apiKey, credentialAad(request.workspaceId, provider));
    const view = { provider, last4: lastFour(request.apiKey) };
    // Saving a key is choosing it: that is what someone who pastes their key in expects.
    await this.db.query(
      `INSERT INTO provider_credentials (workspace_id, use_own_key, provider, sealed, key_id, last4)
       VALUES ($1, true, $2, $3, $4, $5)
       ON CONFLICT (workspace_id) DO UPDATE SET use_own_key = true, provider = EXCLUDED.provider, sealed = EXCLUDED.sealed,
         key_id = EXCLUDED.key_id, last4 = EXCLUDED.last4, updated_at = now()`,
      [request.workspaceId, provider, sealed, credentialsKeyId(this.config.credentialsKey), view.last4],
    );
    this.changed(request.workspaceId);
    return view;
  }

  async getKey(workspaceId: string): Promise<GetProviderKeyReply> {
    const row = await this.read(workspaceId);
    return viewOf(row);
  }

  async deleteKey(workspaceId: string): Promise<DeleteProviderKeyReply> {
    const [rows] = (await this.db.query(
      `UPDATE provider_credentials SET provider = NULL, sealed = NULL, key_id = NULL, last4 = NULL, updated_at = now()
       WHERE workspace_id = $1 AND sealed IS NOT NULL RETURNING workspace_id`,
      [workspaceId],
    )) as [unknown[], number];
    this.changed(workspaceId);
    return { deleted: rows.length > 0 };
  }

  async settings(workspaceId: string): Promise<EngineSettingsReply> {
    const row = await this.read(workspaceId);
    return { useOwnKey: row?.use_own_key ?? false, providerKey: viewOf(row), llmProvider: this.config.llm.protocol };
  }

  async setSettings(request: SetEngineSettingsRequest): Promise<EngineSettingsReply> {
    if (typeof request.useOwnKey !== 'boolean') {
      throw new ServiceError('INVALID_REQUEST', 'The engine settings are not valid.', [{ path: 'use_own_key', message: 'must be true or false' }]);
    }
    await this.db.query(
      `INSERT INTO provider_credentials (workspace_id, use_own_key) VALUES ($1, $2)
       ON CONFLICT (workspace_id) DO UPDATE SET use_own_key = EXCLUDED.use_own_key, updated_at = now()`,
      [request.workspaceId, request.useOwnKey],
    );
    this.changed(request.workspaceId);
    return this.settings(request.workspaceId);
  }

  private async read(workspaceId: string): Promise<Row | null> {
    const rows = (await this.db.query('SELECT use_own_key, provider, sealed, key_id, last4 FROM provider_credentials WHERE workspace_id = $1', [workspaceId])) as Row[];
    return rows[0] ?? null;
  }

  private credentialOf(workspaceId: string, row: Row): WorkspaceCredential {
    if (row.sealed === null || row.provider === null) return { useOwnKey: row.use_own_key, key: null, unreadable: false };
    const apiKey = openCredential(this.config.credentialsKey, row.sealed, credentialAad(workspaceId, row.provider));
    if (apiKey === null) {
      this.logger.error(
        { workspaceId, sealedWith: row.key_id, currentKey: credentialsKeyId(this.config.credentialsKey) },
        'a saved provider key cannot be decrypted: ENGINE_CREDENTIALS_KEY differs from the key it was saved under',
      );
      return { useOwnKey: row.use_own_key, key: null, unreadable: true };
    }
    return { useOwnKey: row.use_own_key, key: { provider: row.provider, apiKey }, unreadable: false };
  }

  private changed(workspaceId: string): void {
    this.cache.delete(workspaceId);
    this.nats.connection.publish(CHANGED_SUBJECT, workspaceId);
  }
}

function viewOf(row: Row | null): ProviderKeyView | null {
  return row?.provider && row.last4 ? { provider: row.provider, last4: row.last4 } : null;
}

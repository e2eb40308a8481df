import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Subscription } from 'nats';
import { DataSource, IsNull } from 'typeorm';
import { BROADCAST_SUBJECTS, ServiceError } from '@ds/contracts';
import { newId } from '@ds/ids';
import { Logger, NatsLink, PLATFORM } from '@ds/platform';
import { ApiKeyEntity, KeyMode } from '../entities';
import { API_KEY_PATTERN, newApiKey, sha256 } from './tokens';

export interface AuthenticatedKey {
  keyId: string;
  workspaceId: string;
  mode: KeyMode;
  authorId: string | null;
}

const MAX_ACTIVE_KEYS = 50;
/** A cached key is re-read after this long even if no revocation notice arrived (for example during a NATS outage). */
const CACHE_TTL_MS = 30_000;
const LAST_USED_RESOLUTION_MS = 60_000;
const REVOKED_SUBJECT = BROADCAST_SUBJECTS.gatewayApiKeyRevoked;

/**
 * API keys: stored as hashes, shown once. Authentication is served from a per-replica cache; revoking
 * a key broadcasts its hash so every gateway replica drops it at once.
 */
@Injectable()
export class ApiKeysService implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new Map<string, { key: AuthenticatedKey | null; at: number }>();
  private readonly lastUsedWrites = new Map<string, number>();
  private subscription: Subscription | null = null;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.subscription = this.nats.connection.subscribe(REVOKED_SUBJECT, {
      callback: (_error, message) => this.cache.delete(message.string()),
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  async authenticate(token: string | null): Promise<AuthenticatedKey> {
    if (!token || !API_KEY_PATTERN.test(token)) throw new ServiceError('INVALID_API_KEY', 'The API key is missing or malformed.');
    const hash = sha256(token);
    const cached = this.cache.get(hash);
    let key: AuthenticatedKey | null;
    if (cached && Date.now() - cached.at < CACHE_TTL_MS) {
      key = cached.key;
    } else {
      const row = await this.db.getRepository(ApiKeyEntity).findOneBy({ keyHash: hash, revokedAt: IsNull() });
      key = row ? { keyId: row.id, workspaceId: row.workspaceId, mode: row.mode, authorId: row.createdBy } : null;
      this.cache.set(hash, { key, at: Date.now() });
    }
    if (!key) throw new ServiceError('INVALID_API_KEY', 'The API key is unknown or has been revoked.');
    this.touch(key.keyId);
    return key;
  }

  async create(workspaceId: string, userId: string, input: { name?: unknown; mode?: unknown }) {
    const issues: Array<{ path: string; message: string }> = [];
    if (typeof input.name !== 'string' || input.name.length < 1 || input.name.length > 80) issues.push({ path: 'name', message: 'must be 1 to 80 characters' });
    if (input.mode !== 'live' && input.mode !== 'test') issues.push({ path: 'mode', message: 'must be live or test' });
    if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The API key is not valid.', issues);
    const mode = input.mode as KeyMode;
    const secret = newApiKey(mode);
    const id = newId('key');
    await this.db.transaction(async (tx) => {
      // Serializes key creation per workspace so that the 50-key ceiling holds under concurrency.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`api-keys:${workspaceId}`]);
      const active = await tx.getRepository(ApiKeyEntity).countBy({ workspaceId, revokedAt: IsNull() });
      if (active >= MAX_ACTIVE_KEYS) throw new ServiceError('CONFLICT', `A workspace can hold ${MAX_ACTIVE_KEYS} active API keys; revoke one first.`);
      await tx.getRepository(ApiKeyEntity).insert({ id, workspaceId, name: input.name as string, mode, keyHash: sha256(secret), createdBy: userId });
    });
    return { id, name: input.name as string, mode, key: secret };
  }

  async list(workspaceId: string) {
    const rows = await this.db.getRepository(ApiKeyEntity).find({ where: { workspaceId, revokedAt: IsNull() }, order: { createdAt: 'ASC' } });
    return {
      data: rows.map((row) => ({
        id: row.id,
        name: row.name,
        mode: row.mode,
        created_at: row.createdAt.toISOString(),
        last_used_at: row.lastUsedAt?.toISOString() ?? null,
      })),
    };
  }

  async revoke(workspaceId: string, keyId: string): Promise<void> {
    const rows: [Array<{ key_hash: string }>, number] = await this.db.query(
      'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL RETURNING key_hash',
      [keyId, workspaceId],
    );
    const revoked = rows[0][0];
    if (!revoked) throw new ServiceError('NOT_FOUND', 'No such API key in this workspace.');
    this.cache.delete(revoked.key_hash);
    this.nats.connection.publish(REVOKED_SUBJECT, revoked.key_hash);
  }

  /** last_used_at moves at most once a minute per key, so authentication does not write on every request. */
  private touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.lastUsedWrites.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWrites.set(keyId, now);
    this.db
      .getRepository(ApiKeyEntity)
      .update({ id: keyId }, { lastUsedAt: new Date(now) })
      .catch((error) => this.logger.warn({ err: error }, 'could not record when an API key was last used'));
  }
}

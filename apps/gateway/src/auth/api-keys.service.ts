import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Gauge } from 'prom-client';
import { DataSource, IsNull } from 'typeorm';
import { BROADCAST_SUBJECTS, ServiceError } from '@ds/contracts';
import { newId } from '@ds/ids';
import { BroadcastInvalidatedCache, Logger, Metrics, NatsLink, natsNotices, PLATFORM, rowsReturned } from '@ds/platform';
import { GatewayConfig } from '../config';
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
/**
 * An unknown key is answered from memory this long. Misses live apart from the keys that exist, so a
 * flood of random keys can evict only other misses, never a working key.
 */
const MISS_TTL_MS = 5_000;
const LAST_USED_RESOLUTION_MS = 60_000;
const REVOKED_SUBJECT = BROADCAST_SUBJECTS.gatewayApiKeyRevoked;

/**
 * API keys: stored as hashes, shown once. Authentication is served from a per-replica cache, bounded
 * by `API_KEY_CACHE_MAX` entries for known keys and as many for unknown ones, least recently used
 * first out; revoking a key broadcasts its hash so every gateway replica drops it at once.
 */
@Injectable()
export class ApiKeysService implements OnModuleInit, OnModuleDestroy {
  /** By key hash; unknown hashes are kept as misses. */
  private readonly keys: BroadcastInvalidatedCache<string, AuthenticatedKey>;
  /** Keys whose last_used_at was written within the last minute. */
  private readonly lastUsedWrites: LRUCache<string, true>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.nats) nats: NatsLink,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Inject(PLATFORM.config) config: GatewayConfig,
    @Inject(PLATFORM.metrics) metrics: Metrics,
  ) {
    const max = config.apiKeyCacheMax;
    const keys = new BroadcastInvalidatedCache<string, AuthenticatedKey>({
      bus: natsNotices(nats),
      subject: REVOKED_SUBJECT,
      max,
      ttlMs: CACHE_TTL_MS,
      missTtlMs: MISS_TTL_MS,
    });
    this.keys = keys;
    this.lastUsedWrites = new LRUCache({ max, ttl: LAST_USED_RESOLUTION_MS });
    new Gauge({
      name: 'decision_service_api_key_cache_entries',
      help: 'API keys held in this gateway replica’s authentication cache, known and unknown',
      labelNames: ['kind'],
      registers: [metrics.registry],
      collect() {
        const { values, misses } = keys.size;
        this.set({ kind: 'known' }, values);
        this.set({ kind: 'unknown' }, misses);
      },
    });
    new Gauge({
      name: 'decision_service_api_key_cache_max_entries',
      help: 'Ceiling of each of the two API-key caches (API_KEY_CACHE_MAX)',
      registers: [metrics.registry],
    }).set(max);
  }

  onModuleInit(): void {
    this.keys.listen();
  }

  onModuleDestroy(): void {
    this.keys.close();
  }

  async authenticate(token: string | null): Promise<AuthenticatedKey> {
    if (!token || !API_KEY_PATTERN.test(token)) throw new ServiceError('INVALID_API_KEY', 'The API key is missing or malformed.');
    const hash = sha256(token);
    const key = await this.keys.get(hash, () => this.lookUp(hash));
    if (!key) throw new ServiceError('INVALID_API_KEY', 'The API key is unknown or has been revoked.');
    this.touch(key.keyId);
    return key;
  }

  private async lookUp(hash: string): Promise<AuthenticatedKey | null> {
    const row = await this.db.getRepository(ApiKeyEntity).findOneBy({ keyHash: hash, revokedAt: IsNull() });
    return row ? { keyId: row.id, workspaceId: row.workspaceId, mode: row.mode, authorId: row.createdBy } : null;
  }

  async create(workspaceId: string, userId: string, input: { name: string; mode: KeyMode }) {
    const { name, mode } = input;
    const secret = newApiKey(mode);
    const id = newId('key');
    await this.db.transaction(async (tx) => {
      // Serializes key creation per workspace so that the 50-key ceiling holds under concurrency.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`api-keys:${workspaceId}`]);
      const active = await tx.getRepository(ApiKeyEntity).countBy({ workspaceId, revokedAt: IsNull() });
      if (active >= MAX_ACTIVE_KEYS) throw new ServiceError('CONFLICT', `A workspace can hold ${MAX_ACTIVE_KEYS} active API keys; revoke one first.`);
      await tx.getRepository(ApiKeyEntity).insert({ id, workspaceId, name, mode, keyHash: sha256(secret), last4: secret.slice(-4), createdBy: userId });
    });
    return { id, name, mode, key: secret };
  }

  async list(workspaceId: string) {
    const rows = await this.db.getRepository(ApiKeyEntity).find({ where: { workspaceId, revokedAt: IsNull() }, order: { createdAt: 'ASC' } });
    return {
      data: rows.map((row) => ({
        id: row.id,
        name: row.name,
        mode: row.mode,
        hint: row.last4 ? `svc_${row.mode}_…${row.last4}` : null,
        created_at: row.createdAt.toISOString(),
        last_used_at: row.lastUsedAt?.toISOString() ?? null,
      })),
    };
  }

  async revoke(workspaceId: string, keyId: string): Promise<void> {
    const [revoked] = rowsReturned<{ key_hash: string }>(
      await this.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL RETURNING key_hash', [
        keyId,
        workspaceId,
      ]),
    );
    if (!revoked) throw new ServiceError('NOT_FOUND', 'No such API key in this workspace.');
    this.keys.invalidate(revoked.key_hash);
  }

  /** Keys deleted with their workspace stop working on every replica at once. */
  forget(keyHashes: string[]): void {
    for (const hash of keyHashes) this.keys.invalidate(hash);
  }

  /** last_used_at moves at most once a minute per key, so authentication does not write on every request. */
  private touch(keyId: string): void {
    if (this.lastUsedWrites.has(keyId)) return;
    this.lastUsedWrites.set(keyId, true);
    this.db
      .getRepository(ApiKeyEntity)
      .update({ id: keyId }, { lastUsedAt: new Date() })
      .catch((error) => this.logger.warn({ err: error }, 'could not record when an API key was last used'));
  }
}

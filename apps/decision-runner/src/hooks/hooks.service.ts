import { Inject, Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DecisionRef, HookChangeReply, HookStateReply, ResolveHookReply, ServiceError } from '@ds/contracts';
import { isUniqueViolation, Logger, PLATFORM, rowsAffected, rowsReturned, sealAtRest, SealingCounts } from '@ds/platform';
import { openWithKeyring, rowAad, sealWithKeyring } from '@ds/sealing';
import { DecisionRunnerConfig } from '../config';
import { pgPool } from '../pg-pool';
import { newHookSecret, newHookToken, tokenHash } from './hook-credentials';
import { DecisionStore } from '../decisions/decision.store';

/** A URL's secret as stored: none, sealed, or still in plaintext until the start-up sweep reaches it. */
interface StoredSecret {
  workspace_id: string;
  decision_id: string;
  unsealed_secret: string | null;
  sealed_secret: Buffer | null;
  secret_key_id: string | null;
}

const RESOLVE_HOOK = {
  name: 'decision-runner.resolve-hook',
  text: `SELECT h.workspace_id, h.decision_id, d.slug, h.unsealed_secret, h.sealed_secret, h.secret_key_id
           FROM decision_hooks h JOIN decisions d ON d.id = h.decision_id
          WHERE h.token_hash = $1`,
};
/** Rows sealed per statement by the start-up sweep. */
const SEAL_BATCH = 100;

/** Binds a sealed secret to its workspace and decision: a value copied onto another URL does not open. */
export function hookSecretAad(workspaceId: string, decisionId: string): Buffer {
  return rowAad('decision_hooks', workspaceId, decisionId);
}

/**
 * The secret-URL state machine of one decision: off (no row), on (a row with the token's hash), on with a
 * secret. Every change answers the hashes of the tokens whose cached resolutions the gateways must drop. Secrets
 * are stored sealed under RUNNER_SECRETS_KEY and opened only to answer a resolution.
 */
@Injectable()
export class HooksService implements OnModuleInit, OnApplicationBootstrap {
  private readonly decisions: DecisionStore;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: DecisionRunnerConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {
    this.decisions = DecisionStore.of(db);
  }

  onModuleInit(): void {
    if (this.config.secretsKeyIsDev) {
      this.logger.warn(
        'RUNNER_SECRETS_KEY is unset: secret-URL secrets are encrypted with the public development key; set it (openssl rand -base64 32) anywhere but a laptop',
      );
    }
  }

  onApplicationBootstrap(): void {
    // In the background: a start must not wait on (or fail with) a sweep that resumes at the next start, and rows
    // the sweep has not reached yet are read as they are.
    void this.sealAtRest().catch((error: unknown) => this.logger.error({ err: error }, 'sealing secret-URL secrets under the current key failed'));
  }

  async resolve(hash: string): Promise<ResolveHookReply> {
    const { rows } = await pgPool(this.db).query<StoredSecret & { slug: string }>({ ...RESOLVE_HOOK, values: [hash] });
    const row = rows[0];
    if (!row) return null;
    const secret = this.secretOf(row);
    if (secret === undefined) {
      // Answering "no secret" would let unsigned calls through: the call is refused until the key is back.
      this.logger.error(
        { workspaceId: row.workspace_id, decisionId: row.decision_id, sealedWith: row.secret_key_id, currentKey: this.config.secretsKeys.primaryId },
        'a secret-URL secret cannot be decrypted: RUNNER_SECRETS_KEY lacks the key it was sealed under',
      );
      throw new ServiceError('SERVICE_UNAVAILABLE', 'This secret URL cannot be served right now; try again later.');
    }
    return { workspaceId: row.workspace_id, decisionId: row.decision_id, slug: row.slug, secret };
  }

  /** Plaintext secrets sealed, and after a rotation of RUNNER_SECRETS_KEY every secret sealed again under its first key. */
  sealAtRest(): Promise<SealingCounts> {
    const keyring = this.config.secretsKeys;
    return sealAtRest<StoredSecret, string>(
      {
        secrets: 'secret-URL secrets',
        keyVariable: 'RUNNER_SECRETS_KEY',
        primaryKeyId: keyring.primaryId,
        nextBatch: async (after) =>
          (await this.db.query(
            `SELECT workspace_id, decision_id, unsealed_secret, sealed_secret, secret_key_id FROM decision_hooks
              WHERE decision_id > $1 AND (unsealed_secret IS NOT NULL OR secret_key_id <> $2)
              ORDER BY decision_id LIMIT ${SEAL_BATCH}`,
            [after ?? '', keyring.primaryId],
          )) as StoredSecret[],
        cursorOf: (row) => row.decision_id,
        isPlaintext: (row) => row.unsealed_secret !== null,
        plaintextOf: (row) => this.secretOf(row) ?? null,
        writeSealed: async (row, secret) => {
          const { sealed, keyId } = sealWithKeyring(keyring, secret, hookSecretAad(row.workspace_id, row.decision_id));
          const written = await this.db.query(
            `UPDATE decision_hooks SET sealed_secret = $2, secret_key_id = $3, unsealed_secret = NULL
              WHERE decision_id = $1 AND unsealed_secret IS NOT DISTINCT FROM $4 AND sealed_secret IS NOT DISTINCT FROM $5`,
            [row.decision_id, sealed, keyId, row.unsealed_secret, row.sealed_secret],
          );
          return rowsAffected(written) > 0;
        },
      },
      this.logger,
    );
  }

  /** On or off, with or without a secret, and the last run it started. */
  async state(ref: DecisionRef): Promise<HookStateReply> {
    await this.decisions.requireExists(ref);
    const [row] = (await this.db.query(
      `SELECT h.created_at, h.updated_at, num_nonnulls(h.unsealed_secret, h.sealed_secret) > 0 AS secret_set,
              (SELECT max(e.created_at) FROM executions e WHERE e.decision_id = $1 AND e.workspace_id = $2 AND e.source = 'webhook') AS last_call_at
         FROM (SELECT 1) one LEFT JOIN decision_hooks h ON h.decision_id = $1 AND h.workspace_id = $2`,
      [ref.decisionId, ref.workspaceId],
    )) as Array<{ created_at: Date | null; updated_at: Date | null; secret_set: boolean | null; last_call_at: Date | null }>;
    const iso = (value: Date | null | undefined) => (value ? new Date(value).toISOString() : null);
    return {
      enabled: row?.created_at != null,
      secretSet: row?.secret_set === true,
      enabledAt: iso(row?.created_at),
      changedAt: iso(row?.updated_at),
      lastCallAt: iso(row?.last_call_at),
    };
  }

  /** Off → on. A URL that is already on is not replaced here: that is a rotation, which needs the Admin role. */
  async enable(ref: DecisionRef): Promise<HookChangeReply> {
    await this.decisions.requireExists(ref);
    const token = newHookToken();
    try {
      await this.db.query('INSERT INTO decision_hooks (decision_id, workspace_id, token_hash) VALUES ($1, $2, $3)', [
        ref.decisionId,
        ref.workspaceId,
        tokenHash(token),
      ]);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ServiceError('CONFLICT', 'The secret URL of this decision is already on; rotate it to get a new URL.');
      }
      throw error;
    }
    return { token, dropped: [] };
  }

  /** On → off: the URL and its secret are gone; turning it on again gives a new URL without a secret. */
  async disable(ref: DecisionRef): Promise<HookChangeReply> {
    await this.decisions.requireExists(ref);
    const [removed] = rowsReturned<{ token_hash: string }>(
      await this.db.query('DELETE FROM decision_hooks WHERE decision_id = $1 AND workspace_id = $2 RETURNING token_hash', [ref.decisionId, ref.workspaceId]),
    );
    if (!removed) throw new ServiceError('NOT_FOUND', 'The secret URL of this decision is off.');
    return { dropped: [removed.token_hash] };
  }

  /** A new URL for the same decision, keeping its secret; the old token stops resolving when this commits. */
  async rotate(ref: DecisionRef): Promise<HookChangeReply> {
    await this.decisions.requireExists(ref);
    const token = newHookToken();
    const [rotated] = rowsReturned<{ old_hash: string }>(
      await this.db.query(
        `UPDATE decision_hooks h SET token_hash = $3, updated_at = now()
           FROM (SELECT decision_id, token_hash AS old_hash FROM decision_hooks WHERE decision_id = $1 AND workspace_id = $2 FOR UPDATE) old
          WHERE h.decision_id = old.decision_id
          RETURNING old.old_hash`,
        [ref.decisionId, ref.workspaceId, tokenHash(token)],
      ),
    );
    if (!rotated) throw this.off();
    return { token, dropped: [rotated.old_hash] };
  }

  /** Generates the URL's secret, replacing one that exists (which stops working at once). */
  async createSecret(ref: DecisionRef): Promise<HookChangeReply> {
    await this.decisions.requireExists(ref);
    const secret = newHookSecret();
    const { sealed, keyId } = sealWithKeyring(this.config.secretsKeys, secret, hookSecretAad(ref.workspaceId, ref.decisionId));
    const [updated] = rowsReturned<{ token_hash: string }>(
      await this.db.query(
        `UPDATE decision_hooks SET sealed_secret = $3, secret_key_id = $4, unsealed_secret = NULL, updated_at = now()
          WHERE decision_id = $1 AND workspace_id = $2 RETURNING token_hash`,
        [ref.decisionId, ref.workspaceId, sealed, keyId],
      ),
    );
    if (!updated) throw this.off();
    return { secret, dropped: [updated.token_hash] };
  }

  /** Removes the secret: unsigned calls are accepted again. */
  async deleteSecret(ref: DecisionRef): Promise<HookChangeReply> {
    await this.decisions.requireExists(ref);
    const [updated] = rowsReturned<{ token_hash: string; had_secret: boolean }>(
      await this.db.query(
        `UPDATE decision_hooks h SET unsealed_secret = NULL, sealed_secret = NULL, secret_key_id = NULL, updated_at = now()
           FROM (SELECT decision_id, num_nonnulls(unsealed_secret, sealed_secret) > 0 AS had_secret
                   FROM decision_hooks WHERE decision_id = $1 AND workspace_id = $2 FOR UPDATE) old
          WHERE h.decision_id = old.decision_id
          RETURNING h.token_hash, old.had_secret`,
        [ref.decisionId, ref.workspaceId],
      ),
    );
    if (!updated) throw this.off();
    if (!updated.had_secret) throw new ServiceError('NOT_FOUND', 'The secret URL of this decision has no secret.');
    return { dropped: [updated.token_hash] };
  }

  /** The URL's secret; null when it has none, undefined when it is sealed under a key this ring does not hold. */
  private secretOf(row: StoredSecret): string | null | undefined {
    if (row.unsealed_secret !== null) return row.unsealed_secret;
    if (row.sealed_secret === null || row.secret_key_id === null) return null;
    return openWithKeyring(this.config.secretsKeys, row.secret_key_id, row.sealed_secret, hookSecretAad(row.workspace_id, row.decision_id)) ?? undefined;
  }

  private off(): ServiceError {
    return new ServiceError('CONFLICT', 'The secret URL of this decision is off; turn it on first.');
  }
}

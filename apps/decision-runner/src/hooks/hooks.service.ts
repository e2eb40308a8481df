import { Inject, Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { DecisionRef, HookChangeReply, HookStateReply, ResolveHookReply, ServiceError } from '@ds/contracts';
import { isUniqueViolation, Logger, PLATFORM, sealAtRest, SealingCounts } from '@ds/platform';
import { openWithKeyring, rowAad, sealWithKeyring } from '@ds/sealing';
import { DecisionRunnerConfig } from '../config';
import { DecisionStore } from '../decisions/decision.store';
import { newHookSecret, newHookToken, tokenHash } from './hook-credentials';
import { HookStore, StoredSecret } from './hook.store';

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
  constructor(
    private readonly decisions: DecisionStore,
    private readonly hooks: HookStore,
    @Inject(PLATFORM.config) private readonly config: DecisionRunnerConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

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
    const row = await this.hooks.resolve(hash);
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
        nextBatch: (after) => this.hooks.unsealedBatch(after, keyring.primaryId),
        cursorOf: (row) => row.decision_id,
        isPlaintext: (row) => row.unsealed_secret !== null,
        plaintextOf: (row) => this.secretOf(row) ?? null,
        writeSealed: async (row, secret) => {
          const { sealed, keyId } = sealWithKeyring(keyring, secret, hookSecretAad(row.workspace_id, row.decision_id));
          return this.hooks.writeSealed(row, sealed, keyId);
        },
      },
      this.logger,
    );
  }

  /** On or off, with or without a secret, and the last run it started. */
  async state(ref: DecisionRef): Promise<HookStateReply> {
    await this.decisions.requireExists(ref);
    const row = await this.hooks.state(ref);
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
      await this.hooks.insert(ref, tokenHash(token));
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
    const removed = await this.hooks.delete(ref);
    if (removed === undefined) throw new ServiceError('NOT_FOUND', 'The secret URL of this decision is off.');
    return { dropped: [removed] };
  }

  /** A new URL for the same decision, keeping its secret; the old token stops resolving when this commits. */
  async rotate(ref: DecisionRef): Promise<HookChangeReply> {
    await this.decisions.requireExists(ref);
    const token = newHookToken();
    const rotated = await this.hooks.rotate(ref, tokenHash(token));
    if (rotated === undefined) throw this.off();
    return { token, dropped: [rotated] };
  }

  /** Generates the URL's secret, replacing one that exists (which stops working at once). */
  async createSecret(ref: DecisionRef): Promise<HookChangeReply> {
    await this.decisions.requireExists(ref);
    const secret = newHookSecret();
    const { sealed, keyId } = sealWithKeyring(this.config.secretsKeys, secret, hookSecretAad(ref.workspaceId, ref.decisionId));
    const updated = await this.hooks.setSecret(ref, sealed, keyId);
    if (updated === undefined) throw this.off();
    return { secret, dropped: [updated] };
  }

  /** Removes the secret: unsigned calls are accepted again. */
  async deleteSecret(ref: DecisionRef): Promise<HookChangeReply> {
    await this.decisions.requireExists(ref);
    const updated = await this.hooks.deleteSecret(ref);
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

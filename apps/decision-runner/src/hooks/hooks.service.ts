import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DecisionRef, HookChangeReply, ResolveHookReply, ServiceError } from '@ds/contracts';
import { isUniqueViolation, rowsReturned } from '@ds/platform';
import { pgPool } from '../pg-pool';
import { newHookSecret, newHookToken, tokenHash } from './hook-credentials';

const RESOLVE_HOOK = {
  name: 'decision-runner.resolve-hook',
  text: `SELECT h.workspace_id, h.decision_id, d.slug, h.secret
           FROM decision_hooks h JOIN decisions d ON d.id = h.decision_id
          WHERE h.token_hash = $1`,
};

/**
 * The secret-URL state machine of one decision: off (no row), on (a row with the token's hash), on with a
 * secret. Every change answers the hashes of the tokens whose cached resolutions the gateways must drop.
 */
@Injectable()
export class HooksService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async resolve(hash: string): Promise<ResolveHookReply> {
    const { rows } = await pgPool(this.db).query<{ workspace_id: string; decision_id: string; slug: string; secret: string | null }>({
      ...RESOLVE_HOOK,
      values: [hash],
    });
    const row = rows[0];
    return row ? { workspaceId: row.workspace_id, decisionId: row.decision_id, slug: row.slug, secret: row.secret } : null;
  }

  /** Off → on. A URL that is already on is not replaced here: that is a rotation, which needs the Admin role. */
  async enable(ref: DecisionRef): Promise<HookChangeReply> {
    await this.requireDecision(ref);
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
    await this.requireDecision(ref);
    const [removed] = rowsReturned<{ token_hash: string }>(
      await this.db.query('DELETE FROM decision_hooks WHERE decision_id = $1 AND workspace_id = $2 RETURNING token_hash', [ref.decisionId, ref.workspaceId]),
    );
    if (!removed) throw new ServiceError('NOT_FOUND', 'The secret URL of this decision is off.');
    return { dropped: [removed.token_hash] };
  }

  /** A new URL for the same decision, keeping its secret; the old token stops resolving when this commits. */
  async rotate(ref: DecisionRef): Promise<HookChangeReply> {
    await this.requireDecision(ref);
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
    await this.requireDecision(ref);
    const secret = newHookSecret();
    const [updated] = rowsReturned<{ token_hash: string }>(
      await this.db.query('UPDATE decision_hooks SET secret = $3, updated_at = now() WHERE decision_id = $1 AND workspace_id = $2 RETURNING token_hash', [
        ref.decisionId,
        ref.workspaceId,
        secret,
      ]),
    );
    if (!updated) throw this.off();
    return { secret, dropped: [updated.token_hash] };
  }

  /** Removes the secret: unsigned calls are accepted again. */
  async deleteSecret(ref: DecisionRef): Promise<HookChangeReply> {
    await this.requireDecision(ref);
    const [updated] = rowsReturned<{ token_hash: string; had_secret: boolean }>(
      await this.db.query(
        `UPDATE decision_hooks h SET secret = NULL, updated_at = now()
           FROM (SELECT decision_id, secret IS NOT NULL AS had_secret FROM decision_hooks WHERE decision_id = $1 AND workspace_id = $2 FOR UPDATE) old
          WHERE h.decision_id = old.decision_id
          RETURNING h.token_hash, old.had_secret`,
        [ref.decisionId, ref.workspaceId],
      ),
    );
    if (!updated) throw this.off();
    if (!updated.had_secret) throw new ServiceError('NOT_FOUND', 'The secret URL of this decision has no secret.');
    return { dropped: [updated.token_hash] };
  }

  private off(): ServiceError {
    return new ServiceError('CONFLICT', 'The secret URL of this decision is off; turn it on first.');
  }

  private async requireDecision(ref: DecisionRef): Promise<void> {
    const rows: unknown[] = await this.db.query('SELECT 1 FROM decisions WHERE id = $1 AND workspace_id = $2', [ref.decisionId, ref.workspaceId]);
    if (rows.length === 0) throw new ServiceError('NOT_FOUND', 'No such decision in this workspace.');
  }
}

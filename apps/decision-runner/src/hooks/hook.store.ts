import { DataSource } from 'typeorm';
import { DecisionRef } from '@ds/contracts';
import { rowsAffected, rowsReturned } from '@ds/platform';
import { pgPool } from '../pg-pool';

/** A URL's secret as stored: none, sealed, or still in plaintext until the start-up sweep reaches it. */
export interface StoredSecret {
  workspace_id: string;
  decision_id: string;
  unsealed_secret: string | null;
  sealed_secret: Buffer | null;
  secret_key_id: string | null;
}

export interface HookStateRow {
  created_at: Date | null;
  updated_at: Date | null;
  secret_set: boolean | null;
  last_call_at: Date | null;
}

const RESOLVE_HOOK = {
  name: 'decision-runner.resolve-hook',
  text: `SELECT h.workspace_id, h.decision_id, d.slug, h.unsealed_secret, h.sealed_secret, h.secret_key_id
           FROM decision_hooks h JOIN decisions d ON d.id = h.decision_id
          WHERE h.token_hash = $1`,
};
/** Rows sealed per statement by the start-up sweep. */
const SEAL_BATCH = 100;

/** The secret URLs of decisions (`decision_hooks`): at most one row per decision, keyed by its token's hash. */
export class HookStore {
  constructor(private readonly db: DataSource) {}

  /** The URL whose token hashes to `hash`, with its decision's slug: a prepared statement, as webhook calls resolve it. */
  async resolve(hash: string): Promise<(StoredSecret & { slug: string }) | undefined> {
    const { rows } = await pgPool(this.db).query<StoredSecret & { slug: string }>({ ...RESOLVE_HOOK, values: [hash] });
    return rows[0];
  }

  /** The next rows after `after` (by decision id) whose secret is in plaintext or sealed under a key other than `primaryKeyId`. */
  async unsealedBatch(after: string | null, primaryKeyId: string): Promise<StoredSecret[]> {
    return (await this.db.query(
      `SELECT workspace_id, decision_id, unsealed_secret, sealed_secret, secret_key_id FROM decision_hooks
        WHERE decision_id > $1 AND (unsealed_secret IS NOT NULL OR secret_key_id <> $2)
        ORDER BY decision_id LIMIT ${SEAL_BATCH}`,
      [after ?? '', primaryKeyId],
    )) as StoredSecret[];
  }

  /** Replaces the row's secret with its sealed form unless the secret changed since `row` was read; whether it was written. */
  async writeSealed(row: StoredSecret, sealed: Buffer, keyId: string): Promise<boolean> {
    const written = await this.db.query(
      `UPDATE decision_hooks SET sealed_secret = $2, secret_key_id = $3, unsealed_secret = NULL
        WHERE decision_id = $1 AND unsealed_secret IS NOT DISTINCT FROM $4 AND sealed_secret IS NOT DISTINCT FROM $5`,
      [row.decision_id, sealed, keyId, row.unsealed_secret, row.sealed_secret],
    );
    return rowsAffected(written) > 0;
  }

  /** The URL's state (all null when it is off) and the last webhook run of the decision. */
  async state(ref: DecisionRef): Promise<HookStateRow | undefined> {
    const [row] = (await this.db.query(
      `SELECT h.created_at, h.updated_at, num_nonnulls(h.unsealed_secret, h.sealed_secret) > 0 AS secret_set,
              (SELECT max(e.created_at) FROM executions e WHERE e.decision_id = $1 AND e.workspace_id = $2 AND e.source = 'webhook') AS last_call_at
         FROM (SELECT 1) one LEFT JOIN decision_hooks h ON h.decision_id = $1 AND h.workspace_id = $2`,
      [ref.decisionId, ref.workspaceId],
    )) as HookStateRow[];
    return row;
  }

  /** Turns the URL on; a unique violation when it already is. */
  async insert(ref: DecisionRef, hash: string): Promise<void> {
    await this.db.query('INSERT INTO decision_hooks (decision_id, workspace_id, token_hash) VALUES ($1, $2, $3)', [ref.decisionId, ref.workspaceId, hash]);
  }

  /** Turns the URL off; the removed token's hash, undefined when it was off. */
  async delete(ref: DecisionRef): Promise<string | undefined> {
    const [removed] = rowsReturned<{ token_hash: string }>(
      await this.db.query('DELETE FROM decision_hooks WHERE decision_id = $1 AND workspace_id = $2 RETURNING token_hash', [ref.decisionId, ref.workspaceId]),
    );
    return removed?.token_hash;
  }

  /** Gives the URL the token hashing to `hash`; the old token's hash, undefined when the URL is off. */
  async rotate(ref: DecisionRef, hash: string): Promise<string | undefined> {
    const [rotated] = rowsReturned<{ old_hash: string }>(
      await this.db.query(
        `UPDATE decision_hooks h SET token_hash = $3, updated_at = now()
           FROM (SELECT decision_id, token_hash AS old_hash FROM decision_hooks WHERE decision_id = $1 AND workspace_id = $2 FOR UPDATE) old
          WHERE h.decision_id = old.decision_id
          RETURNING old.old_hash`,
        [ref.decisionId, ref.workspaceId, hash],
      ),
    );
    return rotated?.old_hash;
  }

  /** Stores a sealed secret; the token's hash, undefined when the URL is off. */
  async setSecret(ref: DecisionRef, sealed: Buffer, keyId: string): Promise<string | undefined> {
    const [updated] = rowsReturned<{ token_hash: string }>(
      await this.db.query(
        `UPDATE decision_hooks SET sealed_secret = $3, secret_key_id = $4, unsealed_secret = NULL, updated_at = now()
          WHERE decision_id = $1 AND workspace_id = $2 RETURNING token_hash`,
        [ref.decisionId, ref.workspaceId, sealed, keyId],
      ),
    );
    return updated?.token_hash;
  }

  /** Removes the secret; the token's hash and whether there was one, undefined when the URL is off. */
  async deleteSecret(ref: DecisionRef): Promise<{ token_hash: string; had_secret: boolean } | undefined> {
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
    return updated;
  }
}

import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RotatedSigningSecretReply, SigningSecretView } from '@ds/contracts';
import { newSigningSecret, ROTATION_OVERLAP_MS, secretHint } from '@ds/webhooks';
import { rowsAffected, rowsReturned } from '@ds/platform';

/**
 * Each workspace's `whsec_` signing secret: created on demand (the first delivery, or the first rotation), and
 * rotated with an overlap during which the previous secret signs beside the new one. Rotating again during an
 * overlap ends the earlier overlap, so an attempt carries at most two signatures.
 */
@Injectable()
export class SigningSecretsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The secrets that sign now, newest first; creates the workspace's first secret when it has none. */
  async signing(workspaceId: string): Promise<string[]> {
    const current = await this.valid(workspaceId);
    if (current.length > 0) return current;
    await this.db.query(`INSERT INTO signing_secrets (workspace_id, secret) VALUES ($1, $2) ON CONFLICT (workspace_id) WHERE expires_at IS NULL DO NOTHING`, [
      workspaceId,
      newSigningSecret(),
    ]);
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
      await manager.query(`INSERT INTO signing_secrets (workspace_id, secret) VALUES ($1, $2)`, [workspaceId, secret]);
      const previous = rotated?.expires_at ?? null;
      return { secret, previous_expires_at: previous ? previous.toISOString() : null };
    });
  }

  async view(workspaceId: string): Promise<SigningSecretView | null> {
    const rows = (await this.db.query(
      `SELECT secret, created_at, expires_at FROM signing_secrets WHERE workspace_id = $1 AND (expires_at IS NULL OR expires_at > now()) ORDER BY created_at DESC`,
      [workspaceId],
    )) as Array<{ secret: string; created_at: Date; expires_at: Date | null }>;
    const current = rows.find((row) => row.expires_at === null);
    if (!current) return null;
    const previous = rows.find((row) => row.expires_at !== null);
    return { hint: secretHint(current.secret), created_at: current.created_at.toISOString(), previous_expires_at: previous?.expires_at?.toISOString() ?? null };
  }

  /** Deletes secrets that stopped signing; answers how many. */
  async purgeExpired(): Promise<number> {
    return rowsAffected(await this.db.query(`DELETE FROM signing_secrets WHERE expires_at IS NOT NULL AND expires_at <= now()`));
  }

  private async valid(workspaceId: string): Promise<string[]> {
    const rows = (await this.db.query(
      `SELECT secret FROM signing_secrets WHERE workspace_id = $1 AND (expires_at IS NULL OR expires_at > now()) ORDER BY expires_at IS NOT NULL, created_at DESC`,
      [workspaceId],
    )) as Array<{ secret: string }>;
    return rows.map((row) => row.secret);
  }
}

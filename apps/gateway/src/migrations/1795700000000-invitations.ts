import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Invitations to a workspace, by e-mail, with the role they grant. Rows stay after they are accepted or
 * revoked so that the hourly ceilings count every invitation sent, not only those still pending; the token is
 * kept as a hash, since it admits whoever holds it (with the invited e-mail) to the workspace.
 */
export class Invitations1795700000000 implements MigrationInterface {
  name = 'Invitations1795700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS invitations (
      id text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
      invited_by text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      revoked_at timestamptz
    )`);
    // Pending invitations of a workspace, and the hour's count per workspace and per sender.
    await q.query('CREATE INDEX IF NOT EXISTS invitations_workspace_created ON invitations (workspace_id, created_at)');
    await q.query('CREATE INDEX IF NOT EXISTS invitations_sender_created ON invitations (invited_by, created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS invitations');
  }
}

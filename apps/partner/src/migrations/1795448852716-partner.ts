import { MigrationInterface, QueryRunner } from 'typeorm';

export class Partner1795448852716 implements MigrationInterface {
  name = 'Partner1795448852716';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE partner_settings (
        workspace_id text PRIMARY KEY,
        enabled boolean NOT NULL,
        allowed_origins jsonb NOT NULL DEFAULT '[]',
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // The unique pair is what makes concurrent creates with one external_id one workspace.
    await q.query(`
      CREATE TABLE sub_workspaces (
        id uuid PRIMARY KEY,
        partner_workspace_id text NOT NULL,
        external_id text NOT NULL,
        name text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        max_decisions integer CHECK (max_decisions >= 0),
        monthly_decisions integer CHECK (monthly_decisions >= 0),
        -- Milliseconds, as ISO 8601 and the paging cursor carry them, so that a cursor names its row exactly.
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (partner_workspace_id, external_id)
      )`);
    await q.query(`CREATE INDEX sub_workspaces_paging ON sub_workspaces (partner_workspace_id, created_at, id)`);
    // Tickets and cookie tokens are stored as SHA-256 hashes; the ticket works once, within launch_expires_at.
    await q.query(`
      CREATE TABLE embed_sessions (
        id text PRIMARY KEY,
        partner_workspace_id text NOT NULL,
        workspace_id uuid NOT NULL,
        user_id text NOT NULL,
        user_name text,
        user_email text,
        permissions jsonb NOT NULL,
        origins jsonb NOT NULL,
        start_path text NOT NULL,
        locale text,
        theme text,
        ticket_hash text NOT NULL UNIQUE,
        launch_expires_at timestamptz NOT NULL,
        redeemed_at timestamptz,
        token_hash text UNIQUE,
        expires_at timestamptz NOT NULL,
        closed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((redeemed_at IS NULL) = (token_hash IS NULL))
      )`);
    await q.query(`CREATE INDEX embed_sessions_workspace ON embed_sessions (workspace_id) WHERE closed_at IS NULL`);
    await q.query(`CREATE INDEX embed_sessions_user ON embed_sessions (partner_workspace_id, user_id) WHERE closed_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE embed_sessions, sub_workspaces, partner_settings');
  }
}

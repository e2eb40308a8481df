import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspace secrets, filled into destination headers (`{{secrets.NAME}}`) when a call leaves the service. Values are
 * sealed under DELIVERY_SECRETS_KEY like the signing secrets, bound to their workspace and name, and never read
 * back through the API.
 */
export class WorkspaceSecrets1795800000000 implements MigrationInterface {
  name = 'WorkspaceSecrets1795800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS workspace_secrets (
        workspace_id text NOT NULL,
        name text NOT NULL,
        sealed bytea NOT NULL,
        key_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, name)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS workspace_secrets');
  }
}

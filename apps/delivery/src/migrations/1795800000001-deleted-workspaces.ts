import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspaces deleted, remembered as long as the DELIVERIES stream keeps messages (30 days): a delivery of one that
 * is still in the stream, or published by a run that was in flight, is dropped rather than recorded and sent again.
 */
export class DeletedWorkspaces1795800000001 implements MigrationInterface {
  name = 'DeletedWorkspaces1795800000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS deleted_workspaces (
      workspace_id text PRIMARY KEY,
      deleted_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX IF NOT EXISTS deleted_workspaces_deleted_at ON deleted_workspaces (deleted_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS deleted_workspaces');
  }
}

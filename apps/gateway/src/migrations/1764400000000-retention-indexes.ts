import { MigrationInterface, QueryRunner } from 'typeorm';

export class RetentionIndexes1764400000000 implements MigrationInterface {
  name = 'RetentionIndexes1764400000000';

  async up(q: QueryRunner): Promise<void> {
    // The purge of expired sessions reads them oldest first.
    await q.query('CREATE INDEX IF NOT EXISTS sessions_expiry ON sessions (expires_at)');
    // Counting the workspaces a user owns (at most 10) without reading every membership.
    await q.query(`CREATE INDEX IF NOT EXISTS memberships_owner ON memberships (user_id) WHERE role = 'owner'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS memberships_owner');
    await q.query('DROP INDEX IF EXISTS sessions_expiry');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

export class DecisionHooks1795448775114 implements MigrationInterface {
  name = 'DecisionHooks1795448775114';

  async up(q: QueryRunner): Promise<void> {
    // One secret URL per decision at most; the token is kept only as its SHA-256, looked up on every call.
    await q.query(`
      CREATE TABLE decision_hooks (
        decision_id text PRIMARY KEY REFERENCES decisions(id) ON DELETE CASCADE,
        workspace_id text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        secret text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS decision_hooks');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1763780000000 implements MigrationInterface {
  name = 'Initial1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE accounts (
        workspace_id text PRIMARY KEY,
        plan text NOT NULL CHECK (plan IN ('genesis', 'developer', 'growth', 'enterprise')),
        overrides jsonb NOT NULL DEFAULT '{}',
        period_anchor timestamptz NOT NULL DEFAULT date_trunc('month', now()),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE accounts');
  }
}

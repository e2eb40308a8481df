import { MigrationInterface, QueryRunner } from 'typeorm';

export class WorkspaceDefaultEngine1795700000000 implements MigrationInterface {
  name = 'WorkspaceDefaultEngine1795700000000';

  async up(q: QueryRunner): Promise<void> {
    // The engine a workspace's decisions use when they pin none; null leaves it to the service's ENGINE_DEFAULT.
    await q.query(`ALTER TABLE provider_credentials ADD COLUMN IF NOT EXISTS default_engine text CHECK (default_engine IN ('llm', 'checkpoint'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE provider_credentials DROP COLUMN IF EXISTS default_engine');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

export class ExecutionRetention1764400000000 implements MigrationInterface {
  name = 'ExecutionRetention1764400000000';

  async up(q: QueryRunner): Promise<void> {
    // The retention purge deletes one workspace's oldest executions in batches: this reaches them directly,
    // and finds in one probe that a workspace has nothing old enough.
    await q.query('CREATE INDEX IF NOT EXISTS executions_workspace_created ON executions (workspace_id, created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS executions_workspace_created');
  }
}

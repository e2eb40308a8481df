import { MigrationInterface, QueryRunner } from 'typeorm';

/** The budget lease each run's decision was taken from, so that the ledger can bill a leased run whose settlement was lost. */
export class ExecutionLeases1796100000000 implements MigrationInterface {
  name = 'ExecutionLeases1796100000000';

  async up(q: QueryRunner): Promise<void> {
    // Nullable without a default: adding it rewrites nothing. Read through executions_workspace_created, so no index.
    await q.query(`ALTER TABLE executions ADD COLUMN lease_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions DROP COLUMN lease_id`);
  }
}

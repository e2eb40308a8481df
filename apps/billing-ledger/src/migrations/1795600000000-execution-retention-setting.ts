import { MigrationInterface, QueryRunner } from 'typeorm';

/** A workspace's own execution-log retention, which may only shorten its plan's; null keeps the plan's. */
export class ExecutionRetentionSetting1795600000000 implements MigrationInterface {
  name = 'ExecutionRetentionSetting1795600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts ADD COLUMN execution_retention_days integer CHECK (execution_retention_days >= 1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts DROP COLUMN execution_retention_days`);
  }
}

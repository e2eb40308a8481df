import { MigrationInterface, QueryRunner } from 'typeorm';

/** How each run reached its action (composites, every policy rule's conditions, what decided); never its input. */
export class ExecutionTraces1796041729301 implements MigrationInterface {
  name = 'ExecutionTraces1796041729301';

  async up(q: QueryRunner): Promise<void> {
    // Nullable without a default: adding it rewrites nothing, and runs recorded before it simply have no trace.
    await q.query(`ALTER TABLE executions ADD COLUMN trace jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions DROP COLUMN trace`);
  }
}

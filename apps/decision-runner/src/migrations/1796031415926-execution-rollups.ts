import { MigrationInterface, QueryRunner } from 'typeorm';
import { CREATE_ROLLUP_TABLES, ROLLED_UP_COLUMNS, rollupStatements } from '../executions/rollups';

export class ExecutionRollups1796031415926 implements MigrationInterface {
  name = 'ExecutionRollups1796031415926';

  async up(q: QueryRunner): Promise<void> {
    for (const statement of CREATE_ROLLUP_TABLES) await q.query(statement);
    // Executions written before the rollups existed are counted once, by the same statement the run path uses.
    await q.query(`WITH kept AS (SELECT ${ROLLED_UP_COLUMNS} FROM executions),${rollupStatements('kept', null)} SELECT 1`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE execution_histograms');
    await q.query('DROP TABLE execution_rollups');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';
import { EXECUTION_SOURCES_SQL } from '@ds/contracts';

/**
 * Outcomes were once accepted on playground runs, replays' runs and shadow runs, and their labels counted in the
 * quality report for the version those executions name, which never answered them live. Their labels are removed;
 * the rollup's delete trigger subtracts them in the same statement, so the report's days and hours stay equal to the
 * labels. The outcomes themselves stay on their executions, as what was reported; nothing the previous version reads
 * changes shape, so it keeps running meanwhile.
 */
export class LiveQualityLabels1796240000000 implements MigrationInterface {
  name = 'LiveQualityLabels1796240000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM quality_labels
       WHERE execution_id IN (SELECT id FROM executions
                               WHERE outcome IS NOT NULL AND (source NOT IN (${EXECUTION_SOURCES_SQL}) OR version < 1))`);
  }

  async down(): Promise<void> {
    // The labels of executions that are not live runs are not written again: they never belonged in the report.
  }
}

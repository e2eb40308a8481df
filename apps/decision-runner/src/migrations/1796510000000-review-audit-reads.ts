import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The quality report's audit figures read a version's review items (docs/reviews.md, "What the quality report
 * shows"): items are few beside runs, so one index over them keeps that read to the version's items. Only an
 * addition: the previous version never reads it.
 */
export class ReviewAuditReads1796510000000 implements MigrationInterface {
  name = 'ReviewAuditReads1796510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX IF NOT EXISTS review_items_decision_version ON review_items (decision_id, version, reason)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS review_items_decision_version');
  }
}

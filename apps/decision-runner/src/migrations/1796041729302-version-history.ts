import { MigrationInterface, QueryRunner } from 'typeorm';

/** Who deployed each version (`{ user_id, email }`), and which earlier version a rollback copied. */
export class VersionHistory1796041729302 implements MigrationInterface {
  name = 'VersionHistory1796041729302';

  async up(q: QueryRunner): Promise<void> {
    // Versions deployed before this keep NULL: who deployed them was never recorded.
    await q.query(`ALTER TABLE decision_versions ADD COLUMN deployed_by jsonb, ADD COLUMN rolled_back_from integer`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE decision_versions DROP COLUMN deployed_by, DROP COLUMN rolled_back_from`);
  }
}

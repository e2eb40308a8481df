import { MigrationInterface, QueryRunner } from 'typeorm';

/** Why a version was deployed, in the deployer's words; the gateway refuses longer notes before they get here. */
export class DeployNotes1796110000000 implements MigrationInterface {
  name = 'DeployNotes1796110000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE decision_versions ADD COLUMN note text CHECK (char_length(note) <= 500)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE decision_versions DROP COLUMN note`);
  }
}

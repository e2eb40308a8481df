import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `reviewer` role (docs/security.md): members and invitations may hold it. The previous release reads a role
 * it does not know as reaching nothing, so a reviewer is refused everywhere by it until the rollout is over.
 */
export class ReviewerRole1796500000000 implements MigrationInterface {
  name = 'ReviewerRole1796500000000';

  async up(q: QueryRunner): Promise<void> {
    // Added NOT VALID and validated after, so the check of existing rows does not hold the table's strongest lock.
    await q.query(`ALTER TABLE memberships DROP CONSTRAINT IF EXISTS memberships_role_check`);
    await q.query(`ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'admin', 'member', 'viewer', 'reviewer')) NOT VALID`);
    await q.query(`ALTER TABLE memberships VALIDATE CONSTRAINT memberships_role_check`);
    await q.query(`ALTER TABLE invitations DROP CONSTRAINT IF EXISTS invitations_role_check`);
    await q.query(`ALTER TABLE invitations ADD CONSTRAINT invitations_role_check CHECK (role IN ('admin', 'member', 'viewer', 'reviewer')) NOT VALID`);
    await q.query(`ALTER TABLE invitations VALIDATE CONSTRAINT invitations_role_check`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM invitations WHERE role = 'reviewer'`);
    await q.query(`DELETE FROM memberships WHERE role = 'reviewer'`);
    await q.query(`ALTER TABLE invitations DROP CONSTRAINT IF EXISTS invitations_role_check`);
    await q.query(`ALTER TABLE invitations ADD CONSTRAINT invitations_role_check CHECK (role IN ('admin', 'member', 'viewer'))`);
    await q.query(`ALTER TABLE memberships DROP CONSTRAINT IF EXISTS memberships_role_check`);
    await q.query(`ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'admin', 'member', 'viewer'))`);
  }
}

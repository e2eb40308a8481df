import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where each session was opened from and when it was last used, so a person can tell their sessions apart and spot
 * one that is not theirs. Both nullable: sessions opened before, and by the previous version while it still runs,
 * have neither.
 */
export class SessionActivity1796100000000 implements MigrationInterface {
  name = 'SessionActivity1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions ADD COLUMN IF NOT EXISTS address text');
    await q.query('ALTER TABLE sessions ADD COLUMN IF NOT EXISTS last_active_at timestamptz');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions DROP COLUMN IF EXISTS last_active_at');
    await q.query('ALTER TABLE sessions DROP COLUMN IF EXISTS address');
  }
}

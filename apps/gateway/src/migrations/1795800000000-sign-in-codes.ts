import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-in codes sent by e-mail. Every request is a row, whether or not the e-mail has an account, so the limits
 * per e-mail tell nothing about which ones do; rows are keyed by a hash of the e-mail, and the code itself is kept
 * as a scrypt hash like a password (six digits are quick to try against a plain hash).
 */
export class SignInCodes1795800000000 implements MigrationInterface {
  name = 'SignInCodes1795800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS sign_in_codes (
      id text PRIMARY KEY,
      email_hash text NOT NULL,
      user_id text,
      code_hash text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`);
    await q.query('CREATE INDEX IF NOT EXISTS sign_in_codes_email_created ON sign_in_codes (email_hash, created_at)');
    await q.query('CREATE INDEX IF NOT EXISTS sign_in_codes_created ON sign_in_codes (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS sign_in_codes');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Wrong sign-ins for e-mails that have no account, counted like those of an account (five lock the e-mail for
 * fifteen minutes), so that the lock's answer does not tell which e-mails have one. Keyed by a hash of the
 * e-mail: the table never holds addresses of people who have not signed up.
 */
export class UnknownEmailSignIns1795500000000 implements MigrationInterface {
  name = 'UnknownEmailSignIns1795500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS unknown_email_sign_ins (
      email_hash text PRIMARY KEY,
      failed_sign_ins integer NOT NULL,
      locked_until timestamptz,
      last_attempt_at timestamptz NOT NULL
    )`);
    // The purge reads the oldest attempts first.
    await q.query('CREATE INDEX IF NOT EXISTS unknown_email_sign_ins_last_attempt ON unknown_email_sign_ins (last_attempt_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS unknown_email_sign_ins');
  }
}

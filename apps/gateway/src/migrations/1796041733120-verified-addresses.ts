import { MigrationInterface, QueryRunner } from 'typeorm';
import { canonicalEmail } from '../auth/email-address';

/**
 * Addresses proven by an e-mailed code, sessions a user can list and end, passwords an account may lack (taken away
 * when someone else proves the address, or never set), and codes for more than signing in.
 *
 * Stored addresses are rewritten to their canonical spelling (NFC, case folded), since lookups now compare that
 * spelling. Where two accounts' addresses turn out to be one, one account keeps it and the others keep their old
 * spelling, which no sign-in reaches any more; they are listed in `email_collisions` for the operator to settle
 * (docs/security.md says how), rather than merged or deleted here, since nothing tells which is the owner's.
 */
export class VerifiedAddresses1796041733120 implements MigrationInterface {
  name = 'VerifiedAddresses1796041733120';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE users ADD COLUMN IF NOT EXISTS email_verified_at timestamptz');
    await q.query('ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL');
    await q.query('ALTER TABLE sessions ADD COLUMN IF NOT EXISTS id uuid NOT NULL DEFAULT gen_random_uuid()');
    await q.query('CREATE UNIQUE INDEX IF NOT EXISTS sessions_id ON sessions (id)');
    await q.query('CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_id)');
    await q.query(`ALTER TABLE sessions ADD COLUMN IF NOT EXISTS method text NOT NULL DEFAULT 'password'`);
    await q.query('ALTER TABLE sessions ADD COLUMN IF NOT EXISTS user_agent text');
    await q.query(`ALTER TABLE sign_in_codes ADD COLUMN IF NOT EXISTS purpose text NOT NULL DEFAULT 'sign_in'`);
    await q.query(`CREATE TABLE IF NOT EXISTS email_collisions (
      user_id text PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
      canonical_email text NOT NULL,
      kept_by text NOT NULL,
      found_at timestamptz NOT NULL DEFAULT now()
    )`);

    // Only addresses with upper case or non-ASCII characters can change spelling.
    const rows = (await q.query(`SELECT id, email FROM users WHERE email <> lower(email) OR email ~ '[^\\x01-\\x7f]' ORDER BY created_at, id`)) as Array<{
      id: string;
      email: string;
    }>;
    const byCanonical = new Map<string, string[]>();
    for (const row of rows) {
      const canonical = canonicalEmail(row.email);
      if (canonical !== row.email) byCanonical.set(canonical, [...(byCanonical.get(canonical) ?? []), row.id]);
    }
    for (const [canonical, ids] of byCanonical) {
      // An account already stored under the canonical spelling is the one sign-ins with that spelling reached, so it
      // keeps it; otherwise the oldest of the accounts whose spelling changes.
      const [holder] = (await q.query('SELECT id FROM users WHERE email = $1', [canonical])) as Array<{ id: string }>;
      const keeper = holder?.id ?? ids[0]!;
      if (!holder) await q.query('UPDATE users SET email = $2 WHERE id = $1', [keeper, canonical]);
      for (const id of ids.filter((candidate) => candidate !== keeper)) {
        await q.query('INSERT INTO email_collisions (user_id, canonical_email, kept_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [id, canonical, keeper]);
      }
    }

    const invitations = (await q.query(`SELECT id, email FROM invitations WHERE email <> lower(email) OR email ~ '[^\\x01-\\x7f]'`)) as Array<{
      id: string;
      email: string;
    }>;
    for (const invitation of invitations) await q.query('UPDATE invitations SET email = $2 WHERE id = $1', [invitation.id, canonicalEmail(invitation.email)]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS email_collisions');
    await q.query('ALTER TABLE sign_in_codes DROP COLUMN IF EXISTS purpose');
    await q.query('ALTER TABLE sessions DROP COLUMN IF EXISTS user_agent');
    await q.query('ALTER TABLE sessions DROP COLUMN IF EXISTS method');
    await q.query('DROP INDEX IF EXISTS sessions_user');
    await q.query('DROP INDEX IF EXISTS sessions_id');
    await q.query('ALTER TABLE sessions DROP COLUMN IF EXISTS id');
    await q.query('ALTER TABLE users DROP COLUMN IF EXISTS email_verified_at');
  }
}

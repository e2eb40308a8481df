import { MigrationInterface, QueryRunner } from 'typeorm';

export class Idempotency1763790000000 implements MigrationInterface {
  name = 'Idempotency1763790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        workspace_id uuid NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        state text NOT NULL CHECK (state IN ('reserved', 'stored')),
        -- A reservation whose gateway died is taken over once this passes.
        lease_until timestamptz NOT NULL,
        response_body text,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, key)
      )`);
    await q.query('CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE idempotency_keys');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

export class ProviderCredentials1764300000000 implements MigrationInterface {
  name = 'ProviderCredentials1764300000000';

  async up(q: QueryRunner): Promise<void> {
    // One row per workspace that ever chose a credential. The choice (use_own_key) outlives a deleted key,
    // so the key columns are either all set or all empty.
    await q.query(`
      CREATE TABLE provider_credentials (
        workspace_id text PRIMARY KEY,
        use_own_key boolean NOT NULL DEFAULT false,
        provider text CHECK (provider IN ('anthropic', 'openai')),
        sealed bytea,
        key_id text,
        last4 text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((provider IS NULL) = (sealed IS NULL) AND (sealed IS NULL) = (key_id IS NULL) AND (key_id IS NULL) = (last4 IS NULL))
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE provider_credentials');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The last four characters of each new API key, so a list can show `svc_live_…Zo1f` and people can tell their keys
 * apart; the key itself is still kept only as its hash. Keys made before have none and are named by id.
 */
export class ApiKeyHints1796000374215 implements MigrationInterface {
  name = 'ApiKeyHints1796000374215';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last4 text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE api_keys DROP COLUMN IF EXISTS last4');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What each attempt's receiver answered: its content type and the first 8 KiB of its body (`@ds/webhooks`'
 * RESPONSE_BODY_LIMIT), with whether it was cut. The body sent is the delivery's own `body`, written once per
 * delivery. Attempts go with their delivery (ON DELETE CASCADE), so the retention purge and a workspace's deletion
 * take these too. Attempts made before this migration, and by a replica of the earlier version during a rollout,
 * have none.
 */
export class AttemptResponses1796215000000 implements MigrationInterface {
  name = 'AttemptResponses1796215000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE delivery_attempts
        ADD COLUMN response_content_type text,
        ADD COLUMN response_body text,
        ADD COLUMN response_truncated boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE delivery_attempts DROP COLUMN response_content_type, DROP COLUMN response_body, DROP COLUMN response_truncated`);
  }
}

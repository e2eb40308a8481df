import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signing secrets sealed at rest under DELIVERY_SECRETS_KEY (AES-256-GCM, `@ds/sealing`), the id of the sealing
 * key beside each. The order is what keeps every secret readable:
 *
 * 1. Here: `sealed` and `key_id` are added and the plaintext column is renamed `unsealed_secret`, nullable. A
 *    migration cannot seal: it runs without the service's keys (`main.js migrate`, the chart's init container).
 * 2. At every start the service seals what is left in `unsealed_secret`, in batches, each row in one conditional
 *    update that writes the sealed value and clears the plaintext together (`SigningSecretsService.sealAtRest`).
 *    Until its turn a row is read from `unsealed_secret`, so signing never waits for the sweep.
 * 3. `unsealed_secret` is dropped by a later migration, shipped once every installation has started this version:
 *    by then nothing writes it, and nothing reads it but the sweep, which finds it empty. Dropping it here would
 *    lose every secret the sweep had not reached.
 *
 * Renamed rather than kept: a replica of the previous version still serving during a rolling update reads and
 * writes `secret`. With that column gone its queries fail, so it hands its deliveries back (retried without
 * counting an attempt) instead of signing with a secret it no longer finds, and it cannot write a plaintext secret
 * behind the sweep.
 */
export class SealedSigningSecrets1795600000000 implements MigrationInterface {
  name = 'SealedSigningSecrets1795600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE signing_secrets RENAME COLUMN secret TO unsealed_secret`);
    await q.query(`ALTER TABLE signing_secrets ALTER COLUMN unsealed_secret DROP NOT NULL`);
    await q.query(`ALTER TABLE signing_secrets ADD COLUMN sealed bytea, ADD COLUMN key_id text`);
    // Every row holds its secret exactly once: still in plaintext, or sealed under a named key.
    await q.query(`
      ALTER TABLE signing_secrets ADD CONSTRAINT signing_secrets_held_once
        CHECK (num_nonnulls(unsealed_secret, sealed) = 1 AND (sealed IS NULL) = (key_id IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    const [row] = (await q.query(`SELECT count(*)::int AS sealed FROM signing_secrets WHERE sealed IS NOT NULL`)) as Array<{ sealed: number }>;
    if ((row?.sealed ?? 0) > 0) {
      throw new Error('signing secrets are sealed and only the delivery service, with DELIVERY_SECRETS_KEY, can open them; this cannot be undone here');
    }
    await q.query(`ALTER TABLE signing_secrets DROP CONSTRAINT signing_secrets_held_once`);
    await q.query(`ALTER TABLE signing_secrets DROP COLUMN sealed, DROP COLUMN key_id`);
    await q.query(`ALTER TABLE signing_secrets ALTER COLUMN unsealed_secret SET NOT NULL`);
    await q.query(`ALTER TABLE signing_secrets RENAME COLUMN unsealed_secret TO secret`);
  }
}

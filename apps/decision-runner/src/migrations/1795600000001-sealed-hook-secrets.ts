import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secret-URL secrets sealed at rest under RUNNER_SECRETS_KEY (AES-256-GCM, `@ds/sealing`), the id of the sealing
 * key beside each. The order is what keeps every secret readable:
 *
 * 1. Here: `sealed_secret` and `secret_key_id` are added and the plaintext column is renamed `unsealed_secret`. A
 *    migration cannot seal: it runs without the service's keys (`main.js migrate`, the chart's init container).
 * 2. At every start the runner seals what is left in `unsealed_secret`, in batches, each row in one conditional
 *    update that writes the sealed value and clears the plaintext together (`HooksService.sealAtRest`). Until its
 *    turn a row is read from `unsealed_secret`, so a call to the URL never waits for the sweep.
 * 3. `unsealed_secret` is dropped by a later migration, shipped once every installation has started this version:
 *    by then nothing writes it, and nothing reads it but the sweep, which finds it empty. Dropping it here would
 *    lose every secret the sweep had not reached.
 *
 * Renamed rather than kept: a runner of the previous version still serving during a rolling update reads `secret`,
 * where NULL means "no secret", and would let unsigned calls through for a URL whose secret is sealed. With that
 * column gone its resolution fails, so the gateway refuses the call instead; and it cannot write a plaintext
 * secret behind the sweep.
 */
export class SealedHookSecrets1795600000001 implements MigrationInterface {
  name = 'SealedHookSecrets1795600000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE decision_hooks RENAME COLUMN secret TO unsealed_secret`);
    await q.query(`ALTER TABLE decision_hooks ADD COLUMN sealed_secret bytea, ADD COLUMN secret_key_id text`);
    // A URL has no secret, or one held once: still in plaintext, or sealed under a named key.
    await q.query(`
      ALTER TABLE decision_hooks ADD CONSTRAINT decision_hooks_secret_held_once
        CHECK (num_nonnulls(unsealed_secret, sealed_secret) <= 1 AND (sealed_secret IS NULL) = (secret_key_id IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    const [row] = (await q.query(`SELECT count(*)::int AS sealed FROM decision_hooks WHERE sealed_secret IS NOT NULL`)) as Array<{ sealed: number }>;
    if ((row?.sealed ?? 0) > 0) {
      throw new Error('secret-URL secrets are sealed and only decision-runner, with RUNNER_SECRETS_KEY, can open them; this cannot be undone here');
    }
    await q.query(`ALTER TABLE decision_hooks DROP CONSTRAINT decision_hooks_secret_held_once`);
    await q.query(`ALTER TABLE decision_hooks DROP COLUMN sealed_secret, DROP COLUMN secret_key_id`);
    await q.query(`ALTER TABLE decision_hooks RENAME COLUMN unsealed_secret TO secret`);
  }
}

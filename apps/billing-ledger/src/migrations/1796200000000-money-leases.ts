import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Money leases: a lease past the included volume holds its decisions on the overage volume and the money for them
 * on the credit sources. `funding` says which kind a lease is; a money lease records its currency, the price of one
 * decision when it was granted, and what it still holds of each source in consumption order (`money_held`:
 * `[{ account_id, kind, grant_id, micros }]`, micros as text), so that its current holds
 * (`<id>:hold:<hold_seq>:<index>`) can be rebuilt from the row as the decisions hold is from `held`. A run billed
 * against a money lease posts its charges as `single` entries (no hold of its own to post), so the index that usage
 * per decision reads the charges from covers those too. `counted` says whether the grant put the lease in its
 * counter: one reclaimed before that (a spend cap or plan change, a refusal) gave no unit, and frees all it holds.
 */
export class MoneyLeases1796200000000 implements MigrationInterface {
  name = 'MoneyLeases1796200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE leases ADD COLUMN funding text NOT NULL DEFAULT 'included' CHECK (funding IN ('included', 'credits'))`);
    await q.query(`ALTER TABLE leases ADD COLUMN currency text`);
    await q.query(`ALTER TABLE leases ADD COLUMN unit_price_micros bigint CHECK (unit_price_micros >= 0)`);
    await q.query(`ALTER TABLE leases ADD COLUMN money_held jsonb NOT NULL DEFAULT '[]'::jsonb`);
    await q.query(`ALTER TABLE leases ADD COLUMN counted boolean NOT NULL DEFAULT true`);
    await q.query(
      `ALTER TABLE leases ADD CONSTRAINT leases_money_fields CHECK (
         (funding = 'credits') = (currency IS NOT NULL AND unit_price_micros IS NOT NULL) AND (funding = 'credits' OR money_held = '[]'::jsonb))`,
    );
    await q.query('DROP INDEX transfers_posted_charges');
    await q.query(
      `CREATE INDEX transfers_posted_charges ON transfers (credit_account_id) INCLUDE (decision_id, amount) WHERE code = 'decision_charge' AND phase IN ('single', 'post')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // A money lease still holding something would be read back as holding included decisions.
    const [open] = (await q.query(`SELECT count(*)::int AS n FROM leases WHERE funding = 'credits' AND state <> 'closed'`)) as Array<{ n: number }>;
    if ((open?.n ?? 0) > 0) throw new Error('money leases still hold decisions: stop granting them and let the sweeper close them first');
    await q.query('DROP INDEX transfers_posted_charges');
    await q.query(
      `CREATE INDEX transfers_posted_charges ON transfers (credit_account_id) INCLUDE (decision_id, amount) WHERE code = 'decision_charge' AND phase = 'post'`,
    );
    await q.query(`ALTER TABLE leases DROP CONSTRAINT leases_money_fields`);
    await q.query(`ALTER TABLE leases DROP COLUMN counted, DROP COLUMN money_held, DROP COLUMN unit_price_micros, DROP COLUMN currency, DROP COLUMN funding`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage per decision: a posted entry that bills a run names the run's decision (null on every other entry, and on
 * entries of settlements that did not carry it). The posted debits' index, which the usage per day already reads,
 * carries the decision and amount too, so that both sums are read from the index alone and a run still writes one
 * index entry there. Charges get a partial index of their own: only runs past the included volume write to it.
 */
export class UsagePerDecision1796127000000 implements MigrationInterface {
  name = 'UsagePerDecision1796127000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transfers ADD COLUMN decision_id text`);
    await q.query('DROP INDEX transfers_posted_debits');
    await q.query(
      `CREATE INDEX transfers_posted_debits ON transfers (debit_account_id, created_at) INCLUDE (decision_id, amount) WHERE phase IN ('single', 'post')`,
    );
    await q.query(
      `CREATE INDEX transfers_posted_charges ON transfers (credit_account_id) INCLUDE (decision_id, amount) WHERE code = 'decision_charge' AND phase = 'post'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX transfers_posted_charges');
    await q.query('DROP INDEX transfers_posted_debits');
    await q.query(`CREATE INDEX transfers_posted_debits ON transfers (debit_account_id, created_at) WHERE phase IN ('single', 'post')`);
    await q.query('ALTER TABLE transfers DROP COLUMN decision_id');
  }
}

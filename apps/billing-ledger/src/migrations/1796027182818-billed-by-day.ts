import { MigrationInterface, QueryRunner } from 'typeorm';

export class BilledByDay1796027182818 implements MigrationInterface {
  name = 'BilledByDay1796027182818';

  async up(q: QueryRunner): Promise<void> {
    // The usage chart sums the posted debits of one period's volume accounts by day: this reaches exactly those entries.
    await q.query(`CREATE INDEX transfers_posted_debits ON transfers (debit_account_id, created_at) WHERE phase IN ('single', 'post')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX transfers_posted_debits');
  }
}

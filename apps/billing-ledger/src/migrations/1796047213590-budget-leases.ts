import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Budget leases: a lease holds N decisions of a period's included volume under one hold (its current one is
 * `<id>:hold:<hold_seq>`, holding `held`); executions paid from it get a reservation row naming it when they settle.
 */
export class BudgetLeases1796047213590 implements MigrationInterface {
  name = 'BudgetLeases1796047213590';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE leases (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES accounts (workspace_id),
        period_start timestamptz NOT NULL,
        units integer NOT NULL CHECK (units > 0),
        held integer NOT NULL CHECK (held >= 0 AND held <= units),
        hold_seq integer NOT NULL DEFAULT 0,
        state text NOT NULL CHECK (state IN ('open', 'draining', 'closed')),
        granted_at timestamptz NOT NULL,
        takes_until timestamptz NOT NULL,
        closed_at timestamptz,
        CHECK ((state = 'closed') = (closed_at IS NOT NULL)),
        CHECK (state <> 'closed' OR held = 0)
      )`);
    await q.query(`CREATE INDEX leases_unclosed ON leases (workspace_id, granted_at) WHERE state <> 'closed'`);
    await q.query(`CREATE INDEX leases_latest ON leases (workspace_id, granted_at DESC)`);
    await q.query(`ALTER TABLE reservations ADD COLUMN lease_id text REFERENCES leases (id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reservations DROP COLUMN lease_id`);
    await q.query(`DROP TABLE leases`);
  }
}

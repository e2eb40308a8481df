import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ledger's invariants live in the schema too, as a last line of defence behind the service's lock: guarded
 * accounts can never be overdrawn, a hold is resolved at most once, and entries are never changed or removed.
 */
export class Initial1763780000000 implements MigrationInterface {
  name = 'Initial1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE accounts (
        workspace_id text PRIMARY KEY,
        plan text NOT NULL CHECK (plan IN ('genesis', 'developer', 'growth', 'enterprise')),
        overrides jsonb NOT NULL DEFAULT '{}',
        period_anchor timestamptz NOT NULL DEFAULT now(),
        currency text NOT NULL DEFAULT 'usd' CHECK (currency IN ('usd', 'brl')),
        spend_cap_cents bigint CHECK (spend_cap_cents >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE ledger_accounts (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES accounts (workspace_id),
        ledger text NOT NULL CHECK (ledger IN ('decisions', 'usd', 'brl')),
        kind text NOT NULL CHECK (kind IN ('included_volume', 'overage_volume', 'decisions_billed', 'promotions_issued',
          'payments_received', 'promotional_grant', 'paid_balance', 'spend', 'expired')),
        period_start timestamptz,
        grant_id text,
        expires_at timestamptz,
        no_overdraw boolean NOT NULL,
        debits_pending bigint NOT NULL DEFAULT 0 CHECK (debits_pending >= 0),
        debits_posted bigint NOT NULL DEFAULT 0 CHECK (debits_posted >= 0),
        credits_pending bigint NOT NULL DEFAULT 0 CHECK (credits_pending >= 0),
        credits_posted bigint NOT NULL DEFAULT 0 CHECK (credits_posted >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ledger_accounts_no_overdraw CHECK (NOT no_overdraw OR debits_posted + debits_pending <= credits_posted)
      )`);
    await q.query(`CREATE INDEX ledger_accounts_credit_sources ON ledger_accounts (workspace_id, ledger) WHERE kind IN ('promotional_grant', 'paid_balance')`);
    await q.query(`CREATE INDEX ledger_accounts_expiring ON ledger_accounts (expires_at) WHERE kind = 'promotional_grant' AND expires_at IS NOT NULL`);
    await q.query(`
      CREATE TABLE transfers (
        id text PRIMARY KEY,
        cause_id text NOT NULL,
        workspace_id text NOT NULL REFERENCES accounts (workspace_id),
        ledger text NOT NULL,
        debit_account_id text NOT NULL REFERENCES ledger_accounts (id),
        credit_account_id text NOT NULL REFERENCES ledger_accounts (id),
        amount bigint NOT NULL CHECK (amount > 0),
        phase text NOT NULL CHECK (phase IN ('single', 'pending', 'post', 'void')),
        pending_id text UNIQUE REFERENCES transfers (id),
        code text NOT NULL CHECK (code IN ('included_decision', 'overage_decision', 'decision_charge', 'grant', 'expiry')),
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (debit_account_id <> credit_account_id),
        CHECK ((phase IN ('post', 'void')) = (pending_id IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX transfers_cause ON transfers (cause_id)`);
    await q.query(`
      CREATE FUNCTION transfers_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'ledger entries are append-only';
      END $$`);
    await q.query(`CREATE TRIGGER transfers_append_only BEFORE UPDATE OR DELETE ON transfers FOR EACH ROW EXECUTE FUNCTION transfers_are_append_only()`);
    await q.query(`
      CREATE TABLE reservations (
        execution_id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES accounts (workspace_id),
        state text NOT NULL CHECK (state IN ('pending', 'committed', 'released')),
        period_start timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        settled_at timestamptz,
        settled_by text CHECK (settled_by IN ('runner', 'sweeper')),
        sweep_claimed_until timestamptz,
        CHECK ((state = 'pending') = (settled_at IS NULL))
      )`);
    await q.query(`CREATE INDEX reservations_unsettled ON reservations (created_at) WHERE state = 'pending'`);
    await q.query(`
      CREATE TABLE credit_grants (
        workspace_id text NOT NULL REFERENCES accounts (workspace_id),
        grant_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('promotional', 'paid')),
        amount_cents bigint NOT NULL CHECK (amount_cents > 0),
        currency text NOT NULL CHECK (currency IN ('usd', 'brl')),
        expires_at timestamptz CHECK (kind = 'promotional' OR expires_at IS NULL),
        transfer_id text NOT NULL REFERENCES transfers (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, grant_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE credit_grants, reservations, transfers, ledger_accounts, accounts');
    await q.query('DROP FUNCTION transfers_are_append_only()');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deliveries, their attempts and the workspaces' signing secrets. A delivery row is written the first time its
 * message is consumed; its id (the `dlv_…` id) makes every redelivery of the same message find the same row.
 */
export class Deliveries1795448851605 implements MigrationInterface {
  name = 'Deliveries1795448851605';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE deliveries (
        id text PRIMARY KEY,
        seq bigserial NOT NULL UNIQUE,
        workspace_id text NOT NULL,
        decision_id text NOT NULL,
        decision_slug text NOT NULL,
        execution_id text NOT NULL,
        destination_key text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('webhook', 'http', 'workflow', 'agent')),
        livemode boolean NOT NULL,
        url text NOT NULL,
        method text NOT NULL,
        headers jsonb NOT NULL,
        body text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        sequence integer NOT NULL DEFAULT 1 CHECK (sequence >= 1),
        attempt_count integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
        next_attempt_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX deliveries_workspace ON deliveries (workspace_id, seq DESC)`);
    await q.query(`CREATE INDEX deliveries_decision ON deliveries (workspace_id, decision_id, seq DESC)`);
    await q.query(`CREATE INDEX deliveries_created ON deliveries (created_at)`);
    await q.query(`CREATE INDEX deliveries_pending ON deliveries (created_at) WHERE status = 'pending'`);
    await q.query(`
      CREATE TABLE delivery_attempts (
        id bigserial PRIMARY KEY,
        delivery_id text NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
        sequence integer NOT NULL,
        attempt integer NOT NULL CHECK (attempt >= 1),
        started_at timestamptz NOT NULL DEFAULT now(),
        outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'gone', 'timeout', 'refused', 'network', 'interrupted')),
        response_status integer,
        duration_ms integer,
        error text,
        UNIQUE (delivery_id, sequence, attempt)
      )`);
    await q.query(`
      CREATE TABLE signing_secrets (
        id bigserial PRIMARY KEY,
        workspace_id text NOT NULL,
        secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz
      )`);
    // One current secret per workspace; rotated ones carry the moment they stop signing.
    await q.query(`CREATE UNIQUE INDEX signing_secrets_current ON signing_secrets (workspace_id) WHERE expires_at IS NULL`);
    await q.query(`CREATE INDEX signing_secrets_workspace ON signing_secrets (workspace_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE signing_secrets');
    await q.query('DROP TABLE delivery_attempts');
    await q.query('DROP TABLE deliveries');
  }
}

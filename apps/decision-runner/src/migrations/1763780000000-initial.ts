import { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1763780000000 implements MigrationInterface {
  name = 'Initial1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE decisions (
        id text PRIMARY KEY,
        workspace_id text NOT NULL,
        slug text NOT NULL,
        name text NOT NULL,
        description text,
        draft_schema jsonb NOT NULL,
        revision integer NOT NULL,
        active_version integer,
        endpoint_enabled boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (workspace_id, slug)
      )`);
    await q.query(`
      CREATE TABLE decision_versions (
        decision_id text NOT NULL REFERENCES decisions(id) ON DELETE CASCADE,
        version integer NOT NULL,
        schema jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (decision_id, version)
      )`);
    await q.query(`
      CREATE TABLE executions (
        id text PRIMARY KEY,
        seq bigserial NOT NULL,
        workspace_id text NOT NULL,
        decision_id text NOT NULL,
        decision_slug text NOT NULL,
        version integer NOT NULL,
        source text NOT NULL,
        status text NOT NULL CHECK (status IN ('success', 'error')),
        request_id text NOT NULL,
        livemode boolean NOT NULL,
        result jsonb,
        confidence jsonb,
        scores jsonb,
        composites jsonb,
        action text,
        action_reason jsonb,
        metrics jsonb,
        destinations jsonb,
        error jsonb,
        input jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX executions_workspace_seq ON executions (workspace_id, seq DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE executions');
    await q.query('DROP TABLE decision_versions');
    await q.query('DROP TABLE decisions');
  }
}

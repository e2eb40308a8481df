import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Review items (docs/reviews.md): one per live run sent to human review. An item goes with its execution
 * (`ON DELETE CASCADE`), so reviews follow the executions' retention purge and a workspace's deletion. Status is
 * not stored: `open`, `claimed` and `expired` are read from the claim and due times against the clock, so nothing
 * has to move an item when a claim lapses or its due time passes. Only additions: the previous version neither
 * reads nor writes the table.
 */
export class ReviewItems1796500000000 implements MigrationInterface {
  name = 'ReviewItems1796500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS review_items (
        id text PRIMARY KEY,
        workspace_id text NOT NULL,
        decision_id text NOT NULL,
        decision_slug text NOT NULL,
        version integer NOT NULL,
        execution_id text NOT NULL UNIQUE REFERENCES executions(id) ON DELETE CASCADE,
        reason text NOT NULL CHECK (reason IN ('action', 'low_confidence', 'engine_error', 'audit')),
        executed_at timestamptz NOT NULL,
        due_at timestamptz NOT NULL,
        claimed_by text,
        claim_expires_at timestamptz,
        resolved_at timestamptz,
        resolved_by text,
        resolution jsonb,
        CHECK ((claimed_by IS NULL) = (claim_expires_at IS NULL)),
        CHECK ((resolved_at IS NULL) = (resolved_by IS NULL))
      )`);
    // The inbox: a workspace's items, oldest due first (the cursor is due_at, id).
    await q.query('CREATE INDEX IF NOT EXISTS review_items_workspace_due ON review_items (workspace_id, due_at, id)');
    // The metrics' open items and oldest due time, across workspaces.
    await q.query('CREATE INDEX IF NOT EXISTS review_items_unresolved_due ON review_items (due_at) WHERE resolved_at IS NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS review_items');
  }
}

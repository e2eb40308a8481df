import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replays and their executions, one row each, written when the replay starts: the work list survives a restart
 * of the runner, and an execution's row turns `done` in the same transaction that records its replay, so a
 * resumed replay neither repeats nor skips one.
 */
export class Replays1796058314159 implements MigrationInterface {
  name = 'Replays1796058314159';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE replays (
        id text PRIMARY KEY,
        workspace_id text NOT NULL,
        decision_id text NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
        version integer,
        schema jsonb NOT NULL,
        selection jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('running', 'completed', 'cancelled')),
        started_by jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    await q.query(`CREATE INDEX replays_of_decision ON replays (decision_id, created_at DESC)`);
    await q.query(`CREATE INDEX replays_of_workspace ON replays (workspace_id, created_at)`);
    await q.query(`CREATE INDEX replays_running ON replays (created_at) WHERE status = 'running'`);
    await q.query(`
      CREATE TABLE replay_items (
        replay_id text NOT NULL REFERENCES replays (id) ON DELETE CASCADE,
        position integer NOT NULL,
        execution_id text NOT NULL,
        replay_execution_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'done', 'failed', 'cancelled')),
        old_action text NOT NULL,
        old_answers jsonb,
        new_action text,
        new_answers jsonb,
        error jsonb,
        PRIMARY KEY (replay_id, position)
      )`);
    await q.query(`CREATE INDEX replay_items_pending ON replay_items (replay_id, position) WHERE status = 'pending'`);
    // What a replay may take: the newest successful runs of a decision that kept their input.
    await q.query(`CREATE INDEX executions_replayable ON executions (decision_id, created_at DESC) WHERE input IS NOT NULL AND status = 'success'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX executions_replayable`);
    await q.query(`DROP TABLE replay_items`);
    await q.query(`DROP TABLE replays`);
  }
}

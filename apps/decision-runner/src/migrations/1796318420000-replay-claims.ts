import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replay items get an in-flight state: `running` from the moment a worker claims one (when and by which claim)
 * until its replay is recorded, so a cancel cannot take back an engine call already made. Replays remember when
 * one of their items was last claimed, which is how the worker serves workspaces in turn.
 *
 * Only additions: the previous version's worker claims `pending` items only and finishes them only while they are
 * still `pending`, so it leaves `running` items alone; its cancel touches `pending` items only; its usage count
 * already counts everything but `cancelled`.
 */
export class ReplayClaims1796318420000 implements MigrationInterface {
  name = 'ReplayClaims1796318420000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE replay_items ADD COLUMN claimed_at timestamptz, ADD COLUMN claimed_by text`);
    await q.query(`ALTER TABLE replays ADD COLUMN last_claimed_at timestamptz`);
    // A wider check, added NOT VALID then validated, so the table is not locked against writes while rows are read.
    await q.query(`ALTER TABLE replay_items DROP CONSTRAINT replay_items_status_check`);
    await q.query(
      `ALTER TABLE replay_items ADD CONSTRAINT replay_items_status_check CHECK (status IN ('pending', 'running', 'done', 'failed', 'cancelled')) NOT VALID`,
    );
    await q.query(`ALTER TABLE replay_items VALIDATE CONSTRAINT replay_items_status_check`);
    // Claims left behind by a runner that stopped mid-call, looked for before each claim.
    await q.query(`CREATE INDEX replay_items_running ON replay_items (claimed_at) WHERE status = 'running'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX replay_items_running`);
    // Back to the previous version's states: an item in flight is run again there.
    await q.query(`UPDATE replay_items SET status = 'pending' WHERE status = 'running'`);
    await q.query(`ALTER TABLE replay_items DROP CONSTRAINT replay_items_status_check`);
    await q.query(`ALTER TABLE replay_items ADD CONSTRAINT replay_items_status_check CHECK (status IN ('pending', 'done', 'failed', 'cancelled'))`);
    await q.query(`ALTER TABLE replays DROP COLUMN last_claimed_at`);
    await q.query(`ALTER TABLE replay_items DROP COLUMN claimed_at, DROP COLUMN claimed_by`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An execution's input is kept as the caller sent it: `input_json` is `json`, which stores the text, so the keys
 * of the state keep their order at every level (`jsonb` sorts them, and the engine's prompt is written in that
 * order). Replays get a baseline: the active version replayed on the same executions, so that a change is read
 * against the model's own noise.
 *
 * Only additions, all nullable: the previous version names its columns in every INSERT and never reads these.
 * This version writes `input` as well as `input_json` (one serialised text, cast twice by PostgreSQL), so the
 * previous version's replays and the replayable index keep working while both run; it reads `input_json` first
 * and falls back to `input` for rows written before.
 */
export class OrderedInputs1796331739000 implements MigrationInterface {
  name = 'OrderedInputs1796331739000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions ADD COLUMN input_json json`);
    await q.query(`ALTER TABLE replays ADD COLUMN baseline_version integer, ADD COLUMN baseline_schema jsonb`);
    await q.query(`ALTER TABLE replay_items ADD COLUMN baseline_action text, ADD COLUMN baseline_answers jsonb, ADD COLUMN baseline_error jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE replay_items DROP COLUMN baseline_action, DROP COLUMN baseline_answers, DROP COLUMN baseline_error`);
    await q.query(`ALTER TABLE replays DROP COLUMN baseline_version, DROP COLUMN baseline_schema`);
    await q.query(`ALTER TABLE executions DROP COLUMN input_json`);
  }
}

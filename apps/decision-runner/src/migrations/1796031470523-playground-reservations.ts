import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per playground run allowed, written before its engine call under a per-workspace lock, so that the
 * "30 a minute, 2,000 a day" windows hold however many requests and runner replicas race. A run whose engine call
 * never happened deletes its row. Rows older than a day are deleted by the next reservation of their workspace.
 */
export class PlaygroundReservations1796031470523 implements MigrationInterface {
  name = 'PlaygroundReservations1796031470523';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE playground_reservations (
        id text PRIMARY KEY,
        workspace_id text NOT NULL,
        reserved_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX playground_reservations_window ON playground_reservations (workspace_id, reserved_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE playground_reservations`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Limits on a workspace's heavy work (calibration fits), shared by every runner replica: `lab_turns` holds the one
 * running at a time per workspace and kind until it ends or its lease lapses, `lab_budgets` counts the runs of each
 * UTC day against the plan's cap.
 */
export class LabLimits1796240381000 implements MigrationInterface {
  name = 'LabLimits1796240381000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE lab_turns (
        workspace_id text NOT NULL,
        kind text NOT NULL,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (workspace_id, kind)
      )`);
    await q.query(`
      CREATE TABLE lab_budgets (
        workspace_id text NOT NULL,
        kind text NOT NULL,
        day date NOT NULL,
        used integer NOT NULL CHECK (used >= 0),
        PRIMARY KEY (workspace_id, kind, day)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE lab_budgets`);
    await q.query(`DROP TABLE lab_turns`);
  }
}

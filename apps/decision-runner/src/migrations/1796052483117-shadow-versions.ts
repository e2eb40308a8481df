import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A version can run as the shadow of the active one, so the newest version is no longer always the active one:
 * `latest_version` numbers the next deploy. The shadow is kept on the decision row, which every run already
 * reads. A shadow's executions name the live execution they shadowed (`shadow_of`).
 */
export class ShadowVersions1796052483117 implements MigrationInterface {
  name = 'ShadowVersions1796052483117';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE decisions
         ADD COLUMN latest_version integer,
         ADD COLUMN shadow_version integer,
         ADD COLUMN shadow_rate smallint CHECK (shadow_rate BETWEEN 1 AND 100),
         ADD COLUMN shadow_started_at timestamptz,
         ADD COLUMN shadow_started_by jsonb`,
    );
    await q.query(`UPDATE decisions d SET latest_version = (SELECT max(version) FROM decision_versions v WHERE v.decision_id = d.id)`);
    await q.query(`ALTER TABLE executions ADD COLUMN shadow_of text`);
    // The comparison reads a decision's shadow runs newest first; no live run pays for this index.
    await q.query(`CREATE INDEX executions_shadow_runs ON executions (decision_id, seq DESC) WHERE source = 'shadow'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX executions_shadow_runs`);
    await q.query(`ALTER TABLE executions DROP COLUMN shadow_of`);
    await q.query(
      `ALTER TABLE decisions DROP COLUMN latest_version, DROP COLUMN shadow_version, DROP COLUMN shadow_rate,
         DROP COLUMN shadow_started_at, DROP COLUMN shadow_started_by`,
    );
  }
}

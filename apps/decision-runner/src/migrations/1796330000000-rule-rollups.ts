import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runs per policy rule and version, beside the count rollups (whose key stays as the previous version upserts it).
 * Filled from the execution log still kept, per grain, as shard 0; runs that a runner of the previous version writes
 * during a rolling update are counted by the count rollups only, and the overview shows them as a rule without a
 * version. Spelled out rather than imported: this migration must keep creating what it created when the code moves on.
 */
export class RuleRollups1796330000000 implements MigrationInterface {
  name = 'RuleRollups1796330000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE execution_rule_rollups (
        workspace_id text NOT NULL,
        decision_id text NOT NULL,
        grain integer NOT NULL,
        bucket timestamptz NOT NULL,
        livemode boolean NOT NULL,
        version integer NOT NULL,
        rule integer NOT NULL,
        shard smallint NOT NULL,
        runs bigint NOT NULL,
        PRIMARY KEY (workspace_id, decision_id, grain, bucket, livemode, version, rule, shard)
      )`);
    await q.query(`
      INSERT INTO execution_rule_rollups (workspace_id, decision_id, grain, bucket, livemode, version, rule, shard, runs)
      SELECT e.workspace_id, e.decision_id, g.grain, to_timestamp(floor(extract(epoch FROM e.created_at) / g.grain) * g.grain),
             e.livemode, e.version, (e.action_reason->>'rule')::numeric::integer, 0, count(*)
      FROM executions e CROSS JOIN (VALUES (60), (3600), (86400)) AS g(grain)
      WHERE e.action_reason->>'type' = 'policy' AND jsonb_typeof(e.action_reason->'rule') = 'number'
        -- Minute rollups are kept two days (the retention round drops older ones).
        AND (g.grain > 60 OR e.created_at >= now() - interval '2 days')
      GROUP BY 1, 2, 3, 4, 5, 6, 7`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE execution_rule_rollups');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

const KEYS = {
  execution_rollups: 'workspace_id, decision_id, grain, bucket, livemode, source, status, action, reason',
  execution_histograms: 'workspace_id, decision_id, grain, bucket, livemode, metric, question, bin',
} as const;

const SUMS = {
  execution_rollups: 'sum(runs), sum(input_tokens), sum(output_tokens), sum(cost_usd)',
  execution_histograms: 'sum(runs)',
} as const;

const COUNTS = {
  execution_rollups: 'runs, input_tokens, output_tokens, cost_usd',
  execution_histograms: 'runs',
} as const;

/**
 * The rollups' rows get a shard in their key (see `ROLLUP_SHARDS`): rows written so far are shard 0. Going back
 * sums every key's shards into one row.
 */
export class RollupShards1796230000000 implements MigrationInterface {
  name = 'RollupShards1796230000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['execution_rollups', 'execution_histograms'] as const) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN shard smallint NOT NULL DEFAULT 0`);
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey`);
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (${KEYS[table]}, shard)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['execution_rollups', 'execution_histograms'] as const) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey`);
      await q.query(
        `WITH removed AS (DELETE FROM ${table} RETURNING *)
         INSERT INTO ${table} (${KEYS[table]}, ${COUNTS[table]}, shard)
         SELECT ${KEYS[table]}, ${SUMS[table]}, 0 FROM removed GROUP BY ${KEYS[table]}`,
      );
      await q.query(`ALTER TABLE ${table} DROP COLUMN shard`);
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (${KEYS[table]})`);
    }
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

// Spelled out rather than imported: this migration must keep creating what it created when the code moves on.
const ROLLUP_KEY = 'workspace_id, decision_id, grain, bucket, livemode, source, status, action, reason';
const HISTOGRAM_KEY = 'workspace_id, decision_id, grain, bucket, livemode, metric, question, bin';

/**
 * Sharded rollup tables beside the unsharded ones (see `ROLLUP_SHARDS`), and views adding both up. The unsharded
 * tables stay as they are: runners of the previous version go on writing them, with their ON CONFLICT on the key
 * without a shard, until a rolling update has replaced them. Going back folds the sharded rows into them.
 */
export class RollupShards1796230000000 implements MigrationInterface {
  name = 'RollupShards1796230000000';

  async up(q: QueryRunner): Promise<void> {
    // The same columns and checks as the unsharded tables, and the shard.
    for (const [sharded, unsharded, key] of [
      ['execution_rollup_shards', 'execution_rollups', ROLLUP_KEY],
      ['execution_histogram_shards', 'execution_histograms', HISTOGRAM_KEY],
    ] as const) {
      await q.query(`CREATE TABLE ${sharded} (LIKE ${unsharded} INCLUDING CONSTRAINTS, shard smallint NOT NULL, PRIMARY KEY (${key}, shard))`);
    }
    await q.query(`
      CREATE VIEW execution_rollup_totals AS
        SELECT ${ROLLUP_KEY}, runs, input_tokens, output_tokens, cost_usd FROM execution_rollups
        UNION ALL
        SELECT ${ROLLUP_KEY}, runs, input_tokens, output_tokens, cost_usd FROM execution_rollup_shards`);
    await q.query(`
      CREATE VIEW execution_histogram_totals AS
        SELECT ${HISTOGRAM_KEY}, runs FROM execution_histograms
        UNION ALL
        SELECT ${HISTOGRAM_KEY}, runs FROM execution_histogram_shards`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP VIEW execution_histogram_totals');
    await q.query('DROP VIEW execution_rollup_totals');
    await q.query(`
      INSERT INTO execution_rollups AS r (${ROLLUP_KEY}, runs, input_tokens, output_tokens, cost_usd)
      SELECT ${ROLLUP_KEY}, sum(runs), sum(input_tokens), sum(output_tokens), sum(cost_usd)
        FROM execution_rollup_shards GROUP BY ${ROLLUP_KEY} ORDER BY ${ROLLUP_KEY}
      ON CONFLICT (${ROLLUP_KEY}) DO UPDATE SET
        runs = r.runs + EXCLUDED.runs, input_tokens = r.input_tokens + EXCLUDED.input_tokens,
        output_tokens = r.output_tokens + EXCLUDED.output_tokens, cost_usd = r.cost_usd + EXCLUDED.cost_usd`);
    await q.query(`
      INSERT INTO execution_histograms AS h (${HISTOGRAM_KEY}, runs)
      SELECT ${HISTOGRAM_KEY}, sum(runs) FROM execution_histogram_shards GROUP BY ${HISTOGRAM_KEY} ORDER BY ${HISTOGRAM_KEY}
      ON CONFLICT (${HISTOGRAM_KEY}) DO UPDATE SET runs = h.runs + EXCLUDED.runs`);
    await q.query('DROP TABLE execution_histogram_shards');
    await q.query('DROP TABLE execution_rollup_shards');
  }
}

import { randomInt } from 'node:crypto';
import { LATENCY_BOUNDS_MS, CONFIDENCE_BINS, DAY_GRAIN, HOUR_GRAIN, MINUTE_GRAIN, reasonKeySql } from '@ds/decision-schema';

/** The columns a source of executions must offer for `rollupStatements` to roll it up. */
export const ROLLED_UP_COLUMNS = 'workspace_id, decision_id, version, source, status, livemode, action, action_reason, metrics, confidence, created_at';

const ROLLUP_KEY = 'workspace_id, decision_id, grain, bucket, livemode, source, status, action, reason';
const HISTOGRAM_KEY = 'workspace_id, decision_id, grain, bucket, livemode, metric, question, bin';

/**
 * The run path adds to rollup rows of a shard, part of their key, in tables of their own. A writer adds to the
 * rows of its own shard, so two runner replicas writing one busy decision's runs of the same minute lock different
 * rows: with one row per key, the second batch waited for the first one's commit, on the run path.
 */
export const ROLLUP_SHARDS = 16;

/** The shard this process writes to: drawn at start, so replicas of one decision's traffic rarely share one. */
export const PROCESS_ROLLUP_SHARD = randomInt(ROLLUP_SHARDS);

/**
 * Where rollups are written: the tables with one row per key, as the run path wrote them before shards (still
 * written by runners of that version while a rolling update replaces them), and the sharded tables written now.
 */
export const ROLLUP_WRITES = {
  unsharded: { counts: 'execution_rollups', histograms: 'execution_histograms' },
  sharded: { counts: 'execution_rollup_shards', histograms: 'execution_histogram_shards' },
} as const;

/**
 * Runs per policy rule and version: a rule has no identity of its own, so rule 0 of v3 and rule 0 of v4 are counted
 * apart. A table beside the counts rather than a column of their key: runners of the previous version go on upserting
 * the counts on the key they know while a rolling update replaces them (`RuleRollups1796330000000`).
 */
export const RULE_ROLLUPS = 'execution_rule_rollups';
const RULE_KEY = 'workspace_id, decision_id, grain, bucket, livemode, version, rule, shard';

/** Where rollups are read: views adding up both kinds of table (readers sum rows into buckets anyway). */
export const ROLLUP_READS = { counts: 'execution_rollup_totals', histograms: 'execution_histogram_totals' } as const;

/** Every table of rollups: what retention and workspace deletion clear along with the executions. */
export const ROLLUP_TABLES = [...Object.values(ROLLUP_WRITES.unsharded), ...Object.values(ROLLUP_WRITES.sharded), RULE_ROLLUPS];

/** The unsharded tables as their migration created them; `RollupShards1796230000000` added the sharded ones. */
export const CREATE_ROLLUP_TABLES = [
  `CREATE TABLE execution_rollups (
     workspace_id text NOT NULL,
     decision_id text NOT NULL,
     grain integer NOT NULL,
     bucket timestamptz NOT NULL,
     livemode boolean NOT NULL,
     source text NOT NULL,
     status text NOT NULL,
     action text NOT NULL,
     reason text NOT NULL,
     runs bigint NOT NULL,
     input_tokens bigint NOT NULL,
     output_tokens bigint NOT NULL,
     cost_usd numeric NOT NULL,
     PRIMARY KEY (${ROLLUP_KEY})
   )`,
  `CREATE TABLE execution_histograms (
     workspace_id text NOT NULL,
     decision_id text NOT NULL,
     grain integer NOT NULL,
     bucket timestamptz NOT NULL,
     livemode boolean NOT NULL,
     metric text NOT NULL CHECK (metric IN ('latency', 'confidence')),
     question text NOT NULL,
     bin smallint NOT NULL,
     runs bigint NOT NULL,
     PRIMARY KEY (${HISTOGRAM_KEY})
   )`,
];

const LATENCY_BOUNDS = `ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::numeric[]`;

/**
 * CTEs that add the executions of relation `source` (with ROLLED_UP_COLUMNS) to the minute, hour and day rollups: counts,
 * tokens and cost per action, status, source and reason; latency bins; confidence bins per question. Rows are
 * upserted in key order so that concurrent writers lock them in the same order. Written as part of the statement
 * that writes the executions, so a batch and its rollups commit together. `shard` is the SQL expression of the
 * shard written to; null writes the unsharded tables (only the migration that created them does).
 */
export function rollupStatements(source: string, shard: string | null): string {
  const number = (path: string): string => `CASE WHEN jsonb_typeof(${path}) = 'number' THEN (${path})::numeric END`;
  const tables = shard === null ? ROLLUP_WRITES.unsharded : ROLLUP_WRITES.sharded;
  const rollupKey = shard === null ? ROLLUP_KEY : `${ROLLUP_KEY}, shard`;
  const histogramKey = shard === null ? HISTOGRAM_KEY : `${HISTOGRAM_KEY}, shard`;
  const shardColumn = shard === null ? '' : `, ${shard}`;
  return `
  grained AS (
    SELECT s.*, g.grain, to_timestamp(floor(extract(epoch FROM s.created_at) / g.grain) * g.grain) AS bucket
    FROM ${source} s CROSS JOIN (VALUES (${MINUTE_GRAIN}), (${HOUR_GRAIN}), (${DAY_GRAIN})) AS g(grain)
  ),
  counted AS (
    INSERT INTO ${tables.counts} AS r (${rollupKey}, runs, input_tokens, output_tokens, cost_usd)
    SELECT workspace_id, decision_id, grain, bucket, livemode, source, status, coalesce(action, ''), ${reasonKeySql('action_reason')}${shardColumn},
           count(*), coalesce(sum(${number("metrics->'input_tokens'")}), 0), coalesce(sum(${number("metrics->'output_tokens'")}), 0),
           coalesce(sum(${number("metrics->'estimated_cost_usd'")}), 0)
    FROM grained
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
    ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
    ON CONFLICT (${rollupKey}) DO UPDATE SET
      runs = r.runs + EXCLUDED.runs,
      input_tokens = r.input_tokens + EXCLUDED.input_tokens,
      output_tokens = r.output_tokens + EXCLUDED.output_tokens,
      cost_usd = r.cost_usd + EXCLUDED.cost_usd
  ),
  binned AS (
    INSERT INTO ${tables.histograms} AS h (${histogramKey}, runs)
    SELECT workspace_id, decision_id, grain, bucket, livemode, metric, question, bin${shardColumn}, count(*)
    FROM (
      SELECT workspace_id, decision_id, grain, bucket, livemode, 'latency' AS metric, '' AS question,
             width_bucket(${number("metrics->'latency_ms'")}, ${LATENCY_BOUNDS}) AS bin
      FROM grained WHERE jsonb_typeof(metrics->'latency_ms') = 'number'
      UNION ALL
      SELECT workspace_id, decision_id, grain, bucket, livemode, 'confidence', c.key,
             least(greatest(floor((c.value)::numeric * ${CONFIDENCE_BINS}), 0), ${CONFIDENCE_BINS - 1})
      FROM grained CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(confidence) = 'object' THEN confidence ELSE '{}'::jsonb END) AS c
      WHERE jsonb_typeof(c.value) = 'number'
    ) v
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
    ON CONFLICT (${histogramKey}) DO UPDATE SET runs = h.runs + EXCLUDED.runs
  )${shard === null ? '' : `,\n  ${ruleRollupStatement('grained', shard)}`}`;
}

/** The CTE adding policy-decided runs of relation `grained` (ROLLED_UP_COLUMNS, grain, bucket) to the rule rollups. */
export function ruleRollupStatement(grained: string, shard: string): string {
  return `ruled AS (
    INSERT INTO ${RULE_ROLLUPS} AS p (${RULE_KEY}, runs)
    SELECT workspace_id, decision_id, grain, bucket, livemode, version, (action_reason->>'rule')::numeric::integer, ${shard}, count(*)
    FROM ${grained}
    WHERE action_reason->>'type' = 'policy' AND jsonb_typeof(action_reason->'rule') = 'number'
    GROUP BY 1, 2, 3, 4, 5, 6, 7
    ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT (${RULE_KEY}) DO UPDATE SET runs = p.runs + EXCLUDED.runs
  )`;
}

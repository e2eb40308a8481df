import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { EXECUTIONS_COUNT_CAP, ListExecutionsRequest } from '@ds/contracts';
import { RecordedDistributions } from '@ds/decision-schema';
import { rowsReturned } from '@ds/platform';
import { ExecutionEntity } from '../entities';
import { pgPool } from '../pg-pool';
import { PROCESS_ROLLUP_SHARD, ROLLED_UP_COLUMNS, ROLLUP_READS, rollupStatements, RULE_ROLLUPS } from './rollups';
import { ERROR_CODE_SQL, SOURCE_GROUP_SQL } from './source-groups';

export type ExecutionBase = Pick<
  ExecutionEntity,
  'id' | 'workspaceId' | 'decisionId' | 'decisionSlug' | 'version' | 'source' | 'requestId' | 'livemode' | 'input'
> &
  Partial<Pick<ExecutionEntity, 'leaseId'>>;

export type ExecutionRow = ExecutionBase &
  Pick<
    ExecutionEntity,
    'status' | 'result' | 'confidence' | 'scores' | 'composites' | 'action' | 'actionReason' | 'metrics' | 'destinations' | 'error' | 'trace' | 'distributions'
  >;

/** An execution row's columns as the INSERT statements take them: one array parameter each, unnested side by side. */
const BATCH_COLUMNS = `id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode,
  result, confidence, scores, composites, action, action_reason, metrics, destinations, error, input, trace, distributions, lease_id`;
const INSERT_BATCH = `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode,
                                   result, confidence, scores, composites, action, action_reason, metrics, destinations, error, input, input_json,
                                   trace, distributions, lease_id`;
const SELECT_BATCH = `SELECT id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode,
                  result, confidence, scores, composites, action, action_reason, metrics, destinations, error, input::jsonb, input::json,
                  trace, distributions, lease_id`;
const UNNEST_BATCH = `FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::text[], $9::boolean[],
                         $10::jsonb[], $11::jsonb[], $12::jsonb[], $13::jsonb[], $14::text[], $15::jsonb[], $16::jsonb[], $17::jsonb[],
                         $18::jsonb[], $19::text[], $20::jsonb[], $21::jsonb[], $22::text[]) AS batch(${BATCH_COLUMNS})`;

/**
 * One multi-row INSERT for a whole batch. The SQL text is fixed whatever the batch size, so it is prepared once
 * per connection. The batch's rollups are added in the same statement, to the rollup shard of parameter $23: one
 * round trip, and the charts never count a run the log lost or miss one it kept. The input is sent once, as text,
 * and kept twice: `input_json` as that text (the caller's key order, which the engine's prompt follows) and
 * `input` as jsonb (what the previous version reads).
 */
export const INSERT_EXECUTIONS = {
  name: 'decision-runner.insert-executions',
  text: `WITH written AS (
           ${INSERT_BATCH})
           ${SELECT_BATCH}
             ${UNNEST_BATCH}
           RETURNING ${ROLLED_UP_COLUMNS}
         ),${rollupStatements('written', '$23::smallint')}
         SELECT count(*) AS written FROM written`,
};

/**
 * A shadow run's row, linked to the live run of parameter $23. Written alone, outside the rollups: shadow rows are
 * few (bounded by the shadow workers), and the decision's overview and usage keep describing the live traffic only.
 */
export const INSERT_SHADOW_EXECUTION = {
  name: 'decision-runner.insert-shadow-execution',
  text: `${INSERT_BATCH}, shadow_of) ${SELECT_BATCH}, $23::text ${UNNEST_BATCH}`,
};

/**
 * An execution's input as SQL reads it: the text the run kept (its keys in the caller's order), or, for rows
 * written before that text was kept, the jsonb copy (its keys in jsonb's order).
 */
export const STORED_INPUT = 'COALESCE(input_json, input::json)';

/** A jsonb column's value as the statement takes it: JSON text, or SQL NULL. */
function jsonb(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** The batch as one array per column, in the statement's order, then the last parameter: the rollup shard it adds to, or the live run a shadow row follows. */
export function insertParameters(rows: readonly ExecutionRow[], last: number | string = PROCESS_ROLLUP_SHARD): unknown[] {
  return [
    rows.map((row) => row.id),
    rows.map((row) => row.workspaceId),
    rows.map((row) => row.decisionId),
    rows.map((row) => row.decisionSlug),
    rows.map((row) => row.version),
    rows.map((row) => row.source),
    rows.map((row) => row.status),
    rows.map((row) => row.requestId),
    rows.map((row) => row.livemode),
    rows.map((row) => jsonb(row.result)),
    rows.map((row) => jsonb(row.confidence)),
    rows.map((row) => jsonb(row.scores)),
    rows.map((row) => jsonb(row.composites)),
    rows.map((row) => row.action),
    rows.map((row) => jsonb(row.actionReason)),
    rows.map((row) => jsonb(row.metrics)),
    rows.map((row) => jsonb(row.destinations)),
    rows.map((row) => jsonb(row.error)),
    rows.map((row) => jsonb(row.input)),
    rows.map((row) => jsonb(row.trace)),
    rows.map((row) => jsonb(row.distributions)),
    rows.map((row) => row.leaseId ?? null),
    last,
  ];
}

/** An execution answered with a fresh 200 by the engine: what a decision is billed for. */
const BILLABLE = `status = 'success' AND coalesce(action_reason->>'type', '') <> 'engine_error'`;

/** The comparison reads at most this many of the shadow's most recent runs: its cost stays flat as traffic flows. */
export const COMPARED_RUNS = 5_000;

/**
 * The compared pairs as one JSON text, newest first: PostgreSQL writes it and a lab thread parses and compares it,
 * so that a read of the comparison never parses thousands of runs on the thread answering live runs.
 */
const SHADOW_PAIRS = {
  name: 'decision-runner.shadow-pairs',
  text: `SELECT coalesce(json_agg(json_build_array(live_status, live_action, live_result, live_metrics, outcome, status, action, result, metrics)
                              ORDER BY seq DESC), '[]')::text AS pairs
           FROM (SELECT s.seq, l.status AS live_status, l.action AS live_action, l.result AS live_result, l.metrics AS live_metrics, l.outcome,
                        s.status, s.action, s.result, s.metrics
                   FROM executions s JOIN executions l ON l.id = s.shadow_of
                  WHERE s.decision_id = $1 AND s.source = 'shadow' AND s.version = $2 AND s.created_at >= $3
                  ORDER BY s.seq DESC
                  LIMIT ${COMPARED_RUNS}) AS pairs`,
};

/**
 * Both reads sum the grain rows into the chart's buckets inside PostgreSQL ($6 is the bucket width in seconds), so
 * that what crosses to the runner is one row per bucket and key, however many grain rows a long range holds.
 */
const COUNTS = {
  name: 'decision-runner.overview-counts',
  text: `SELECT (floor(extract(epoch FROM bucket) / $6) * $6)::bigint AS t, livemode, status, action, reason,
                sum(runs)::bigint AS runs, sum(input_tokens)::bigint AS input_tokens, sum(output_tokens)::bigint AS output_tokens,
                sum(cost_usd)::float8 AS cost_usd
         FROM ${ROLLUP_READS.counts}
         WHERE workspace_id = $1 AND decision_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5
         GROUP BY 1, 2, 3, 4, 5`,
};

/** Latency bins per chart bucket; confidence bins only over the whole range (the chart shows the range's distribution). */
const HISTOGRAMS = {
  name: 'decision-runner.overview-histograms',
  text: `SELECT (floor(extract(epoch FROM bucket) / $6) * $6)::bigint AS t, livemode, metric, question, bin, sum(runs)::bigint AS runs
         FROM ${ROLLUP_READS.histograms}
         WHERE workspace_id = $1 AND decision_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5 AND metric = 'latency'
         GROUP BY 1, 2, 3, 4, 5
         UNION ALL
         SELECT extract(epoch FROM $4::timestamptz)::bigint, livemode, metric, question, bin, sum(runs)::bigint
         FROM ${ROLLUP_READS.histograms}
         WHERE workspace_id = $1 AND decision_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5 AND metric = 'confidence'
         GROUP BY 2, 3, 4, 5`,
};

/** Policy-decided runs per rule and version over the whole range (the reasons chart ranks the range, not buckets). */
const RULES = {
  name: 'decision-runner.overview-rules',
  text: `SELECT livemode, version, rule, sum(runs)::bigint AS runs
         FROM ${RULE_ROLLUPS}
         WHERE workspace_id = $1 AND decision_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5
         GROUP BY 1, 2, 3`,
};

export interface CountRecord {
  t: string;
  livemode: boolean;
  status: string;
  action: string;
  reason: string;
  runs: string;
  input_tokens: string;
  output_tokens: string;
  cost_usd: number;
}

export interface HistogramRecord {
  t: string;
  livemode: boolean;
  metric: 'latency' | 'confidence';
  question: string;
  bin: number;
  runs: string;
}

export interface RuleRecord {
  livemode: boolean;
  version: number;
  rule: number;
  runs: string;
}

/** What an outcome is checked against: the execution's version, source, action and distributions. */
export interface ExecutionFacts {
  decision_id: string;
  version: number;
  source: string;
  action: string | null;
  distributions: RecordedDistributions | null;
  created_at: Date;
}

/** The labels of one execution, one array per column, unnested side by side. */
const INSERT_LABELS = `
  INSERT INTO quality_labels (execution_id, decision_id, version, executed_at, question, kind, source, confidence, predicted, observed, correct)
  SELECT $1, $2, $3, $4, * FROM unnest($5::text[], $6::text[], $7::text[], $8::float8[], $9::float8[], $10::boolean[], $11::boolean[])`;

/**
 * The execution log (`executions`), the rollups its inserts keep, and the outcomes reported on it. Writes on the run
 * path and the overview's reads are named prepared statements straight on the pool: they skip TypeORM's query
 * runner and hydration.
 */
export class ExecutionStore {
  constructor(private readonly db: DataSource) {}

  /** One INSERT for a batch of rows (and their rollups). */
  async insert(rows: readonly ExecutionRow[]): Promise<void> {
    await pgPool(this.db).query({ ...INSERT_EXECUTIONS, values: insertParameters(rows) });
  }

  /** A shadow's run of the live execution `shadowOf`. */
  async insertShadow(row: ExecutionRow, shadowOf: string): Promise<void> {
    await pgPool(this.db).query({ ...INSERT_SHADOW_EXECUTION, values: insertParameters([row], shadowOf) });
  }

  /** The shadow's runs of `version` since `since` beside the live runs they shadowed, as one JSON text (`SHADOW_PAIRS`). */
  async shadowPairs(decisionId: string, version: number, since: Date): Promise<string> {
    const { rows } = await pgPool(this.db).query<{ pairs: string }>({ ...SHADOW_PAIRS, values: [decisionId, version, since] });
    return rows[0]?.pairs ?? '[]';
  }

  /** The overview's three rollup reads, together; `values` are workspace, decision, grain, from, to and bucket width. */
  async overview(values: unknown[]): Promise<{ counts: CountRecord[]; histograms: HistogramRecord[]; rules: RuleRecord[] }> {
    const pool = pgPool(this.db);
    const [counts, histograms, rules] = await Promise.all([
      pool.query<CountRecord>({ ...COUNTS, values }),
      pool.query<HistogramRecord>({ ...HISTOGRAMS, values }),
      pool.query<RuleRecord>({ ...RULES, values: values.slice(0, 5) }),
    ]);
    return { counts: counts.rows, histograms: histograms.rows, rules: rules.rows };
  }

  /**
   * The workspace's executions narrowed by every filter of the request. The source groups are compared through
   * SOURCE_GROUP_SQL over the bare columns (the only table of the statement), which is what the list indexes hold.
   */
  filtered(request: ListExecutionsRequest): SelectQueryBuilder<ExecutionEntity> {
    const query = this.db.getRepository(ExecutionEntity).createQueryBuilder('e').where('e.workspace_id = :workspaceId', { workspaceId: request.workspaceId });
    if (request.decision !== null) query.andWhere('e.decision_slug = :slug', { slug: request.decision });
    if (request.sources !== undefined && request.sources !== null) {
      query.andWhere(`(${SOURCE_GROUP_SQL}) IN (:...sources)`, { sources: request.sources.length > 0 ? request.sources : ['none'] });
    }
    if (request.status !== null) query.andWhere('e.status = :status', { status: request.status });
    if (request.version != null) query.andWhere('e.version = :version', { version: request.version });
    if (request.action != null) query.andWhere('e.action = :action', { action: request.action });
    if (request.reason != null) query.andWhere(`e.action_reason->>'type' = :reason`, { reason: request.reason });
    // A failed run's own error, or the engine error an engine_error fallback answered instead of.
    if (request.errorCode != null) query.andWhere(`(${ERROR_CODE_SQL}) = :errorCode`, { errorCode: request.errorCode });
    return query;
  }

  /**
   * The executions matching the filters, whatever the cursor, counted through the same index as the page and no
   * further than one past the cap: an exact count of a busy workspace would read every row it ever kept.
   */
  async count(request: ListExecutionsRequest): Promise<number> {
    const [sql, parameters] = this.countStatement(request);
    const [row] = (await this.db.query(`SELECT count(*)::int AS n FROM (${sql}) matching`, parameters)) as Array<{ n: number }>;
    return row!.n;
  }

  countStatement(request: ListExecutionsRequest): [string, unknown[]] {
    // Ordered as the page is, so that the count walks the page's index and stops at the cap, rather than a
    // sequential scan the planner may prefer for a common filter, which reads as far for a rare one.
    return this.filtered(request)
      .orderBy('e.seq', 'DESC')
      .select('1')
      .limit(EXECUTIONS_COUNT_CAP + 1)
      .getQueryAndParameters();
  }

  /** The state one execution was called with (`{ state }` where its version stores inputs), with its decision. */
  async input(
    workspaceId: string,
    executionId: string,
  ): Promise<{ decision_id: string; decision_slug: string; input: { state?: unknown } | null } | undefined> {
    const [row] = (await this.db.query(`SELECT decision_id, decision_slug, ${STORED_INPUT} AS input FROM executions WHERE workspace_id = $1 AND id = $2`, [
      workspaceId,
      executionId,
    ])) as Array<{ decision_id: string; decision_slug: string; input: { state?: unknown } | null }>;
    return row;
  }

  /** Of `executionIds`, those the workspace has, each billable or not, with its decision. */
  async billable(workspaceId: string, executionIds: string[]): Promise<Array<{ id: string; billable: boolean; decision_id: string }>> {
    return (await this.db.query(
      `SELECT id, (${BILLABLE}) AS billable, decision_id
         FROM executions WHERE workspace_id = $1 AND id = ANY($2)`,
      [workspaceId, executionIds],
    )) as Array<{ id: string; billable: boolean; decision_id: string }>;
  }

  /** The billable executions that took a unit of the lease, found through the workspace's time index. */
  async leaseExecutions(workspaceId: string, leaseId: string, from: string, to: string): Promise<Array<{ id: string; decision_id: string }>> {
    return (await this.db.query(
      `SELECT id, decision_id FROM executions
        WHERE workspace_id = $1 AND created_at BETWEEN $3::timestamptz AND $4::timestamptz AND lease_id = $2
          AND ${BILLABLE}`,
      [workspaceId, leaseId, from, to],
    )) as Array<{ id: string; decision_id: string }>;
  }

  /** What an outcome of the execution is checked against; undefined when the workspace has no such execution. */
  async facts(workspaceId: string, executionId: string): Promise<ExecutionFacts | undefined> {
    const [row] = (await this.db.query(
      'SELECT decision_id, version, source, action, distributions, created_at FROM executions WHERE workspace_id = $1 AND id = $2',
      [workspaceId, executionId],
    )) as ExecutionFacts[];
    return row;
  }

  /**
   * Keeps the outcome on the execution and replaces its labels (`labelColumns`), in one transaction; false when the
   * execution is gone (retention may have deleted it since it was read). The row lock taken by the update orders
   * concurrent reports of one execution: the last one's labels stay.
   */
  recordOutcome(workspaceId: string, executionId: string, facts: ExecutionFacts, stored: object, labels: unknown[][] | null): Promise<boolean> {
    return this.db.transaction((tx) => ExecutionStore.recordOutcomeIn(tx, workspaceId, executionId, facts, stored, labels));
  }

  /** recordOutcome inside a caller's transaction (a review's resolution is recorded with its outcome). */
  static async recordOutcomeIn(
    tx: EntityManager,
    workspaceId: string,
    executionId: string,
    facts: ExecutionFacts,
    stored: object,
    labels: unknown[][] | null,
  ): Promise<boolean> {
    const updated = rowsReturned(
      await tx.query('UPDATE executions SET outcome = $1 WHERE id = $2 AND workspace_id = $3 RETURNING id', [stored, executionId, workspaceId]),
    );
    if (updated.length === 0) return false;
    await tx.query('DELETE FROM quality_labels WHERE execution_id = $1', [executionId]);
    if (labels !== null) await tx.query(INSERT_LABELS, [executionId, facts.decision_id, facts.version, facts.created_at, ...labels]);
    return true;
  }
}

import { DataSource } from 'typeorm';
import { EXECUTION_SOURCES_SQL } from '@ds/contracts';
import { AuditInput, FIT_SAMPLE_MAX, QualityCell, ReportTerm } from '@ds/decision-schema';

/**
 * What one label adds to its cell, as numeric: the same values the rollup's triggers add, so days read from the
 * rollup and stretches read from the labels sum exactly alike.
 */
const LABEL_CELL = `
  question, kind, source,
  CASE WHEN predicted IS NULL THEN -1 ELSE least(floor(predicted * 10), 9) END::smallint AS bin,
  CASE WHEN confidence IS NULL THEN -1 ELSE least(floor(confidence * 20), 19) END::smallint AS step,
  1 AS count,
  coalesce(predicted::numeric, 0) AS predicted,
  coalesce(observed::int, 0) AS observed,
  correct::int AS correct,
  CASE WHEN kind = 'probability' THEN ((predicted - observed::int) ^ 2)::numeric ELSE 0 END AS brier,
  CASE WHEN kind = 'probability'
       THEN (-ln(CASE WHEN observed THEN least(greatest(predicted, 1e-6), 1 - 1e-6)
                      ELSE 1 - least(greatest(predicted, 1e-6), 1 - 1e-6) END))::numeric
       ELSE 0 END AS log_loss`;

const CELL_SUMS = ['count', 'predicted', 'observed', 'correct', 'brier', 'log_loss'];

/**
 * The report's cells (at most 10 bins × 20 confidence steps per question and source) over the terms of a range:
 * whole days and hours from quality_rollups, partial hours from quality_labels, each added or subtracted. `terms` is not empty.
 */
export function reportCellsQuery(terms: readonly ReportTerm[]): { sql: string; parameters: unknown[] } {
  const parameters: unknown[] = [];
  // $1 and $2 are the decision and the version.
  const parameter = (value: unknown) => `$${parameters.push(value) + 2}`;
  const parts = terms.map((term) => {
    const sums = CELL_SUMS.map((column) => (term.sign === 1 ? column : `-${column}`)).join(', ');
    const conditions = ['decision_id = $1', 'version = $2'];
    if (term.read !== 'labels') {
      conditions.push(`grain = ${term.read === 'days' ? 86_400 : 3_600}`);
      if (term.from) conditions.push(`bucket >= ${parameter(term.from)}`);
      if (term.to) conditions.push(`bucket < ${parameter(term.to)}`);
      return `SELECT question, kind, source, bin, step, ${sums} FROM quality_rollups WHERE ${conditions.join(' AND ')}`;
    }
    conditions.push(`executed_at >= ${parameter(term.from)}`, `executed_at < ${parameter(term.to)}`);
    return `SELECT question, kind, source, bin, step, ${sums} FROM (SELECT ${LABEL_CELL} FROM quality_labels WHERE ${conditions.join(' AND ')}) AS labels`;
  });
  return {
    sql: `SELECT question, kind, source, nullif(bin, -1)::int AS bin, nullif(step, -1)::int AS step,
                 sum(count)::int AS count, sum(predicted)::float8 AS predicted, sum(observed)::int AS observed,
                 sum(correct)::int AS correct, sum(brier)::float8 AS brier, sum(log_loss)::float8 AS log_loss
            FROM (${parts.join('\n UNION ALL \n')}) AS terms
           GROUP BY 1, 2, 3, 4, 5
          -- A subtracted stretch leaves a cell at zero rather than removing it.
          HAVING sum(count) <> 0
           ORDER BY 1, 2, 3, 4, 5`,
    parameters,
  };
}

/**
 * The audit figures' counts of one version over [$3, $4) (either null for unbounded), in one statement so one
 * snapshot answers: the live runs, the review items by reason, the audit and low-confidence items per question and
 * confidence step, and the labels of resolved audit samples per question, source and step. Only the runs' count
 * reads every run of the range; the rest read the version's items, a few per hundred runs.
 */
const AUDIT_COUNTS = `
  WITH items AS (
    SELECT r.reason, r.resolved_at, e.id, e.confidence, e.action_reason, e.outcome
      FROM review_items r JOIN executions e ON e.id = r.execution_id
     WHERE r.decision_id = $1 AND r.version = $2
       AND e.created_at >= coalesce($3::timestamptz, '-infinity') AND e.created_at < coalesce($4::timestamptz, 'infinity'))
  SELECT
    (SELECT count(*) FROM executions
      WHERE decision_id = $1 AND version = $2 AND source IN (${EXECUTION_SOURCES_SQL})
        AND created_at >= coalesce($3::timestamptz, '-infinity') AND created_at < coalesce($4::timestamptz, 'infinity'))::int AS runs,
    (SELECT coalesce(json_object_agg(reason, count), '{}') FROM (SELECT reason, count(*)::int AS count FROM items GROUP BY reason) AS r) AS items,
    (SELECT coalesce(json_agg(c ORDER BY c.reason, c.question, c.step), '[]') FROM (
       SELECT i.reason, CASE WHEN i.reason = 'low_confidence' THEN i.action_reason->>'question' END AS held_by,
              c.key AS question, least(floor(c.value::float8 * 20), 19)::int AS step, count(*)::int AS count
         FROM items i CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(i.confidence) = 'object' THEN i.confidence ELSE '{}' END) AS c
        WHERE i.reason IN ('audit', 'low_confidence') AND jsonb_typeof(c.value) = 'number'
        GROUP BY 1, 2, 3, 4) AS c) AS confidences,
    -- An audit sample counts once resolved, and only while its outcome is the audit's (a customer's later outcome replaces it).
    (SELECT coalesce(json_agg(a ORDER BY a.question, a.source, a.step), '[]') FROM (
       SELECT l.question, l.kind, l.source,
              CASE WHEN l.confidence IS NULL THEN NULL ELSE least(floor(l.confidence * 20), 19)::int END AS step,
              count(*)::int AS count, sum(l.correct::int)::int AS correct
         FROM items i JOIN quality_labels l ON l.execution_id = i.id
        WHERE i.reason = 'audit' AND i.resolved_at IS NOT NULL AND i.outcome->>'source' = 'audit'
        GROUP BY 1, 2, 3, 4) AS a) AS audited`;

/** The quality report's reads: labels and their rollup, the live executions with an outcome, and review items. */
export class QualityStore {
  constructor(private readonly db: DataSource) {}

  /**
   * The versions whose live runs have outcomes, newest first, with how many (whatever the range). Read from the
   * partial index of executions with an outcome.
   */
  async outcomesByVersion(decisionId: string): Promise<Array<{ version: number; outcomes: string }>> {
    return (await this.db.query(
      `SELECT version, count(*) AS outcomes FROM executions
        WHERE decision_id = $1 AND outcome IS NOT NULL AND version >= 1 AND source IN (${EXECUTION_SOURCES_SQL})
        GROUP BY version ORDER BY version DESC`,
      [decisionId],
    )) as Array<{ version: number; outcomes: string }>;
  }

  /** The cells of the version over `terms` (not empty), as `reportCellsQuery` sums them. */
  async cells(decisionId: string, version: number, terms: readonly ReportTerm[]): Promise<QualityCell[]> {
    const query = reportCellsQuery(terms);
    return (await this.db.query(query.sql, [decisionId, version, ...query.parameters])) as QualityCell[];
  }

  /** The counts the audit figures are computed from (`AUDIT_COUNTS`). */
  async auditCounts(decisionId: string, version: number, from: Date | null, to: Date | null): Promise<AuditInput> {
    const [row] = (await this.db.query(AUDIT_COUNTS, [decisionId, version, from, to])) as AuditInput[];
    return row!;
  }

  /**
   * The newest FIT_SAMPLE_MAX live executions of a version with an outcome, oldest first, as one JSON text of
   * `[distributions, answers]` pairs: PostgreSQL writes it and the lab thread parses it.
   */
  async labelledExecutions(decisionId: string, version: number): Promise<string> {
    const [row] = (await this.db.query(
      `SELECT coalesce(json_agg(json_build_array(distributions, outcome->'answers') ORDER BY seq), '[]')::text AS executions
         FROM (SELECT seq, distributions, outcome FROM executions
                WHERE decision_id = $1 AND version = $2 AND source IN (${EXECUTION_SOURCES_SQL}) AND outcome IS NOT NULL AND distributions IS NOT NULL
                ORDER BY seq DESC LIMIT ${FIT_SAMPLE_MAX}) AS newest`,
      [decisionId, version],
    )) as Array<{ executions: string }>;
    return row?.executions ?? '[]';
  }
}

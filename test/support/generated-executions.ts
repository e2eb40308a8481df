import { DataSource } from 'typeorm';
import { ROLLED_UP_COLUMNS, rollupStatements } from '../../apps/decision-runner/src/executions/rollups';

export interface GeneratedExecutions {
  workspaceId: string;
  decisionId: string;
  /** Executions numbered first..first+count-1; each number gives the same row every time. */
  first: number;
  count: number;
  /** Spread evenly from `from` to `to`. */
  from: Date;
  to: Date;
}

/**
 * Writes made-up executions of one decision, with their rollups, in one statement built like the run path's: a
 * mix of live and test traffic, errors (one in 20), every action, reason type and latency range, confidence of two
 * questions. For volumes the run path would take too long to produce (benchmarks, retention).
 */
export async function writeGeneratedExecutions(db: DataSource, spec: GeneratedExecutions): Promise<void> {
  await db.query(
    `WITH numbered AS (
       SELECT n, $5::timestamptz + ($6::timestamptz - $5::timestamptz) * ((n - $3)::float8 / $4) AS at, n % 20 = 0 AS failed, n % 7 AS pick
       FROM generate_series($3::bigint, $3::bigint + $4 - 1) AS n
     ),
     written AS (
       INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode,
                               result, confidence, action, action_reason, metrics, error, created_at)
       SELECT 'exe_gen_' || $1 || '_' || n, $1, $2, 'generated', 1,
              CASE WHEN n % 5 = 0 THEN 'playground' ELSE 'api' END,
              CASE WHEN failed THEN 'error' ELSE 'success' END,
              'req_gen_' || n, n % 5 <> 0,
              CASE WHEN failed THEN NULL ELSE jsonb_build_object('intent', 'refund', 'urgency', 'high') END,
              CASE WHEN failed THEN NULL ELSE jsonb_build_object('intent', (n * 13 % 100) / 100.0, 'urgency', (n * 29 % 100) / 100.0) END,
              CASE WHEN failed THEN NULL ELSE (ARRAY['continue', 'continue', 'block', 'escalate', 'escalate', 'fallback', 'fallback'])[pick + 1] END,
              CASE WHEN failed THEN NULL ELSE (ARRAY[
                '{"type":"default"}', '{"type":"policy","rule":0}', '{"type":"policy","rule":1}', '{"type":"policy","rule":2}',
                '{"type":"low_confidence","question":"intent","confidence":0.3,"minConfidence":0.5}',
                '{"type":"other_option","question":"intent"}', '{"type":"engine_error","code":"ENGINE_TIMEOUT"}'])[pick + 1]::jsonb END,
              CASE WHEN failed THEN NULL ELSE jsonb_build_object('latency_ms', 40 + (n * 37 % 1500), 'engine', 'simulator', 'model', 'sim-1',
                     'input_tokens', 200 + n % 50, 'output_tokens', 20, 'estimated_cost_usd', (200 + n % 50) * 0.000001) END,
              CASE WHEN failed THEN '{"code":"INVALID_STATE","message":"The state is not valid."}'::jsonb END,
              at
       FROM numbered
       RETURNING ${ROLLED_UP_COLUMNS}
     ),${rollupStatements('written', '0')}
     SELECT count(*) FROM written`,
    [spec.workspaceId, spec.decisionId, spec.first, spec.count, spec.from, spec.to],
  );
}

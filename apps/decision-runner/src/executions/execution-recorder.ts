import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Evaluation, EvaluationTrace, NormalizedSchema, traceEvaluation } from '@ds/decision-schema';
import { GroupCommit } from '@ds/platform';
import { ExecutionEntity } from '../entities';
import { ExecutionStore } from './execution.store';
import { PROCESS_ROLLUP_SHARD, ROLLED_UP_COLUMNS, rollupStatements } from './rollups';

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

/** An execution row's identity: run `id` of `decision` at `version` in a workspace, where it came from and for whom. */
export function executionBase(
  id: string,
  workspaceId: string,
  decision: { id: string; slug: string },
  version: number,
  source: string,
  requestId: string,
  livemode: boolean,
  input: ExecutionBase['input'] = null,
  leaseId: string | null = null,
): ExecutionBase {
  return { id, workspaceId, decisionId: decision.id, decisionSlug: decision.slug, version, source, requestId, livemode, input, leaseId };
}

/** A run's trace as recorded: without the run's own values when the decision does not store its output. */
export function traceOf(schema: NormalizedSchema, evaluation: Evaluation): EvaluationTrace {
  return traceEvaluation(schema, evaluation, schema.settings.storeOutput);
}

/** Rows per INSERT: bounds the statement's size (each row's JSON included) and the time one write holds a connection. */
const MAX_ROWS_PER_INSERT = 256;

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

/** A successful run's row: its answers only when the version stores its output. */
export function successRow(
  base: ExecutionBase,
  evaluation: Evaluation,
  metrics: object,
  destinations: object[] | null,
  storeOutput: boolean,
  trace: EvaluationTrace | null,
): ExecutionRow {
  return {
    ...base,
    status: 'success',
    result: storeOutput ? evaluation.result : null,
    confidence: storeOutput ? evaluation.confidence : null,
    scores: storeOutput ? (evaluation.scores ?? null) : null,
    composites: storeOutput ? (evaluation.composites ?? null) : null,
    action: evaluation.action,
    actionReason: evaluation.action_reason,
    metrics,
    destinations,
    error: null,
    trace,
    // Engine-error fallbacks have no distributions to learn from.
    distributions:
      storeOutput && Object.keys(evaluation.recorded).length > 0
        ? { model: evaluation.recorded, ...(evaluation.recordedTokens ? { tokens: evaluation.recordedTokens } : {}) }
        : null,
  };
}

/** A run its version answered, as that version records it: its trace, and its answers when it stores its output. */
export function answeredRow(
  base: ExecutionBase,
  schema: NormalizedSchema,
  evaluation: Evaluation,
  metrics: object,
  destinations: object[] | null,
): ExecutionRow {
  return successRow(base, evaluation, metrics, destinations, schema.settings.storeOutput, traceOf(schema, evaluation));
}

export function errorRow(base: ExecutionBase, error: ServiceError): ExecutionRow {
  return {
    ...base,
    status: 'error',
    result: null,
    confidence: null,
    scores: null,
    composites: null,
    action: null,
    actionReason: null,
    metrics: null,
    destinations: null,
    // Issues (path and message) stay with the record, so whoever reads the run later sees what the caller was told.
    error:
      Array.isArray(error.details) && error.details.length > 0
        ? { code: error.code, message: error.message, details: error.details }
        : { code: error.code, message: error.message },
    trace: null,
    distributions: null,
  };
}

/**
 * Steps 7 to 10 leave an execution behind, failures included; it is written before the caller hears back.
 * Rows of concurrent runs are written together by group commit, each run waiting for the INSERT that carries
 * its row: a run whose row was not written answers an error (and is not billed), never a decision.
 */
@Injectable()
export class ExecutionRecorder implements OnModuleDestroy {
  private readonly batches: GroupCommit<ExecutionRow>;

  constructor(@InjectDataSource() db: DataSource) {
    const store = new ExecutionStore(db);
    this.batches = new GroupCommit<ExecutionRow>((rows) => store.insert(rows), { maxBatch: MAX_ROWS_PER_INSERT });
  }

  record(row: ExecutionRow): Promise<void> {
    return this.batches.add(row);
  }

  recordSuccess(
    base: ExecutionBase,
    evaluation: Evaluation,
    metrics: object,
    destinations: object[] | null,
    storeOutput: boolean,
    trace: EvaluationTrace | null = null,
  ): Promise<void> {
    return this.batches.add(successRow(base, evaluation, metrics, destinations, storeOutput, trace));
  }

  recordError(base: ExecutionBase, error: ServiceError): Promise<void> {
    return this.batches.add(errorRow(base, error));
  }

  /** Rows already handed over are written before the pool closes. */
  async onModuleDestroy(): Promise<void> {
    await this.batches.idle();
  }
}

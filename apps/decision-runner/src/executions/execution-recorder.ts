import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Evaluation, EvaluationTrace, NormalizedSchema, traceEvaluation } from '@ds/decision-schema';
import { GroupCommit } from '@ds/platform';
import { ExecutionBase, ExecutionRow, ExecutionStore } from './execution.store';

export type { ExecutionBase, ExecutionRow } from './execution.store';

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

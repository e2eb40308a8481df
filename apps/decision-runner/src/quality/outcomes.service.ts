import { Injectable } from '@nestjs/common';
import { isLiveExecution, OutcomeReply, RecordOutcomeRequest, ServiceError } from '@ds/contracts';
import { checkOutcome, outcomeLabels, QualityLabel, SchemaIssue } from '@ds/decision-schema';
import { looksLikeId } from '@ds/ids';
import { VersionCache } from '../decisions/version-cache';
import { ExecutionFacts, ExecutionStore } from '../executions/execution.store';

/** An outcome as the execution keeps it; one recorded by a review also says so (`review`, or `audit` for an audit sample). */
export interface StoredOutcome {
  answers: Record<string, string | boolean>;
  action: string | null;
  recorded_at: string;
  source?: 'review' | 'audit';
}

export interface CheckedOutcome {
  execution: ExecutionFacts;
  stored: StoredOutcome;
  /** The labels' columns (`labelColumns`), or null when the outcome labels nothing. */
  labels: unknown[][] | null;
}

/**
 * Outcomes: what turned out to be right for an execution, checked against the version that answered it. The
 * outcome is kept on the execution and its labels (what the quality report counts) beside it, replaced together;
 * the labels' triggers move the report's day rollup in the same transaction.
 */
@Injectable()
export class OutcomesService {
  constructor(
    private readonly executions: ExecutionStore,
    private readonly versions: VersionCache,
  ) {}

  async record(request: RecordOutcomeRequest): Promise<OutcomeReply> {
    const { execution, stored, labels } = await this.check(request.workspaceId, request.executionId, request.body);
    const recorded = await this.executions.recordOutcome(request.workspaceId, request.executionId, execution, stored, labels);
    // Retention may have deleted the execution since it was read.
    if (!recorded) throw notFound();
    return { execution_id: request.executionId, ...stored };
  }

  /**
   * An outcome checked against the version that answered the execution (404, 409 for a run that is not live, 400
   * naming every bad path), ready to be written; `extraIssues` are the caller's own issues with the rest of its
   * body, refused together with the outcome's.
   */
  async check(workspaceId: string, executionId: string, body: unknown, extraIssues: readonly SchemaIssue[] = []): Promise<CheckedOutcome> {
    const execution = await this.find(workspaceId, executionId);
    // What turned out to be right judges the version a caller was answered by: a playground run, a replay's copy or a
    // shadow run answered nobody, and the draft (version 0) has no version to judge. Their outcomes would count for
    // a version that never answered them live, so they are refused before anything is read or written.
    if (!isLiveExecution(execution)) throw notLive(execution);
    const schema = await this.versions.get(execution.decision_id, execution.version);
    const check = checkOutcome(schema, body);
    if (!check.ok || extraIssues.length > 0) {
      const issues = [...(check.ok ? [] : check.issues), ...extraIssues];
      throw new ServiceError('INVALID_REQUEST', check.ok ? 'The request body is not valid.' : check.message, issues);
    }
    const { outcome } = check;
    const labels = outcomeLabels(schema, execution.distributions, outcome, execution.action);
    const stored: StoredOutcome = { answers: outcome.answers, action: outcome.action, recorded_at: new Date().toISOString() };
    return { execution, stored, labels: labels.length > 0 ? labelColumns(labels) : null };
  }

  private async find(workspaceId: string, executionId: string): Promise<ExecutionFacts> {
    if (!looksLikeId('exec', executionId)) throw notFound();
    const row = await this.executions.facts(workspaceId, executionId);
    if (!row) throw notFound();
    return row;
  }
}

const NOT_LIVE: Record<string, string> = {
  playground: 'a playground run',
  replay: 'a replay’s run',
  shadow: 'a shadow run',
};

function notLive(execution: ExecutionFacts): ServiceError {
  const what = NOT_LIVE[execution.source] ?? (execution.version < 1 ? 'a run of the draft' : 'not a live run');
  return new ServiceError(
    'CONFLICT',
    `This execution is ${what}. Outcomes are recorded only for live runs of a deployed version (through the API, the secret URL or MCP).`,
  );
}

function notFound(): ServiceError {
  return new ServiceError('NOT_FOUND', 'No such execution in this workspace.');
}

export function labelColumns(labels: readonly QualityLabel[]): unknown[][] {
  return [
    labels.map((label) => label.question),
    labels.map((label) => label.kind),
    labels.map((label) => label.source),
    labels.map((label) => label.confidence),
    labels.map((label) => label.predicted),
    labels.map((label) => label.observed),
    labels.map((label) => label.correct),
  ];
}

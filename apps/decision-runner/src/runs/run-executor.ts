import { Inject, Injectable } from '@nestjs/common';
import { AnswerQuestionsReply, AnswerQuestionsRequest, EngineQuestion, ServiceError, SUBJECTS } from '@ds/contracts';
import { engineErrorEvaluation, evaluate, Evaluation, NormalizedSchema, outcomesOf, validateState } from '@ds/decision-schema';
import { PLATFORM, RpcClient } from '@ds/platform';
import { errorRow, ExecutionBase, ExecutionRow } from '../executions/execution-recorder';

/** Room the runner gives engine-proxy beyond a call's own deadline (a run's, an llm destination's) before it stops waiting. */
export const ENGINE_REPLY_MARGIN_MS = 2_000;

/**
 * Who asked for a run. Only a live run answers with the decision's fallback when the engine fails: its caller
 * needs an action, while the playground's author, a replay and a shadow comparison are shown the failure itself.
 */
export type RunMode = 'live' | 'playground' | 'replay' | 'shadow';

/**
 * A run's outcome. `answered`: the engine's answers evaluated. `fallback`: the engine failed and the decision's
 * fallback answers instead (never billed). `failed`: `error` is what the caller hears, `row` what is recorded.
 */
export type Executed =
  { status: 'answered' | 'fallback'; evaluation: Evaluation; metrics: RunMetrics } | { status: 'failed'; error: ServiceError; row: ExecutionRow };

/**
 * Steps 7 to 9 of a run, the same in every mode: the state checked against the version, the one engine call, the
 * answers evaluated (from the token distributions when the version answers from them, through its calibration) and
 * measured. What a mode does around it (billing, destinations, recording, queueing) is its caller's.
 */
@Injectable()
export class RunExecutor {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  async execute(mode: RunMode, base: ExecutionBase, schema: NormalizedSchema, state: unknown): Promise<Executed> {
    // metrics.latency_ms covers the service's own share: state validation, the engine call, composites and policies.
    const started = performance.now();
    const stateCheck = validateState(schema, state);
    if (!stateCheck.ok) {
      // The caller's answer keeps the spec's one message; the record also names the field it concerns.
      const issue = { path: stateCheck.field ?? 'state', message: stateCheck.message };
      const row = errorRow(base, new ServiceError('INVALID_STATE', stateCheck.message, [issue]));
      return { status: 'failed', error: new ServiceError('INVALID_STATE', stateCheck.message), row };
    }
    try {
      const answer: AnswerQuestionsReply = await this.rpc.call(SUBJECTS.engine.answer, engineRequestFor(base.workspaceId, schema, state), {
        timeoutMs: schema.settings.timeoutMs + ENGINE_REPLY_MARGIN_MS,
        requestId: base.requestId,
      });
      return { status: 'answered', evaluation: evaluated(schema, answer), metrics: runMetrics(started, answer) };
    } catch (error) {
      const failure = error instanceof ServiceError ? error : new ServiceError('INTERNAL_ERROR', 'The engine call failed.');
      if (mode === 'live' && schema.settings.onEngineError === 'fallback' && failure.code.startsWith('ENGINE_') && failure.code !== 'ENGINE_NOT_CONFIGURED') {
        // engine-proxy says where it routed the call: the decision's engine, the workspace's default or the service's.
        const routed = failure.internal;
        const metrics = runMetrics(started, {
          engine: routed?.engine ?? schema.settings.engine ?? 'llm',
          model: routed?.model ?? schema.settings.model ?? 'unknown',
        });
        return { status: 'fallback', evaluation: engineErrorEvaluation(schema, failure.code), metrics };
      }
      return { status: 'failed', error: failure, row: errorRow(base, failure) };
    }
  }
}

function evaluated(schema: NormalizedSchema, answer: AnswerQuestionsReply): Evaluation {
  try {
    return evaluate(schema, answer.distributions, answer.tokenDistributions);
  } catch {
    throw new ServiceError('ENGINE_ERROR', 'The engine answered outside the decision contract.');
  }
}

/** The one engine call that answers every question of `schema` about `state`. */
export function engineRequestFor(workspaceId: string, schema: NormalizedSchema, state: unknown): AnswerQuestionsRequest {
  return {
    workspaceId,
    engine: schema.settings.engine,
    model: schema.settings.model,
    timeoutMs: schema.settings.timeoutMs,
    context: schema.context,
    state,
    questions: schema.questions.map((question): EngineQuestion => ({
      key: question.key,
      kind: question.kind,
      instructions: question.instructions,
      outcomes: outcomesOf(question),
      guide: question.kind === 'choice' ? question.options : question.kind === 'score' ? question.levels : question.criterion,
    })),
    // Only asked when used, so a model-sourced decision's request is exactly what it was.
    ...(schema.settings.confidenceSource === 'tokens' ? { tokenProbabilities: true } : {}),
  };
}

/** An execution's `metrics`: the service's own time since `started`, and what the engine said it used. */
export interface RunMetrics {
  latency_ms: number;
  engine: string;
  model: string;
  estimated_cost_usd: number;
  input_tokens: number;
  output_tokens: number;
}

function runMetrics(started: number, engine: Partial<AnswerQuestionsReply> & { engine: string; model: string }): RunMetrics {
  return {
    latency_ms: Math.round(performance.now() - started),
    engine: engine.engine,
    model: engine.model,
    estimated_cost_usd: engine.estimatedCostUsd ?? 0,
    input_tokens: engine.inputTokens ?? 0,
    output_tokens: engine.outputTokens ?? 0,
  };
}

/** The response up to its destinations and metrics, which the caller appends in that order. */
export function responseHead(
  decision: { id: string; slug: string },
  version: number | null,
  executionId: string,
  evaluation: Evaluation,
  includeProbabilities: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    decision_id: decision.id,
    execution_id: executionId,
    schema: decision.slug,
    version,
    result: evaluation.result,
    confidence: evaluation.confidence,
  };
  if (evaluation.scores) body.scores = evaluation.scores;
  if (evaluation.composites) body.composites = evaluation.composites;
  body.action = evaluation.action;
  body.action_reason = evaluation.action_reason;
  if (includeProbabilities) body.probabilities = evaluation.probabilities;
  return body;
}

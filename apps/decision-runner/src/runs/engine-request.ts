import { AnswerQuestionsReply, AnswerQuestionsRequest, EngineQuestion } from '@ds/contracts';
import { NormalizedSchema, outcomesOf } from '@ds/decision-schema';

/** Room the runner gives engine-proxy beyond the decision's own deadline before it stops waiting. */
export const ENGINE_REPLY_MARGIN_MS = 2_000;

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

export function runMetrics(started: number, engine: Partial<AnswerQuestionsReply> & { engine: string; model: string }): RunMetrics {
  return {
    latency_ms: Math.round(performance.now() - started),
    engine: engine.engine,
    model: engine.model,
    estimated_cost_usd: engine.estimatedCostUsd ?? 0,
    input_tokens: engine.inputTokens ?? 0,
    output_tokens: engine.outputTokens ?? 0,
  };
}

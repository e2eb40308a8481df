import { Inject, Injectable } from '@nestjs/common';
import {
  AnswerQuestionsReply,
  AnswerQuestionsRequest,
  EngineQuestion,
  RunDecisionReply,
  RunDecisionRequest,
  ServiceError,
  SUBJECTS,
} from '@ds/contracts';
import {
  destinationEntries,
  DestinationEntry,
  engineErrorEvaluation,
  evaluate,
  Evaluation,
  matchingDestinations,
  NormalizedSchema,
  outcomesOf,
  validateState,
} from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { CallerGaveUp, callerGaveUp, currentRequestId, NatsLink, PLATFORM, RpcClient } from '@ds/platform';
import { DecisionCache, RunnableDecision } from '../decisions/decision-cache';
import { VersionCache } from '../decisions/version-cache';
import { ExecutionBase, ExecutionRecorder } from '../executions/execution-recorder';
import { Billing } from './billing';

/** Room left in a NATS message for the reply's envelope and headers around the run response. */
const REPLY_ENVELOPE_BYTES = 4_096;

/** Room the runner gives engine-proxy beyond the decision's own deadline before it stops waiting. */
const ENGINE_REPLY_MARGIN_MS = 2_000;

interface RunMetrics {
  latency_ms: number;
  engine: string;
  model: string;
  estimated_cost_usd: number;
  input_tokens: number;
  output_tokens: number;
}

/** Steps 5 to 10 of the run endpoint's order of checks. */
@Injectable()
export class RunService {
  constructor(
    private readonly decisions: DecisionCache,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    private readonly versions: VersionCache,
    private readonly recorder: ExecutionRecorder,
    private readonly billing: Billing,
  ) {}

  async run(request: RunDecisionRequest): Promise<RunDecisionReply> {
    const decision = await this.findRunnable(request.workspaceId, request.slug);
    const version = decision.activeVersion!;
    const schema = await this.versions.get(decision.id, version);
    const executionId = newId('exec');
    await this.billing.reserve(request.workspaceId, executionId);
    let billable = false;
    try {
      const reply = await this.execute(request, decision, version, schema, executionId);
      billable = reply.billable;
      return reply;
    } finally {
      // Nobody is told about an answer finished after the caller stopped waiting, so it is not billed.
      await this.billing.settle(request.workspaceId, executionId, billable && !callerGaveUp());
    }
  }

  /** Steps 7 to 10, recorded as an execution whatever their outcome. */
  private async execute(
    request: RunDecisionRequest,
    decision: RunnableDecision,
    version: number,
    schema: NormalizedSchema,
    executionId: string,
  ): Promise<RunDecisionReply> {
    // metrics.latency_ms covers the service's own share: state validation, the engine call, composites and policies.
    const started = performance.now();
    const base = {
      id: executionId,
      workspaceId: request.workspaceId,
      decisionId: decision.id,
      decisionSlug: decision.slug,
      version,
      source: request.source,
      requestId: currentRequestId()!,
      livemode: request.livemode,
      input: schema.settings.storeInput ? { state: request.body.state ?? null } : null,
    };

    const stateCheck = validateState(schema, request.body.state);
    if (!stateCheck.ok) {
      const error = new ServiceError('INVALID_STATE', stateCheck.message);
      await this.recorder.recordError(base, error);
      throw error;
    }

    let answer: AnswerQuestionsReply;
    let evaluation: Evaluation;
    try {
      answer = await this.rpc.call<AnswerQuestionsReply>(SUBJECTS.engine.answer, this.engineRequest(request, schema), {
        timeoutMs: schema.settings.timeoutMs + ENGINE_REPLY_MARGIN_MS,
      });
      evaluation = this.evaluate(schema, answer);
    } catch (error) {
      const failure = error instanceof ServiceError ? error : new ServiceError('INTERNAL_ERROR', 'The engine call failed.');
      if (schema.settings.onEngineError === 'fallback' && failure.code.startsWith('ENGINE_') && failure.code !== 'ENGINE_NOT_CONFIGURED') {
        const evaluation = engineErrorEvaluation(schema, failure.code);
        const metrics = this.metrics(started, { engine: schema.settings.engine ?? 'llm', model: schema.settings.model ?? 'unknown' });
        const destinations = this.destinations(schema, evaluation, request, decision.id, executionId);
        const body = JSON.stringify(this.responseBody(request, decision, version, executionId, evaluation, metrics, destinations));
        await this.refuseUnsendable(base, body);
        await this.recorder.recordSuccess(base, evaluation, metrics, destinations, schema.settings.storeOutput);
        return { body, billable: false };
      }
      await this.recorder.recordError(base, failure);
      throw failure;
    }

    if (callerGaveUp()) {
      const late = new CallerGaveUp();
      await this.recorder.recordError(base, late);
      throw late;
    }
    const metrics = this.metrics(started, answer);
    const destinations = this.destinations(schema, evaluation, request, decision.id, executionId);
    const body = JSON.stringify(this.responseBody(request, decision, version, executionId, evaluation, metrics, destinations));
    await this.refuseUnsendable(base, body);
    await this.recorder.recordSuccess(base, evaluation, metrics, destinations, schema.settings.storeOutput);
    return { body, billable: true };
  }

  /**
   * An answer NATS cannot carry would be replaced by an error in transport after it was recorded and billed;
   * it is refused here instead, recorded as an error and never billed.
   */
  private async refuseUnsendable(base: ExecutionBase, body: string): Promise<void> {
    const limit = this.nats.maxPayload - REPLY_ENVELOPE_BYTES;
    // Inside the reply envelope the text is a JSON string, so escaping can grow each character to six bytes;
    // only an answer that could reach the limit is measured exactly.
    if (body.length * 6 <= limit) return;
    const bytes = Buffer.byteLength(JSON.stringify(body));
    if (bytes <= limit) return;
    const error = new ServiceError('INVALID_REQUEST', `The answer to this run is too large to send (${bytes} bytes; at most ${limit}); run it without include=probabilities.`);
    await this.recorder.recordError(base, error);
    throw error;
  }

  private async findRunnable(workspaceId: string, slug: string): Promise<RunnableDecision> {
    const decision = await this.decisions.get(workspaceId, slug);
    if (!decision) throw new ServiceError('DECISION_NOT_FOUND', `No decision ${slug} in this workspace.`);
    if (decision.activeVersion === null) throw new ServiceError('DECISION_NOT_DEPLOYED', `The decision ${slug} has never been deployed.`);
    if (!decision.endpointEnabled) throw new ServiceError('DECISION_DISABLED', `The endpoint of ${slug} is disabled.`);
    return decision;
  }

  private engineRequest(request: RunDecisionRequest, schema: NormalizedSchema): AnswerQuestionsRequest {
    return {
      workspaceId: request.workspaceId,
      engine: schema.settings.engine,
      model: schema.settings.model,
      timeoutMs: schema.settings.timeoutMs,
      context: schema.context,
      state: request.body.state,
      questions: schema.questions.map((question): EngineQuestion => ({
        key: question.key,
        kind: question.kind,
        instructions: question.instructions,
        outcomes: outcomesOf(question),
        guide: question.kind === 'choice' ? question.options : question.kind === 'score' ? question.levels : question.criterion,
      })),
    };
  }

  private evaluate(schema: NormalizedSchema, answer: AnswerQuestionsReply): Evaluation {
    try {
      return evaluate(schema, answer.distributions);
    } catch {
      throw new ServiceError('ENGINE_ERROR', 'The engine answered outside the decision contract.');
    }
  }

  /** Step 10; null when the decision has no destinations, so that the response leaves the field out. */
  private destinations(schema: NormalizedSchema, evaluation: Evaluation, request: RunDecisionRequest, decisionId: string, executionId: string): DestinationEntry[] | null {
    if (schema.destinations.length === 0) return null;
    return destinationEntries(matchingDestinations(schema, evaluation, { state: request.body.state, decisionId, executionId }));
  }

  private metrics(started: number, engine: Partial<AnswerQuestionsReply> & { engine: string; model: string }): RunMetrics {
    return {
      latency_ms: Math.round(performance.now() - started),
      engine: engine.engine,
      model: engine.model,
      estimated_cost_usd: engine.estimatedCostUsd ?? 0,
      input_tokens: engine.inputTokens ?? 0,
      output_tokens: engine.outputTokens ?? 0,
    };
  }

  private responseBody(
    request: RunDecisionRequest,
    decision: RunnableDecision,
    version: number,
    executionId: string,
    evaluation: Evaluation,
    metrics: RunMetrics,
    destinations: DestinationEntry[] | null,
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
    if (request.includeProbabilities) body.probabilities = evaluation.probabilities;
    if (destinations !== null) body.destinations = destinations;
    body.metrics = metrics;
    return body;
  }
}

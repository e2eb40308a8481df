import { Inject, Injectable } from '@nestjs/common';
import { AnswerQuestionsReply, AnswerQuestionsRequest, DeliveryMessage, RunDecisionReply, RunDecisionRequest, ServiceError, SUBJECTS } from '@ds/contracts';
import {
  deliveryBody,
  deliveryRequest,
  DestinationEntry,
  engineErrorEvaluation,
  evaluate,
  Evaluation,
  matchingDestinations,
  NormalizedSchema,
  planDestinations,
  queuedEntry,
  unavailableEntry,
  validateState,
} from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { CallerGaveUp, callerGaveUp, currentRequestId, NatsLink, PLATFORM, RpcClient } from '@ds/platform';
import { DecisionCache, RunnableDecision } from '../decisions/decision-cache';
import { VersionCache } from '../decisions/version-cache';
import { ExecutionBase, ExecutionRecorder, traceOf } from '../executions/execution-recorder';
import { ReservationClient } from './reservation-client';
import { DestinationCalls, entryAt } from './destination-calls';
import { ENGINE_REPLY_MARGIN_MS, engineRequestFor, RunMetrics, runMetrics } from './engine-request';
import { ShadowRunner } from '../shadow/shadow-runner';

/** Room left in a NATS message for the reply's envelope and headers around the run response. */
const REPLY_ENVELOPE_BYTES = 4_096;

type ResponseBody = Record<string, unknown> & { destinations?: DestinationEntry[]; metrics?: RunMetrics };

/** Steps 5 to 10 of the run endpoint's order of checks. */
@Injectable()
export class RunService {
  constructor(
    private readonly decisions: DecisionCache,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    private readonly versions: VersionCache,
    private readonly recorder: ExecutionRecorder,
    private readonly billing: ReservationClient,
    private readonly calls: DestinationCalls,
    private readonly shadows: ShadowRunner,
  ) {}

  async run(request: RunDecisionRequest): Promise<RunDecisionReply> {
    const decision = await this.findRunnable(request.workspaceId, request.slug);
    const { version, schema } = await this.versionToRun(request, decision);
    const executionId = newId('exec');
    const leaseId = await this.billing.reserve(request.workspaceId, executionId);
    let billable = false;
    try {
      const reply = await this.execute(request, decision, version, schema, executionId, leaseId);
      billable = reply.billable;
      if (billable) this.shadows.follow(request, decision, version, executionId);
      return reply;
    } finally {
      // Nobody is told about an answer finished after the caller stopped waiting, so it is not billed.
      await this.billing.settle(request.workspaceId, executionId, decision.id, billable && !callerGaveUp(), leaseId);
    }
  }

  /** Steps 7 to 10, recorded as an execution whatever their outcome. */
  private async execute(
    request: RunDecisionRequest,
    decision: RunnableDecision,
    version: number,
    schema: NormalizedSchema,
    executionId: string,
    leaseId: string | null,
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
      leaseId,
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
      answer = await this.rpc.call(SUBJECTS.engine.answer, this.engineRequest(request, schema), {
        timeoutMs: schema.settings.timeoutMs + ENGINE_REPLY_MARGIN_MS,
      });
      evaluation = this.evaluate(schema, answer);
    } catch (error) {
      const failure = error instanceof ServiceError ? error : new ServiceError('INTERNAL_ERROR', 'The engine call failed.');
      if (schema.settings.onEngineError === 'fallback' && failure.code.startsWith('ENGINE_') && failure.code !== 'ENGINE_NOT_CONFIGURED') {
        const evaluation = engineErrorEvaluation(schema, failure.code);
        // engine-proxy says where it routed the call: the decision's engine, the workspace's default or the service's.
        const routed = failure.internal;
        const metrics = runMetrics(started, {
          engine: routed?.engine ?? schema.settings.engine ?? 'llm',
          model: routed?.model ?? schema.settings.model ?? 'unknown',
        });
        return this.answer(request, decision, version, schema, base, evaluation, metrics, false);
      }
      await this.recorder.recordError(base, failure);
      throw failure;
    }

    if (callerGaveUp()) {
      const late = new CallerGaveUp();
      await this.recorder.recordError(base, late);
      throw late;
    }
    const metrics = runMetrics(started, answer);
    return this.answer(request, decision, version, schema, base, evaluation, metrics, true);
  }

  /** Step 10 and the answer: the response serialised once, recorded, and what the caller and a replay receive. */
  private async answer(
    request: RunDecisionRequest,
    decision: RunnableDecision,
    version: number,
    schema: NormalizedSchema,
    base: ExecutionBase,
    evaluation: Evaluation,
    metrics: RunMetrics,
    billable: boolean,
  ): Promise<RunDecisionReply> {
    const response = this.responseHead(request, decision, version, base.id, evaluation);
    if (schema.destinations.length === 0) {
      response.metrics = metrics;
      const body = JSON.stringify(response);
      await this.refuseUnsendable(base, body);
      await this.recorder.recordSuccess(base, evaluation, metrics, null, schema.settings.storeOutput, traceOf(schema, evaluation));
      return { body, billable };
    }

    const matches = matchingDestinations(schema, evaluation, { state: request.body.state, decisionId: decision.id, executionId: base.id });
    let data: Record<string, unknown> | undefined;
    const plan = planDestinations(matches, { state: request.body.state, livemode: request.livemode, response: () => (data ??= { ...response, metrics }) });
    const { entries } = plan;
    if (plan.waiting.length > 0) {
      await this.calls.wait(request.workspaceId, plan.waiting, entries);
      if (callerGaveUp()) {
        // Nothing is queued for an answer nobody receives.
        const late = new CallerGaveUp();
        await this.recorder.recordError(base, late);
        throw late;
      }
    }
    const queued = plan.deliveries.map((planned) => {
      const deliveryId = newId('dlv');
      entries[planned.index] = queuedEntry(entryAt(entries, planned.index), deliveryId);
      return { planned, deliveryId };
    });
    response.destinations = entries;
    response.metrics = metrics;
    let body = JSON.stringify(response);
    await this.refuseUnsendable(base, body);

    if (plan.deliveries.length > 0) {
      const createdAt = new Date();
      const created = Math.floor(createdAt.getTime() / 1000);
      const messages = queued.map(({ planned, deliveryId }): DeliveryMessage => {
        const { method, headers } = deliveryRequest(planned);
        return {
          deliveryId,
          workspaceId: request.workspaceId,
          decisionId: decision.id,
          decisionSlug: decision.slug,
          executionId: base.id,
          destinationKey: planned.destination.key,
          kind: planned.destination.type,
          livemode: request.livemode,
          url: planned.destination.url,
          method,
          headers,
          body: deliveryBody(planned, { deliveryId, created, livemode: request.livemode, responseJson: body }),
          createdAt: createdAt.toISOString(),
        };
      });
      const stored = await this.calls.publish(messages);
      if (stored.includes(false)) {
        // One answer per message, in the order of the deliveries.
        queued.forEach(({ planned }, i) => {
          if (stored[i] === false) entries[planned.index] = unavailableEntry(entryAt(entries, planned.index));
        });
        body = JSON.stringify(response);
      }
    }
    await this.recorder.recordSuccess(base, evaluation, metrics, entries, schema.settings.storeOutput, traceOf(schema, evaluation));
    return { body, billable };
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
    // The caller learns what to change, not the size of a bus it never sees.
    const error = new ServiceError(
      'INVALID_REQUEST',
      'The answer to this run is too large to send; run it without include=probabilities, or with a smaller state.',
    );
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

  /** The pinned version when the caller names one (still step 5: before billing), else the active one. */
  private async versionToRun(request: RunDecisionRequest, decision: RunnableDecision): Promise<{ version: number; schema: NormalizedSchema }> {
    const pinned = request.version ?? null;
    if (pinned === null) return { version: decision.activeVersion!, schema: await this.versions.get(decision.id, decision.activeVersion!) };
    const schema = Number.isSafeInteger(pinned) && pinned >= 1 ? await this.versions.find(decision.id, pinned) : null;
    if (schema === null) throw new ServiceError('DECISION_NOT_FOUND', `The decision ${request.slug} has no version ${pinned}.`);
    return { version: pinned, schema };
  }

  private engineRequest(request: RunDecisionRequest, schema: NormalizedSchema): AnswerQuestionsRequest {
    return engineRequestFor(request.workspaceId, schema, request.body.state);
  }

  private evaluate(schema: NormalizedSchema, answer: AnswerQuestionsReply): Evaluation {
    try {
      return evaluate(schema, answer.distributions, answer.tokenDistributions);
    } catch {
      throw new ServiceError('ENGINE_ERROR', 'The engine answered outside the decision contract.');
    }
  }

  /** The response up to its destinations and metrics, which the caller appends in that order. */
  private responseHead(request: RunDecisionRequest, decision: RunnableDecision, version: number, executionId: string, evaluation: Evaluation): ResponseBody {
    const body: ResponseBody = {
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
    return body;
  }
}

import { Inject, Injectable, Optional } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { DeliveryMessage, RunDecisionReply, RunDecisionRequest, ServiceError } from '@ds/contracts';
import {
  deliveryBody,
  deliveryRequest,
  DestinationEntry,
  Evaluation,
  matchingDestinations,
  NormalizedSchema,
  planDestinations,
  queuedEntry,
  unavailableEntry,
} from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { CallerGaveUp, callerGaveUp, currentRequestId, Metrics, NatsLink, PLATFORM } from '@ds/platform';
import { DecisionCache, RunnableDecision } from '../decisions/decision-cache';
import { VersionCache } from '../decisions/version-cache';
import { answeredRow, ExecutionBase, executionBase, ExecutionRecorder } from '../executions/execution-recorder';
import { ReservationClient } from './reservation-client';
import { DestinationCalls, entryAt } from './destination-calls';
import { responseHead, RunExecutor, RunMetrics } from './run-executor';
import { ShadowRunner } from '../shadow/shadow-runner';
import { ReviewRecorder } from '../reviews/review-recorder';

/** Room left in a NATS message for the reply's envelope and headers around the run response. */
const REPLY_ENVELOPE_BYTES = 4_096;

type ResponseBody = Record<string, unknown> & { destinations?: DestinationEntry[]; metrics?: RunMetrics };

/** Steps 5 to 10 of the run endpoint's order of checks. */
@Injectable()
export class RunService {
  /**
   * Where a run's own time goes, so that what it adds to a slow engine can be split (docs/performance.md): the
   * engine call itself is the duration of the runner's call to the engine proxy's answer subject.
   */
  private readonly steps: Histogram<'step'> | null;

  constructor(
    private readonly decisions: DecisionCache,
    private readonly executor: RunExecutor,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    private readonly versions: VersionCache,
    private readonly recorder: ExecutionRecorder,
    private readonly billing: ReservationClient,
    private readonly calls: DestinationCalls,
    private readonly shadows: ShadowRunner,
    private readonly reviews: ReviewRecorder,
    @Optional() @Inject(PLATFORM.metrics) metrics: Metrics | null = null,
  ) {
    this.steps = metrics
      ? new Histogram({
          name: 'decision_service_run_step_duration_seconds',
          help: 'Time a live run spent in each of its waits besides the engine: step 6, recording and answering, settling',
          labelNames: ['step'],
          buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
          registers: [metrics.registry],
        })
      : null;
  }

  async run(request: RunDecisionRequest): Promise<RunDecisionReply> {
    const decision = await this.findRunnable(request.workspaceId, request.slug);
    const { version, schema } = await this.versionToRun(request, decision);
    const executionId = newId('exec');
    let mark = performance.now();
    const lap = (step: 'reserve' | 'execute' | 'record and answer' | 'settle') => {
      const now = performance.now();
      this.steps?.observe({ step }, (now - mark) / 1000);
      mark = now;
    };
    const leaseId = await this.billing.reserve(request.workspaceId, executionId);
    lap('reserve');
    let billable = false;
    try {
      // Steps 7 to 10, recorded as an execution whatever their outcome.
      const input = schema.settings.storeInput ? { state: request.body.state ?? null } : null;
      const base = executionBase(executionId, request.workspaceId, decision, version, request.source, currentRequestId()!, request.livemode, input, leaseId);
      const executed = await this.executor.execute('live', base, schema, request.body.state);
      lap('execute');
      if (executed.status === 'failed') {
        await this.recorder.record(executed.row);
        this.reviews.follow(schema, base, { action: null, reasonType: null, engineError: executed.error.code.startsWith('ENGINE_') });
        throw executed.error;
      }
      if (executed.status === 'answered' && callerGaveUp()) {
        const late = new CallerGaveUp();
        await this.recorder.recordError(base, late);
        throw late;
      }
      const reply = await this.answer(request, decision, version, schema, base, executed.evaluation, executed.metrics, executed.status === 'answered');
      billable = reply.billable;
      lap('record and answer');
      if (billable) this.shadows.follow(request, decision, version, executionId);
      // The run's execution is written by now; its review item is written after the answer, and nobody waits for it.
      const { action, action_reason } = executed.evaluation;
      this.reviews.follow(schema, base, { action, reasonType: action_reason.type, engineError: executed.status === 'fallback' });
      return reply;
    } finally {
      // Nobody is told about an answer finished after the caller stopped waiting, so it is not billed.
      await this.billing.settle(request.workspaceId, executionId, decision.id, billable && !callerGaveUp(), leaseId);
      if (billable) lap('settle');
    }
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
    const response = responseHead(decision, version, base.id, evaluation, request.includeProbabilities) as ResponseBody;
    if (schema.destinations.length === 0) {
      response.metrics = metrics;
      const body = JSON.stringify(response);
      await this.refuseUnsendable(base, body);
      await this.recorder.record(answeredRow(base, schema, evaluation, metrics, null));
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
    await this.recorder.record(answeredRow(base, schema, evaluation, metrics, entries));
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
}

import type { JetStreamClient } from 'nats';
import {
  AnswerQuestionsReply,
  AnswerQuestionsRequest,
  BillingSettlement,
  BillingSettlementBatch,
  DeliveryMessage,
  RunDecisionRequest,
  ServiceError,
  SETTLEMENT_STREAM,
  SUBJECTS,
} from '@ds/contracts';
import { normalizeSchema, NormalizedSchema } from '@ds/decision-schema';
import { CallOptions, Logger, NatsLink, RequestContext, RpcClient, runWithRequestContext } from '@ds/platform';
import type { DecisionCache, RunnableDecision } from '../decisions/decision-cache';
import type { VersionCache } from '../decisions/version-cache';
import type { ExecutionRecorder, ExecutionRow } from '../executions/execution-recorder';
import { ReservationClient } from './reservation-client';
import type { DestinationCalls } from './destination-calls';
import { RunExecutor } from './run-executor';
import { RunService } from './run.service';
import type { ShadowRunner } from '../shadow/shadow-runner';
import type { ReviewRecorder } from '../reviews/review-recorder';
import { defined } from '../../../../test/e2e/support/api';

/**
 * RunService with every collaborator stubbed: the RPC client answers billing's reserve and the engine from
 * canned replies, settlements land in a fake JetStream, and every step is written to one log so that the order
 * of reserve, engine call, record and settle can be read off it.
 */

const DECISION: RunnableDecision = { id: 'dec_00000000000000000001', slug: 'support-triage', activeVersion: 3, endpointEnabled: true, shadow: null };

function schemaWith(overrides: Record<string, unknown> = {}): NormalizedSchema {
  return normalizeSchema({
    state: { type: 'object', fields: { message: { type: 'string', required: true } } },
    questions: [
      {
        key: 'intent',
        kind: 'choice',
        instructions: 'What does the customer want? Read `message`.',
        options: [
          { value: 'refund', description: 'Wants the money back' },
          { value: 'exchange', description: null },
        ],
      },
    ],
    policies: [{ when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' }, action: 'escalate' }],
    fallbackAction: 'continue',
    settings: { timeoutMs: 5_000 },
    ...overrides,
  });
}

const ENGINE_REPLY: AnswerQuestionsReply = {
  distributions: { intent: { refund: 0.9, exchange: 0.05, other: 0.05 } },
  engine: 'llm',
  model: 'claude-sonnet',
  inputTokens: 120,
  outputTokens: 30,
  estimatedCostUsd: 0.0004,
};

type Answer = (payload: unknown, options: CallOptions | undefined) => unknown;

interface Harness {
  service: RunService;
  /** Every step in the order it happened: RPC subjects, `record success`, `record error CODE`, `settle true|false`. */
  steps: string[];
  rpcCalls: Array<{ subject: string; payload: unknown; options: CallOptions | undefined }>;
  settlements: Array<{ subject: string; settlement: BillingSettlement }>;
  published: DeliveryMessage[][];
  /** Live runs handed to the shadow, as `version executionId after steps so far`. */
  followed: string[];
  /** Live runs handed to review, as `executionId action reasonType engineError after steps so far`. */
  reviewed: string[];
  context: RequestContext;
  run(request?: Partial<RunDecisionRequest>): ReturnType<RunService['run']>;
}

function harness(options: { schema?: NormalizedSchema; answers?: Record<string, Answer>; whileRecording?: () => void } = {}): Harness {
  const schema = options.schema ?? schemaWith();
  const answers: Record<string, Answer> = {
    [SUBJECTS.billing.reserve]: () => ({}),
    [SUBJECTS.billing.settle]: () => ({ state: 'released' }),
    [SUBJECTS.engine.answer]: () => ENGINE_REPLY,
    ...options.answers,
  };
  const steps: string[] = [];
  const rpcCalls: Harness['rpcCalls'] = [];
  const settlements: Harness['settlements'] = [];
  const published: DeliveryMessage[][] = [];

  const rpc = {
    async call<T>(subject: string, payload: unknown, callOptions?: CallOptions): Promise<T> {
      steps.push(subject);
      rpcCalls.push({ subject, payload, options: callOptions });
      const answer = answers[subject];
      if (!answer) throw new Error(`no canned reply for ${subject}`);
      return (await answer(payload, callOptions)) as T;
    },
  } as unknown as RpcClient;
  const jetstream = {
    async publish(subject: string, data: string) {
      for (const settlement of (JSON.parse(data) as BillingSettlementBatch).settlements) {
        steps.push(`settle ${settlement.billable}`);
        settlements.push({ subject, settlement });
      }
      return { stream: SETTLEMENT_STREAM.name, seq: settlements.length, duplicate: false };
    },
  } as unknown as JetStreamClient;
  const logger = { warn: () => undefined } as unknown as Logger;
  const decisions = { get: async (workspaceId: string, slug: string) => (slug === DECISION.slug ? DECISION : null) } as unknown as DecisionCache;
  const versions = { get: async () => schema } as unknown as VersionCache;
  const recorder = {
    record: async (row: ExecutionRow) => {
      if (row.status === 'error') return void steps.push(`record error ${(row.error as ServiceError).code}`);
      steps.push('record success');
      options.whileRecording?.();
    },
    recordError: async (_base: unknown, error: ServiceError) => void steps.push(`record error ${error.code}`),
  } as unknown as ExecutionRecorder;
  const calls = {
    wait: async () => undefined,
    publish: async (messages: DeliveryMessage[]) => {
      published.push(messages);
      return messages.map(() => true);
    },
  } as unknown as DestinationCalls;
  const nats = { maxPayload: 1024 * 1024 } as NatsLink;
  const followed: string[] = [];
  const shadows = {
    follow: (_request: RunDecisionRequest, _decision: RunnableDecision, version: number, executionId: string) => {
      followed.push(`${version} ${executionId} after ${steps.join(', ')}`);
    },
  } as unknown as ShadowRunner;

  const reviewed: string[] = [];
  const reviews = {
    follow: (_schema: NormalizedSchema, base: { id: string }, run: { action: string | null; reasonType: string | null; engineError: boolean }) => {
      reviewed.push(`${base.id} ${run.action} ${run.reasonType} ${run.engineError} after ${steps.join(', ')}`);
    },
  } as unknown as ReviewRecorder;

  const service = new RunService(
    decisions,
    new RunExecutor(rpc),
    nats,
    versions,
    recorder,
    new ReservationClient(rpc, jetstream, logger),
    calls,
    shadows,
    reviews,
  );
  const context: RequestContext = { requestId: 'req_run_service_spec', deadline: Date.now() + 60_000 };
  const run = (request: Partial<RunDecisionRequest> = {}) =>
    runWithRequestContext(context, () =>
      service.run({
        workspaceId: '8f9f2c1e-0000-4000-8000-000000000001',
        slug: DECISION.slug,
        body: { state: { message: 'My order arrived broken.' } },
        includeProbabilities: false,
        source: 'api',
        livemode: true,
        apiKeyId: 'key_00000000000000000001',
        ...request,
      }),
    );
  return { service, steps, rpcCalls, settlements, published, followed, reviewed, context, run };
}

const engineFails =
  (code: 'ENGINE_TIMEOUT' | 'ENGINE_ERROR'): Answer =>
  () => {
    throw new ServiceError(code, 'The engine did not answer.');
  };

describe('RunService', () => {
  it('reserves, calls the engine, records the execution, then settles it as billable', async () => {
    const h = harness();
    const reply = await h.run();
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, SUBJECTS.engine.answer, 'record success', 'settle true']);
    expect(reply.billable).toBe(true);
  });

  it('hands the shadow the recorded execution of an engine answer, and nothing of a failed run', async () => {
    const h = harness();
    const reply = await h.run();
    const executionId = (JSON.parse(reply.body) as { execution_id: string }).execution_id;
    expect(h.followed).toEqual([`3 ${executionId} after ${SUBJECTS.billing.reserve}, ${SUBJECTS.engine.answer}, record success`]);
    const failing = harness({ answers: { [SUBJECTS.engine.answer]: engineFails('ENGINE_ERROR') } });
    await expect(failing.run()).rejects.toThrow();
    expect(failing.followed).toEqual([]);
  });

  it('hands review every live run once it is recorded: an answer, a fallback for an engine error, a run that failed on one', async () => {
    const h = harness();
    const reply = await h.run();
    const executionId = (JSON.parse(reply.body) as { execution_id: string }).execution_id;
    expect(h.reviewed).toEqual([`${executionId} escalate policy false after ${SUBJECTS.billing.reserve}, ${SUBJECTS.engine.answer}, record success`]);

    const fallback = harness({
      schema: schemaWith({ settings: { onEngineError: 'fallback' } }),
      answers: { [SUBJECTS.engine.answer]: engineFails('ENGINE_TIMEOUT') },
    });
    await fallback.run();
    expect(fallback.reviewed).toEqual([expect.stringMatching(/^exec_\w+ continue engine_error true after .*record success$/)]);

    const failing = harness({ answers: { [SUBJECTS.engine.answer]: engineFails('ENGINE_ERROR') } });
    await expect(failing.run()).rejects.toThrow();
    expect(failing.reviewed).toEqual([expect.stringMatching(/^exec_\w+ null null true after .*record error ENGINE_ERROR$/)]);

    const badState = harness();
    await expect(badState.run({ body: { state: { message: 42 } } })).rejects.toThrow();
    expect(badState.reviewed).toEqual([expect.stringMatching(/^exec_\w+ null null false after .*record error INVALID_STATE$/)]);
  });

  it('reserves and settles the execution the reply names, with its decision, in a batch message of the runner’s settlements', async () => {
    const h = harness();
    const reply = await h.run();
    const executionId = (JSON.parse(reply.body) as { execution_id: string }).execution_id;
    expect(executionId).toMatch(/^exec_[A-Za-z0-9]{20}$/);
    expect(defined(h.rpcCalls[0]).payload).toEqual({ workspaceId: '8f9f2c1e-0000-4000-8000-000000000001', executionId });
    expect(h.settlements).toEqual([
      {
        subject: SETTLEMENT_STREAM.batchSubject,
        settlement: { workspaceId: '8f9f2c1e-0000-4000-8000-000000000001', executionId, decisionId: DECISION.id, billable: true },
      },
    ]);
  });

  it('asks the engine every question with the decision’s deadline, and waits a little longer for its reply', async () => {
    const h = harness();
    await h.run();
    const engineCall = defined(h.rpcCalls[1]);
    const request = engineCall.payload as AnswerQuestionsRequest;
    expect(request).toMatchObject({ workspaceId: '8f9f2c1e-0000-4000-8000-000000000001', timeoutMs: 5_000, state: { message: 'My order arrived broken.' } });
    expect(request.questions.map((question) => [question.key, question.outcomes])).toEqual([['intent', ['refund', 'exchange', 'other']]]);
    expect(engineCall.options?.timeoutMs).toBeGreaterThan(5_000);
  });

  it('answers with the evaluation, then the metrics the engine reported, serialised once', async () => {
    const h = harness();
    const reply = await h.run();
    const body = JSON.parse(reply.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['decision_id', 'execution_id', 'schema', 'version', 'result', 'confidence', 'action', 'action_reason', 'metrics']);
    expect(body).toMatchObject({
      decision_id: DECISION.id,
      schema: DECISION.slug,
      version: 3,
      result: { intent: 'refund' },
      action: 'escalate',
      action_reason: { type: 'policy', rule: 0 },
    });
    expect(body.metrics).toEqual({
      latency_ms: expect.any(Number),
      engine: 'llm',
      model: 'claude-sonnet',
      estimated_cost_usd: 0.0004,
      input_tokens: 120,
      output_tokens: 30,
    });
  });

  it('adds the probabilities when the caller asked for them', async () => {
    const body = JSON.parse((await harness().run({ includeProbabilities: true })).body) as Record<string, unknown>;
    expect(body.probabilities).toEqual({ intent: { refund: 0.9, exchange: 0.05, other: 0.05 } });
    expect(Object.keys(body).indexOf('probabilities')).toBe(Object.keys(body).indexOf('action_reason') + 1);
  });

  it('queues the destinations that fire and lists them before the metrics', async () => {
    const h = harness({
      schema: schemaWith({
        destinations: [{ key: 'ops', type: 'webhook', url: 'https://hooks.example.com/decisions', when: [{ on: 'action', op: 'eq', value: 'escalate' }] }],
      }),
    });
    const body = JSON.parse((await h.run()).body) as { destinations: Array<Record<string, unknown>>; metrics: unknown };
    expect(h.published).toHaveLength(1);
    const message = defined(h.published[0]![0]);
    expect(message).toMatchObject({ destinationKey: 'ops', kind: 'webhook', url: 'https://hooks.example.com/decisions', decisionId: DECISION.id });
    expect(body.destinations).toEqual([{ key: 'ops', type: 'webhook', status: 'queued', delivery_id: message.deliveryId }]);
    expect(Object.keys(body).slice(-2)).toEqual(['destinations', 'metrics']);
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, SUBJECTS.engine.answer, 'record success', 'settle true']);
  });

  it('settles as not billable when the engine fails, after recording the failure', async () => {
    const h = harness({ answers: { [SUBJECTS.engine.answer]: engineFails('ENGINE_TIMEOUT') } });
    await expect(h.run()).rejects.toMatchObject({ code: 'ENGINE_TIMEOUT' });
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, SUBJECTS.engine.answer, 'record error ENGINE_TIMEOUT', SUBJECTS.billing.settle]);
  });

  it('settles as not billable when the engine answers outside the decision’s contract', async () => {
    const h = harness({ answers: { [SUBJECTS.engine.answer]: () => ({ ...ENGINE_REPLY, distributions: { mood: { calm: 1 } } }) } });
    await expect(h.run()).rejects.toMatchObject({ code: 'ENGINE_ERROR' });
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, SUBJECTS.engine.answer, 'record error ENGINE_ERROR', SUBJECTS.billing.settle]);
  });

  it('answers the fallback of a decision that asks for one when the engine fails, recorded but not billable', async () => {
    const h = harness({
      schema: schemaWith({ settings: { timeoutMs: 5_000, onEngineError: 'fallback' } }),
      answers: { [SUBJECTS.engine.answer]: engineFails('ENGINE_ERROR') },
    });
    const reply = await h.run();
    expect(reply.billable).toBe(false);
    expect(JSON.parse(reply.body)).toMatchObject({ action: 'continue', action_reason: { type: 'engine_error', code: 'ENGINE_ERROR' } });
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, SUBJECTS.engine.answer, 'record success', SUBJECTS.billing.settle]);
  });

  it('settles as not billable when the caller gave up while the engine was answering', async () => {
    const h = harness({
      answers: {
        [SUBJECTS.engine.answer]: () => {
          h.context.deadline = Date.now() - 1;
          return ENGINE_REPLY;
        },
      },
    });
    await expect(h.run()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, SUBJECTS.engine.answer, 'record error SERVICE_UNAVAILABLE', SUBJECTS.billing.settle]);
  });

  it('settles as not billable when the caller gave up while the answer was being recorded', async () => {
    const h = harness({
      whileRecording: () => {
        h.context.deadline = Date.now() - 1;
      },
    });
    await h.run();
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, SUBJECTS.engine.answer, 'record success', SUBJECTS.billing.settle]);
  });

  it('releases the reservation before answering, so that a run right after it finds the decision free again', async () => {
    const h = harness({ answers: { [SUBJECTS.engine.answer]: engineFails('ENGINE_TIMEOUT') } });
    const run = h.run();
    await expect(run).rejects.toMatchObject({ code: 'ENGINE_TIMEOUT' });
    const release = defined(h.rpcCalls.find((rpcCall) => rpcCall.subject === SUBJECTS.billing.settle));
    expect(release.payload).toEqual({
      workspaceId: '8f9f2c1e-0000-4000-8000-000000000001',
      executionId: expect.stringMatching(/^exec_/),
      decisionId: DECISION.id,
      billable: false,
    });
    expect(h.settlements).toEqual([]);
  });

  it('publishes the release on the settlements stream when the ledger cannot take it at once', async () => {
    const h = harness({
      answers: {
        [SUBJECTS.engine.answer]: engineFails('ENGINE_TIMEOUT'),
        [SUBJECTS.billing.settle]: () => {
          throw new ServiceError('SERVICE_UNAVAILABLE', 'No ledger answered.');
        },
      },
    });
    await expect(h.run()).rejects.toMatchObject({ code: 'ENGINE_TIMEOUT' });
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, SUBJECTS.engine.answer, 'record error ENGINE_TIMEOUT', SUBJECTS.billing.settle, 'settle false']);
    expect(defined(h.settlements[0]).settlement.billable).toBe(false);
  });

  it('stops before the engine when the reservation is refused with a 402, with nothing recorded or settled', async () => {
    const h = harness({
      answers: {
        [SUBJECTS.billing.reserve]: () => {
          throw new ServiceError('CREDITS_EXHAUSTED', 'No credits left.');
        },
      },
    });
    await expect(h.run()).rejects.toMatchObject({ code: 'CREDITS_EXHAUSTED', status: 402 });
    expect(h.steps).toEqual([SUBJECTS.billing.reserve]);
  });

  it('refuses a state the schema does not accept after reserving, records it, and settles it as not billable', async () => {
    const h = harness();
    await expect(h.run({ body: { state: { other: 1 } } })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect(h.steps).toEqual([SUBJECTS.billing.reserve, 'record error INVALID_STATE', SUBJECTS.billing.settle]);
  });

  it('answers DECISION_NOT_FOUND for an unknown slug before reserving anything', async () => {
    const h = harness();
    await expect(h.run({ slug: 'no-such-decision' })).rejects.toMatchObject({ code: 'DECISION_NOT_FOUND' });
    expect(h.steps).toEqual([]);
  });
});

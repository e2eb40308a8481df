import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { AnswerQuestionsReply, AnswerQuestionsRequest, RunDecisionRequest, ServiceError, SUBJECTS } from '@ds/contracts';
import { normalizeSchema, NormalizedSchema } from '@ds/decision-schema';
import type { Logger, Metrics, RpcClient } from '@ds/platform';
import type { RunnableDecision } from '../decisions/decision-cache';
import type { VersionCache } from '../decisions/version-cache';
import { RunExecutor } from '../runs/run-executor';
import { SHADOW_CONCURRENCY, SHADOW_QUEUE_LIMIT, SHADOW_QUEUE_PER_WORKSPACE, ShadowRunner } from './shadow-runner';

function schema(threshold: number, storeOutput = true): NormalizedSchema {
  return normalizeSchema({
    state: { type: 'object', fields: { message: { type: 'string', required: true } } },
    questions: [{ key: 'fraud', kind: 'probability', instructions: 'Judge `message`.', criterion: 'Fraud' }],
    policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: threshold }, action: 'block' }],
    fallbackAction: 'escalate',
    settings: { timeoutMs: 5_000, storeOutput },
  });
}

const REPLY: AnswerQuestionsReply = {
  distributions: { fraud: { yes: 0.9, no: 0.1 } },
  engine: 'llm',
  model: 'claude-sonnet',
  inputTokens: 100,
  outputTokens: 20,
  estimatedCostUsd: 0.001,
};

const DECISION: RunnableDecision = { id: 'dec_1', slug: 'triage', activeVersion: 3, endpointEnabled: true, shadow: { version: 4, rate: 100 } };

const REQUEST: RunDecisionRequest = {
  workspaceId: 'ws_1',
  slug: 'triage',
  body: { state: { message: 'refund please' } },
  includeProbabilities: false,
  source: 'api',
  livemode: true,
  apiKeyId: 'key_1',
};

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

function harness(options: { engine?: (request: AnswerQuestionsRequest) => Promise<AnswerQuestionsReply>; shadowSchema?: NormalizedSchema } = {}) {
  const engineCalls: AnswerQuestionsRequest[] = [];
  const rows: unknown[][] = [];
  const rpc = {
    call: async (subject: string, payload: AnswerQuestionsRequest) => {
      expect(subject).toBe(SUBJECTS.engine.answer);
      engineCalls.push(payload);
      return (options.engine ?? (async () => REPLY))(payload);
    },
  } as unknown as RpcClient;
  const db = {
    driver: {
      master: { query: async (query: { values: unknown[] }) => void rows.push(query.values.map((value) => (Array.isArray(value) ? value[0] : value))) },
    },
  } as unknown as DataSource;
  const registry = new Registry();
  const versions = {
    get: async (_id: string, version: number) => (version === 4 ? (options.shadowSchema ?? schema(0.5)) : schema(0.95)),
  } as unknown as VersionCache;
  const logger = { warn: () => undefined } as unknown as Logger;
  const runner = new ShadowRunner(db, new RunExecutor(rpc), logger, { registry } as Metrics, versions);
  const metric = async (name: string) => (await registry.getSingleMetricAsString(name)).split('\n').filter((line) => !line.startsWith('#'));
  return { runner, engineCalls, rows, metric };
}

/** Parameters of the shadow INSERT, in its order (one row's value of each column, then the live run). */
const COLUMN = { id: 0, version: 4, status: 6, livemode: 8, result: 9, action: 13, metrics: 15, error: 17, trace: 19, distributions: 20, shadowOf: 22 };

describe('ShadowRunner', () => {
  it('evaluates the shadow version on the live state after the call returns, and records it linked to the live run', async () => {
    const h = harness();
    h.runner.follow(REQUEST, DECISION, 3, 'exec_live');
    expect(h.engineCalls).toHaveLength(0);
    await turns();
    expect(h.engineCalls).toHaveLength(1);
    expect(h.engineCalls[0]).toMatchObject({ workspaceId: 'ws_1', state: { message: 'refund please' } });
    expect(h.rows).toHaveLength(1);
    const row = h.rows[0]!;
    expect(row[COLUMN.id]).toMatch(/^exec_/);
    expect([row[COLUMN.version], row[COLUMN.status], row[COLUMN.livemode], row[COLUMN.action], row[COLUMN.shadowOf]]).toEqual([
      4,
      'success',
      true,
      'block',
      'exec_live',
    ]);
    expect(JSON.parse(row[COLUMN.result] as string)).toEqual({ fraud: 0.9 });
    expect(JSON.parse(row[COLUMN.metrics] as string)).toMatchObject({ input_tokens: 100, output_tokens: 20, estimated_cost_usd: 0.001 });
    expect(row[COLUMN.trace]).not.toBeNull();
    expect(JSON.parse(row[COLUMN.distributions] as string)).toEqual({ model: REPLY.distributions });
    expect(await h.metric('decision_service_shadow_runs_total')).toEqual(['decision_service_shadow_runs_total{status="success"} 1']);
  });

  it('keeps no answers when the shadow version does not store output, but keeps its action', async () => {
    const h = harness({ shadowSchema: schema(0.5, false) });
    h.runner.follow(REQUEST, DECISION, 3, 'exec_live');
    await turns();
    expect([h.rows[0]![COLUMN.result], h.rows[0]![COLUMN.action]]).toEqual([null, 'block']);
  });

  it('follows only runs of the active version of a decision with a shadow', async () => {
    const h = harness();
    h.runner.follow(REQUEST, { ...DECISION, shadow: null }, 3, 'exec_a');
    h.runner.follow({ ...REQUEST, version: 2 }, DECISION, 2, 'exec_b');
    await turns();
    expect(h.engineCalls).toHaveLength(0);
  });

  it('records an engine failure as the shadow run’s error, and a state the shadow refuses without an engine call', async () => {
    const h = harness({
      engine: async () => {
        throw new ServiceError('ENGINE_TIMEOUT', 'The engine did not answer in time.');
      },
    });
    h.runner.follow(REQUEST, DECISION, 3, 'exec_live');
    h.runner.follow({ ...REQUEST, body: { state: { other: 1 } } }, DECISION, 3, 'exec_bad');
    await turns();
    expect(h.engineCalls).toHaveLength(1);
    const errors = h.rows.map((row) => [row[COLUMN.status], JSON.parse(row[COLUMN.error] as string).code, row[COLUMN.shadowOf]]);
    expect(errors.sort()).toEqual([
      ['error', 'ENGINE_TIMEOUT', 'exec_live'],
      ['error', 'INVALID_STATE', 'exec_bad'],
    ]);
    expect(await h.metric('decision_service_shadow_runs_total')).toEqual(['decision_service_shadow_runs_total{status="error"} 2']);
  });

  it("drops samples past its workspace's share or the queue instead of waiting, and counts them", async () => {
    const h = harness({ engine: () => new Promise<AnswerQuestionsReply>(() => undefined) });
    for (let i = 0; i < SHADOW_CONCURRENCY; i++) h.runner.follow(REQUEST, DECISION, 3, `exec_${i}`);
    await turns();
    expect(h.engineCalls).toHaveLength(SHADOW_CONCURRENCY);
    const dropped = async () => h.metric('decision_service_shadow_dropped_total');
    for (let i = 0; i < SHADOW_QUEUE_PER_WORKSPACE + 3; i++) h.runner.follow(REQUEST, DECISION, 3, `exec_q${i}`);
    expect(await dropped()).toEqual(['decision_service_shadow_dropped_total{reason="queue_full"} 3']);
    // Other workspaces still find room, up to the whole queue.
    const others = SHADOW_QUEUE_LIMIT / SHADOW_QUEUE_PER_WORKSPACE;
    for (let w = 2; w <= others + 1; w++) {
      for (let i = 0; i < SHADOW_QUEUE_PER_WORKSPACE; i++) h.runner.follow({ ...REQUEST, workspaceId: `ws_${w}` }, DECISION, 3, `exec_${w}_${i}`);
    }
    expect(await dropped()).toEqual([`decision_service_shadow_dropped_total{reason="queue_full"} ${3 + SHADOW_QUEUE_PER_WORKSPACE}`]);
    expect(h.engineCalls).toHaveLength(SHADOW_CONCURRENCY);
  });

  it('samples a run whose draw falls under the rate, and not one at it', async () => {
    const h = harness();
    const random = jest.spyOn(Math, 'random');
    random.mockReturnValueOnce(0.099).mockReturnValueOnce(0.1);
    h.runner.follow(REQUEST, { ...DECISION, shadow: { version: 4, rate: 10 } }, 3, 'exec_in');
    h.runner.follow(REQUEST, { ...DECISION, shadow: { version: 4, rate: 10 } }, 3, 'exec_out');
    random.mockRestore();
    await turns();
    expect(h.rows.map((row) => row[COLUMN.shadowOf])).toEqual(['exec_in']);
  });
});

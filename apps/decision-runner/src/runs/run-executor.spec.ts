import { AnswerQuestionsRequest, ServiceError } from '@ds/contracts';
import { evaluate, normalizeSchema } from '@ds/decision-schema';
import type { RpcClient } from '@ds/platform';
import { executionBase } from '../executions/execution-recorder';
import { RunExecutor, RunMode } from './run-executor';

const schema = normalizeSchema({
  state: { type: 'object', fields: { message: { type: 'string', required: true } } },
  questions: [{ key: 'verdict', kind: 'choice', instructions: 'Judge `message`.', options: [{ value: 'approve' }, { value: 'reject' }] }],
  fallbackAction: 'escalate',
  settings: { confidenceSource: 'tokens', onEngineError: 'fallback' },
});
const base = executionBase('exec_1', 'ws_1', { id: 'dec_1', slug: 'triage' }, 1, 'api', 'req_1', true);
const MODES: RunMode[] = ['live', 'playground', 'replay', 'shadow'];

function executor(answer: (request: AnswerQuestionsRequest) => unknown) {
  return new RunExecutor({ call: async (_subject: string, request: AnswerQuestionsRequest) => answer(request) } as unknown as RpcClient);
}

describe('RunExecutor', () => {
  it('asks for token probabilities and answers from them in every mode', async () => {
    const reply = {
      distributions: { verdict: { approve: 0.6, reject: 0.4, other: 0 } },
      tokenDistributions: { verdict: { approve: 0.9, reject: 0.1, other: 0 } },
      engine: 'llm',
      model: 'm',
      inputTokens: 10,
      outputTokens: 2,
      estimatedCostUsd: 0.01,
    };
    const run = executor((request) => {
      expect(request.tokenProbabilities).toBe(true);
      return reply;
    });
    const fromTokens = evaluate(schema, reply.distributions, reply.tokenDistributions);
    expect(fromTokens.confidence).not.toEqual(evaluate(schema, reply.distributions).confidence);
    for (const mode of MODES) {
      const executed = await run.execute(mode, base, schema, { message: 'hello' });
      if (executed.status !== 'answered') throw new Error(`${mode}: ${executed.status}`);
      expect([mode, executed.evaluation]).toEqual([mode, fromTokens]);
      expect(executed.metrics).toMatchObject({ engine: 'llm', model: 'm', input_tokens: 10, output_tokens: 2, estimated_cost_usd: 0.01 });
    }
  });

  it('falls back on an engine failure only in a live run, and refuses a state without an engine call', async () => {
    const run = executor(() => {
      throw new ServiceError('ENGINE_TIMEOUT', 'The engine did not answer in time.');
    });
    const statuses = await Promise.all(MODES.map(async (mode) => (await run.execute(mode, base, schema, { message: 'hello' })).status));
    expect(statuses).toEqual(['fallback', 'failed', 'failed', 'failed']);
    const noCall = executor(() => {
      throw new Error('a refused state makes no engine call');
    });
    expect(await noCall.execute('live', base, schema, { other: 1 })).toMatchObject({
      status: 'failed',
      error: { code: 'INVALID_STATE' },
      // The record names the field; the caller hears the spec's one message.
      row: { status: 'error', error: { code: 'INVALID_STATE', details: [{ path: expect.any(String) }] } },
    });
  });
});

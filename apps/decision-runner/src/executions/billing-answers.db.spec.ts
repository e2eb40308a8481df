import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Evaluation } from '@ds/decision-schema';
import { decisionRunner } from '../main';
import { ExecutionBase, ExecutionRecorder } from './execution-recorder';
import { ExecutionsQuery } from './executions.query';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { ExecutionStore } from './execution.store';

/** What the runner tells the ledger's sweeper, against a real PostgreSQL with the runner's own migrations. */

const database = useMigratedDatabase('runner_billing_answers', decisionRunner.database, 2);
let db: DataSource;
let recorder: ExecutionRecorder;
let query: ExecutionsQuery;
const WS = 'ws_billing_answers';
const LEASE = 'lease_AAAAAAAAAAAAAAAAAAAA';

beforeAll(async () => {
  db = database.dataSource;
  recorder = new ExecutionRecorder(db);
  query = new ExecutionsQuery(new ExecutionStore(db));
});

function base(id: string, decisionId: string, leaseId: string | null = null): ExecutionBase {
  return {
    id,
    workspaceId: WS,
    decisionId,
    decisionSlug: decisionId.slice(4),
    version: 1,
    source: 'api',
    requestId: `req_${id}`,
    livemode: true,
    input: null,
    leaseId,
  };
}

const evaluation = {
  result: { intent: 'refund' },
  confidence: { intent: 0.9 },
  probabilities: {},
  recorded: {},
  action: 'continue',
  action_reason: { type: 'default' },
} as unknown as Evaluation;
const metrics = { latency_ms: 10, input_tokens: 1, output_tokens: 1, estimated_cost_usd: 0 };

describe('the answers the ledger settles by', () => {
  it('name the decision of every recorded execution, so that what the sweeper bills is booked under it', async () => {
    await recorder.recordSuccess(base('exec_ok', 'dec_alpha'), evaluation, metrics, null, true);
    await recorder.recordError(base('exec_failed', 'dec_beta'), new ServiceError('ENGINE_TIMEOUT', 'The engine did not answer in time.'));
    await recorder.recordSuccess(base('exec_leased', 'dec_beta', LEASE), evaluation, metrics, null, true);

    expect(await query.outcomes({ workspaceId: WS, executionIds: ['exec_ok', 'exec_failed', 'exec_never'] })).toEqual({
      outcomes: { exec_ok: 'billable', exec_failed: 'not_billable', exec_never: 'unknown' },
      decisions: { exec_ok: 'dec_alpha', exec_failed: 'dec_beta' },
    });
    const from = new Date(Date.now() - 60_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    expect(await query.leaseExecutions({ workspaceId: WS, leaseId: LEASE, from, to })).toEqual({
      billable: ['exec_leased'],
      decisions: { exec_leased: 'dec_beta' },
    });
    // Another workspace's ids are not answered, nor their decisions.
    expect(await query.outcomes({ workspaceId: 'ws_other', executionIds: ['exec_ok'] })).toEqual({ outcomes: { exec_ok: 'unknown' }, decisions: {} });
  });
});

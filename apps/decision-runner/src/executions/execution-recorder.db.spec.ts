import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Evaluation } from '@ds/decision-schema';
import { decisionRunner } from '../main';
import { defined } from '../../../../test/e2e/support/api';
import { waitFor } from '../../../../test/e2e/support/cluster';
import { ExecutionBase, ExecutionRecorder } from './execution-recorder';
import { STORED_INPUT } from './execution.store';
import { ExecutionsQuery } from './executions.query';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { ExecutionStore } from './execution.store';

/** Group commit against a real PostgreSQL with the runner's own migrations. */

const database = useMigratedDatabase('runner_recorder', decisionRunner.database, 4);
let db: DataSource;
let recorder: ExecutionRecorder;

beforeAll(() => {
  db = database.dataSource;
  recorder = new ExecutionRecorder(db);
});

function base(workspaceId: string, n: number, input: object | null = null): ExecutionBase {
  return {
    id: `exe_${workspaceId}_${n}`,
    workspaceId,
    decisionId: 'dec_1',
    decisionSlug: 'triage',
    version: 3,
    source: 'api',
    requestId: `req_${n}`,
    livemode: n % 2 === 0,
    input,
  };
}

const evaluation: Evaluation = {
  result: { intent: 'refund', fraud: 0.25 },
  confidence: { intent: 0.9, fraud: 0.75 },
  scores: { urgency: 2.5 },
  probabilities: {},
  recorded: {},
  action: 'escalate',
  action_reason: { rule: 0, when: 'fraud > 0.2' },
} as unknown as Evaluation;

/** Executions of one workspace, and how many transactions wrote them (rows of one statement share its xmin). */
async function written(workspaceId: string): Promise<{ rows: number; transactions: number }> {
  const [counts] = (await db.query('SELECT count(*)::int AS rows, count(DISTINCT xmin::text)::int AS transactions FROM executions WHERE workspace_id = $1', [
    workspaceId,
  ])) as Array<{ rows: number; transactions: number }>;
  return defined(counts);
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('ExecutionRecorder', () => {
  it('writes hundreds of concurrent executions in a handful of INSERTs, every row present', async () => {
    const records = Array.from({ length: 600 }, (_, n) =>
      n % 3 === 0
        ? recorder.recordError(base('burst', n), new ServiceError('INVALID_STATE', `state ${n} is not valid`))
        : recorder.recordSuccess(base('burst', n), evaluation, { latency_ms: n }, null, true),
    );
    await Promise.all(records);
    // 600 rows recorded in one turn, at most 256 per statement.
    expect(await written('burst')).toEqual({ rows: 600, transactions: 3 });
  });

  it('accumulates the executions that arrive while an INSERT is in flight: never more INSERTs than waves of arrivals', async () => {
    const records: Array<Promise<void>> = [];
    const waves = 30;
    for (let wave = 0; wave < waves; wave += 1) {
      for (let n = 0; n < 20; n += 1) records.push(recorder.recordSuccess(base('waves', wave * 20 + n), evaluation, { latency_ms: 1 }, [], false));
      await nextTurn();
    }
    await Promise.all(records);
    const { rows, transactions } = await written('waves');
    expect(rows).toBe(600);
    expect(transactions).toBeLessThanOrEqual(waves);
  });

  it('stores each column as the single-row insert did: JSON values, SQL nulls, output left out when not stored', async () => {
    await recorder.recordSuccess(
      base('columns', 1, { state: { message: 'it says "hi" \\ there', amount: 120 } }),
      evaluation,
      { latency_ms: 7 },
      [{ id: 'hook' }],
      true,
      { composites: [], rules: [], decided_by: { type: 'default' }, action: 'escalate' },
    );
    await recorder.recordSuccess(base('columns', 2), evaluation, { latency_ms: 8 }, null, false);
    await recorder.recordError(base('columns', 3), new ServiceError('ENGINE_TIMEOUT', 'The engine did not answer in time.'));
    const rows = (await db.query(
      `SELECT id, status, livemode, version, result, confidence, scores, composites, action, action_reason, metrics, destinations, error, input, trace,
              result IS NULL AS result_is_sql_null
         FROM executions WHERE workspace_id = 'columns' ORDER BY seq`,
    )) as Array<Record<string, unknown>>;
    expect(rows).toEqual([
      {
        id: 'exe_columns_1',
        status: 'success',
        livemode: false,
        version: 3,
        result: { intent: 'refund', fraud: 0.25 },
        confidence: { intent: 0.9, fraud: 0.75 },
        scores: { urgency: 2.5 },
        composites: null,
        action: 'escalate',
        action_reason: { rule: 0, when: 'fraud > 0.2' },
        metrics: { latency_ms: 7 },
        destinations: [{ id: 'hook' }],
        error: null,
        input: { state: { message: 'it says "hi" \\ there', amount: 120 } },
        trace: { composites: [], rules: [], decided_by: { type: 'default' }, action: 'escalate' },
        result_is_sql_null: false,
      },
      {
        id: 'exe_columns_2',
        status: 'success',
        livemode: true,
        version: 3,
        result: null,
        confidence: null,
        scores: null,
        composites: null,
        action: 'escalate',
        action_reason: { rule: 0, when: 'fraud > 0.2' },
        metrics: { latency_ms: 8 },
        destinations: null,
        error: null,
        input: null,
        trace: null,
        result_is_sql_null: true,
      },
      {
        id: 'exe_columns_3',
        status: 'error',
        livemode: false,
        version: 3,
        result: null,
        confidence: null,
        scores: null,
        composites: null,
        action: null,
        action_reason: null,
        metrics: null,
        destinations: null,
        error: { code: 'ENGINE_TIMEOUT', message: 'The engine did not answer in time.' },
        input: null,
        trace: null,
        result_is_sql_null: true,
      },
    ]);
  });

  it('keeps the input in the order it was sent at every level, reads it back so, and falls back to the jsonb copy for rows without it', async () => {
    const state = {
      subject: 's',
      previous_tickets: [{ when: 'x', what: 'y' }],
      plan: 'pro',
      message: 'm',
      customer: { zip: '1', address: { street: 'a', city: 'b' } },
    };
    await recorder.recordSuccess({ ...base('ordered', 1, { state }), id: 'exec_ordered1' }, evaluation, { latency_ms: 1 }, null, true);
    const [row] = (await db.query(`SELECT input_json::text AS kept, input::text AS sorted FROM executions WHERE id = 'exec_ordered1'`)) as Array<{
      kept: string;
      sorted: string;
    }>;
    // One text, sent once: kept as sent in input_json; the jsonb copy reorders it (shorter keys first).
    expect(row!.kept).toBe(JSON.stringify({ state }));
    expect(JSON.stringify(JSON.parse(row!.sorted))).not.toBe(JSON.stringify({ state }));
    const reads = new ExecutionsQuery(new ExecutionStore(db));
    const read = await reads.input({ workspaceId: 'ordered', executionId: 'exec_ordered1' } as never);
    expect(JSON.stringify(read.state)).toBe(JSON.stringify(state));

    // A row the previous version wrote has only the jsonb copy: it is still read, in jsonb's order.
    await db.query(
      `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, input)
                    VALUES ('exe_ordered_2', 'ordered', 'dec_1', 'triage', 3, 'api', 'success', 'req_2', true, $1::jsonb)`,
      [JSON.stringify({ state })],
    );
    const [older] = (await db.query(`SELECT ${STORED_INPUT} AS input FROM executions WHERE id = 'exe_ordered_2'`)) as Array<{ input: { state: unknown } }>;
    expect(older!.input.state).toEqual(state);
  });

  it('answers a record only once its row is committed, so a run cannot answer before its execution exists', async () => {
    const blocker = new Client({ connectionString: (db.options as { url: string }).url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      // Blocks every INSERT into executions until this transaction ends.
      await blocker.query('LOCK TABLE decision_runner.executions IN EXCLUSIVE MODE');
      let settled = false;
      const recorded = recorder.recordSuccess(base('blocked', 1), evaluation, { latency_ms: 1 }, null, true).then(() => (settled = true));
      await waitFor(
        async () => {
          const [waiting] = (await db.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO executions%'`,
          )) as Array<{ n: number }>;
          // count(*) without GROUP BY answers exactly one row.
          return waiting!.n === 1;
        },
        10_000,
        'the INSERT to wait on the lock',
      );
      expect(settled).toBe(false);
      await blocker.query('COMMIT');
      await recorded;
      expect(await written('blocked')).toEqual({ rows: 1, transactions: 1 });
    } finally {
      await blocker.end();
    }
  });

  it('fails every execution of an INSERT that fails, writes none of them, and writes the next batch', async () => {
    await recorder.recordSuccess(base('failing', 0), evaluation, { latency_ms: 1 }, null, true);
    // The same id again makes the whole statement fail on the primary key.
    const batch = [0, 1, 2, 3].map((n) => recorder.recordSuccess(base('failing', n), evaluation, { latency_ms: 1 }, null, true));
    const outcomes = await Promise.allSettled(batch);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    expect(outcomes.map((outcome) => (outcome as PromiseRejectedResult).reason.code)).toEqual(['23505', '23505', '23505', '23505']);
    expect((await written('failing')).rows).toBe(1);

    await recorder.recordSuccess(base('failing', 9), evaluation, { latency_ms: 1 }, null, true);
    expect((await written('failing')).rows).toBe(2);
  });
});

import { DataSource } from 'typeorm';
import { EXECUTIONS_COUNT_CAP, ListExecutionsRequest } from '@ds/contracts';
import { decisionRunner } from '../main';
import { ExecutionsQuery } from './executions.query';
import { useMigratedDatabase } from '../../../../test/support/service-database';
import { ExecutionStore } from './execution.store';

/** The executions lists' filters and bounded count, against a real PostgreSQL with rows of every source. */
const database = useMigratedDatabase('runner_explorer', decisionRunner.database, 2);
let db: DataSource;
let executions: ExecutionsQuery;

interface Seed {
  id: string;
  source: string;
  livemode: boolean;
  version?: number;
  status?: 'success' | 'error';
  action?: string | null;
  reason?: object | null;
  error?: object | null;
  slug?: string;
}

async function seed(workspaceId: string, rows: Seed[]): Promise<void> {
  for (const row of rows) {
    await db.query(
      `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, action, action_reason, error)
       VALUES ($1, $2, 'dec_x', $3, $4, $5, $6, 'req_x', $7, $8, $9, $10)`,
      [
        row.id,
        workspaceId,
        row.slug ?? 'triage',
        row.version ?? 1,
        row.source,
        row.status ?? 'success',
        row.livemode,
        row.action === undefined ? 'continue' : row.action,
        row.reason === undefined ? JSON.stringify({ type: 'default' }) : row.reason === null ? null : JSON.stringify(row.reason),
        row.error ? JSON.stringify(row.error) : null,
      ],
    );
  }
}

function request(workspaceId: string, filters: Partial<ListExecutionsRequest> = {}): ListExecutionsRequest {
  return { workspaceId, limit: 100, cursor: null, decision: null, status: null, includeTotal: true, ...filters };
}

async function ids(filters: Partial<ListExecutionsRequest>, workspaceId = 'ws_mixed'): Promise<string[]> {
  const reply = await executions.list(request(workspaceId, filters));
  expect(reply.total_count).toBe(reply.data.length);
  return reply.data.map((row) => row.id as string);
}

beforeAll(async () => {
  db = database.dataSource;
  executions = new ExecutionsQuery(new ExecutionStore(db));
  await seed('ws_mixed', [
    { id: 'exe_api_live', source: 'api', livemode: true, action: 'block', reason: { type: 'policy', rule: 0 } },
    { id: 'exe_hook_live', source: 'webhook', livemode: true, version: 2 },
    { id: 'exe_mcp_live', source: 'mcp', livemode: true, status: 'error', action: null, reason: null, error: { code: 'INVALID_STATE', message: 'no' } },
    { id: 'exe_api_test', source: 'api', livemode: false, action: 'escalate', reason: { type: 'low_confidence', question: 'q' } },
    { id: 'exe_playground', source: 'playground', livemode: false, version: 0 },
    { id: 'exe_replay', source: 'replay', livemode: false, action: 'block', reason: { type: 'policy', rule: 0 } },
    { id: 'exe_shadow', source: 'shadow', livemode: true, version: 3 },
    { id: 'exe_fallback', source: 'api', livemode: true, action: 'fallback', reason: { type: 'engine_error', code: 'ENGINE_TIMEOUT' } },
    { id: 'exe_other_decision', source: 'api', livemode: true, slug: 'other' },
  ]);
  await seed('ws_other', [{ id: 'exe_elsewhere', source: 'api', livemode: true }]);
});

describe('executions list filters', () => {
  it('lists every source without a source filter, newest first, and only the workspace own', async () => {
    expect(await ids({})).toEqual([
      'exe_other_decision',
      'exe_fallback',
      'exe_shadow',
      'exe_replay',
      'exe_playground',
      'exe_api_test',
      'exe_mcp_live',
      'exe_hook_live',
      'exe_api_live',
    ]);
  });

  it('reads live as the API, secret-URL and agent runs of live keys, test as those of test keys', async () => {
    expect(await ids({ sources: ['live'] })).toEqual(['exe_other_decision', 'exe_fallback', 'exe_mcp_live', 'exe_hook_live', 'exe_api_live']);
    expect(await ids({ sources: ['test'] })).toEqual(['exe_api_test']);
  });

  it('keeps playground, replay and shadow runs to their own groups, and takes several groups at once', async () => {
    expect(await ids({ sources: ['playground'] })).toEqual(['exe_playground']);
    expect(await ids({ sources: ['replay'] })).toEqual(['exe_replay']);
    // A shadow run of a live call keeps the call's livemode, and is still a shadow run.
    expect(await ids({ sources: ['shadow'] })).toEqual(['exe_shadow']);
    expect(await ids({ sources: ['replay', 'shadow'] })).toEqual(['exe_shadow', 'exe_replay']);
  });

  it('narrows by decision, version, action, reason, status and error code, together with the source', async () => {
    expect(await ids({ sources: ['live'], decision: 'other' })).toEqual(['exe_other_decision']);
    expect(await ids({ version: 2 })).toEqual(['exe_hook_live']);
    expect(await ids({ action: 'block' })).toEqual(['exe_replay', 'exe_api_live']);
    expect(await ids({ action: 'block', sources: ['live'] })).toEqual(['exe_api_live']);
    expect(await ids({ reason: 'low_confidence' })).toEqual(['exe_api_test']);
    expect(await ids({ status: 'error' })).toEqual(['exe_mcp_live']);
    expect(await ids({ errorCode: 'INVALID_STATE' })).toEqual(['exe_mcp_live']);
    // An engine-error fallback answered 200: its code is the engine error it stood in for.
    expect(await ids({ errorCode: 'ENGINE_TIMEOUT' })).toEqual(['exe_fallback']);
    expect(await ids({ errorCode: 'ENGINE_ERROR' })).toEqual([]);
  });

  it('counts what matches whatever the page, and leaves the count out unless asked', async () => {
    const first = await executions.list({ ...request('ws_mixed', { sources: ['live'] }), limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.total_count).toBe(5);
    expect(first.total_capped).toBe(false);
    const next = await executions.list({ ...request('ws_mixed', { sources: ['live'] }), limit: 2, cursor: first.next_cursor });
    expect(next.total_count).toBe(5);
    const plain = await executions.list({ ...request('ws_mixed'), includeTotal: false });
    expect(plain).not.toHaveProperty('total_count');
  });
});

describe('executions list on a seeded table', () => {
  const BUSY = 'ws_busy';

  beforeAll(async () => {
    // A busy workspace (replays and playground runs among its live runs) beside many quieter ones.
    await db.query(
      `INSERT INTO executions (id, workspace_id, decision_id, decision_slug, version, source, status, request_id, livemode, action, action_reason)
       SELECT 'exe_b' || n, CASE WHEN n % 4 = 0 THEN 'ws_busy' ELSE 'ws_q' || (n % 400) END, 'dec_b', 'bulk', 1,
              (ARRAY['api', 'api', 'webhook', 'replay', 'playground', 'shadow'])[1 + n % 6], 'success', 'req_b', n % 7 <> 0,
              (ARRAY['continue', 'block', 'escalate'])[1 + n % 3],
              CASE WHEN n % 200 = 8 THEN '{"type":"engine_error","code":"ENGINE_TIMEOUT"}'::jsonb ELSE '{"type":"default"}'::jsonb END
         FROM generate_series(1, 120000) AS n`,
    );
    await db.query('ANALYZE executions');
  });

  it('stops counting one past the cap and says the total is capped', async () => {
    const reply = await executions.list({ ...request(BUSY), limit: 1 });
    expect(reply.total_count).toBe(EXECUTIONS_COUNT_CAP);
    expect(reply.total_capped).toBe(true);
  });

  it('reads a source group page and its count through the source-group indexes', async () => {
    const plan = async ([sql, parameters]: [string, unknown[]]) =>
      ((await db.query(`EXPLAIN ${sql}`, parameters)) as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
    const live = request(BUSY, { sources: ['live'] });
    expect(await plan(executions.pageQuery(live).getQueryAndParameters())).toContain('executions_workspace_group_seq');
    expect(await plan(executions.countStatement(live))).toContain('executions_workspace_group_seq');
    const oneDecision = request(BUSY, { sources: ['replay'], decision: 'bulk', action: 'block' });
    expect(await plan(executions.pageQuery(oneDecision).getQueryAndParameters())).toMatch(/executions_(decision|workspace)_group_seq/);
    // Runs with an error code are few: their own partial index finds them without reading the others.
    const failed = request(BUSY, { sources: ['live'], errorCode: 'ENGINE_TIMEOUT' });
    expect(await plan(executions.pageQuery(failed).getQueryAndParameters())).toContain('executions_workspace_error_seq');
    expect(await plan(executions.countStatement(failed))).toContain('executions_workspace_error_seq');
  });
});

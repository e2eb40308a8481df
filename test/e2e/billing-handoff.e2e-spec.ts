import { Client } from 'pg';
import { SUBJECTS } from '@ds/contracts';
import { call, deployedDecision, newWorkspace, runDecision, scriptEngine, triageSchema, uniqueMarker } from './support/api';
import { waitFor } from './support/cluster';
import { ServiceRpc } from './support/engine-rpc';

describe('the runner’s side of the billing hand-off', () => {
  const rpc = new ServiceRpc();
  afterAll(() => rpc.close());

  it('tells the ledger which executions were fresh 200s, which were not, and which never happened', async () => {
    const [ws, other] = await Promise.all([newWorkspace(), newWorkspace()]);
    const marker = uniqueMarker();
    await deployedDecision(ws, 'outcomes', triageSchema(marker, { settings: { onEngineError: 'fallback' } }));
    const success = await runDecision(ws, 'outcomes', { message: 'fine' });
    await scriptEngine(marker, [{ status: 401 }]);
    const fallback = await runDecision(ws, 'outcomes', { message: 'engine down' });
    expect(fallback.body.action_reason.type).toBe('engine_error');
    expect((await runDecision(ws, 'outcomes', { amount: 1 })).status).toBe(422);
    const failed = (await call('GET', '/v1/executions?status=error', { token: ws.apiKey })).body.data[0].id;
    await deployedDecision(other, 'elsewhere', triageSchema());
    const foreign = (await runDecision(other, 'elsewhere', { message: 'hi' })).body.execution_id;

    const reply = await rpc.ok(SUBJECTS.runner.executionOutcomes, {
      workspaceId: ws.workspaceId,
      executionIds: [success.body.execution_id, fallback.body.execution_id, failed, 'exec_neverrecorded000000', foreign],
    });
    expect(reply.outcomes).toEqual({
      [success.body.execution_id]: 'billable',
      [fallback.body.execution_id]: 'not_billable',
      [failed]: 'not_billable',
      exec_neverrecorded000000: 'unknown',
      [foreign]: 'unknown',
    });
  });

  it('records the budget lease each run took its decision from, and names a lease’s billable runs to the ledger', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'leased', triageSchema(marker, { settings: { onEngineError: 'fallback' } }));
    // The first run asks for a lease in the background; the ones after it take their decisions from it.
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await runDecision(ws, 'leased', { message: `run ${i}` })).body.execution_id);
    await scriptEngine(marker, [{ status: 401 }]);
    const fallback = await runDecision(ws, 'leased', { message: 'engine down' });
    expect(fallback.body.action_reason.type).toBe('engine_error');

    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await db.connect();
    const { rows } = await db.query('SELECT id, lease_id FROM decision_runner.executions WHERE workspace_id = $1', [ws.workspaceId]);
    // Once the runs stop, the ledger's sweeper ends every lease past its time (its untaken rest freed): none stays open.
    await waitFor(
      async () => (await db.query(`SELECT 1 FROM billing_ledger.leases WHERE workspace_id = $1 AND state = 'open'`, [ws.workspaceId])).rowCount === 0,
      20_000,
      'the sweeper to reclaim the leases past their time',
    ).finally(() => db.end());
    const leaseOf = new Map(rows.map((row: { id: string; lease_id: string | null }) => [row.id, row.lease_id]));
    const leaseId = leaseOf.get(ids[5]!);
    expect(leaseId).toMatch(/^lease_/);
    const reply = await rpc.ok(SUBJECTS.runner.leaseExecutions, {
      workspaceId: ws.workspaceId,
      leaseId,
      from: new Date(Date.now() - 60_000).toISOString(),
      to: new Date(Date.now() + 60_000).toISOString(),
    });
    const expected = ids.filter((id) => leaseOf.get(id) === leaseId);
    expect(reply.billable.sort()).toEqual(expected.sort());
    // The engine-error fallback is not billed, whichever lease it took from.
    expect(reply.billable).not.toContain(fallback.body.execution_id);
    // Another workspace's runs are never named.
    expect(
      (
        await rpc.ok(SUBJECTS.runner.leaseExecutions, {
          workspaceId: (await newWorkspace()).workspaceId,
          leaseId,
          from: new Date(0).toISOString(),
          to: new Date(Date.now() + 60_000).toISOString(),
        })
      ).billable,
    ).toEqual([]);
  });
});

import { SUBJECTS } from '@ds/contracts';
import { call, deployedDecision, newWorkspace, runDecision, scriptEngine, triageSchema, uniqueMarker } from './support/api';
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
});

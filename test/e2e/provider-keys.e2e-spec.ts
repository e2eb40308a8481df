import { call, deployedDecision, expectError, newWorkspace, runDecision, signUp, simulatorUrl, triageSchema, uniqueMarker } from './support/api';

async function authorizationsSeen(marker: string): Promise<string[]> {
  const reply = await call('GET', `/_sim/requests?match=${encodeURIComponent(marker)}`, {}, simulatorUrl());
  return reply.body.data.map((request: { headers: Record<string, string> }) => request.headers.authorization);
}

describe('a workspace’s own provider key', () => {
  it('is saved by Admins only, shown by its last four characters, and used for the workspace’s runs', async () => {
    const ws = await newWorkspace();
    const base = `/app/v1/workspaces/${ws.workspaceId}`;
    expectError(await call('GET', `${base}/provider-key`, { token: ws.session }), 404, 'NOT_FOUND');

    const member = await signUp();
    await call('POST', `${base}/members`, { token: ws.session, body: { email: member.email, role: 'member' } });
    expectError(
      await call('PUT', `${base}/provider-key`, { token: member.session, body: { provider: 'openai', api_key: 'sk-workspace-0001' } }),
      403,
      'FORBIDDEN',
    );
    expectError(await call('PUT', `${base}/provider-key`, { token: ws.session, body: { provider: 'openai', api_key: 'short' } }), 400, 'INVALID_REQUEST');

    const saved = await call('PUT', `${base}/provider-key`, { token: ws.session, body: { provider: 'openai', api_key: 'sk-workspace-0001' } });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ provider: 'openai', last4: '0001' });
    expect(saved.text).not.toContain('sk-workspace');
    expect((await call('GET', `${base}/engine-settings`, { token: ws.session })).body).toEqual({
      use_own_key: true,
      provider_key: { provider: 'openai', last4: '0001' },
      llm_provider: 'openai',
    });

    const marker = uniqueMarker();
    await deployedDecision(ws, 'own-key', triageSchema(marker));
    expect((await runDecision(ws, 'own-key', { message: 'hi' })).status).toBe(200);
    expect(await authorizationsSeen(marker)).toEqual(['Bearer sk-workspace-0001']);

    // Without its key, a workspace that chose its own key is not moved onto the service's key.
    expect((await call('DELETE', `${base}/provider-key`, { token: ws.session })).status).toBe(204);
    expectError(await runDecision(ws, 'own-key', { message: 'hi' }), 424, 'ENGINE_NOT_CONFIGURED');
    const shared = await call('PUT', `${base}/engine-settings`, { token: ws.session, body: { use_own_key: false } });
    expect(shared.body.use_own_key).toBe(false);
    expect((await runDecision(ws, 'own-key', { message: 'hi' })).status).toBe(200);
    expect(await authorizationsSeen(marker)).toEqual(['Bearer sk-workspace-0001', 'Bearer sim-key']);
  });
});

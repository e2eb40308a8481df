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
      default_engine: null,
      service_default_engine: 'llm',
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

describe('a workspace’s default engine', () => {
  it('runs the decisions that pin no engine, gives way to one that does, and goes back to the service’s default when cleared', async () => {
    const ws = await newWorkspace();
    const base = `/app/v1/workspaces/${ws.workspaceId}`;
    const marker = uniqueMarker();
    await deployedDecision(ws, 'unpinned', triageSchema(marker));
    await deployedDecision(ws, 'pinned', triageSchema(marker, { settings: { engine: 'llm' } }));
    const engineOf = async (slug: string) => {
      const reply = await runDecision(ws, slug, { message: 'hi' });
      expect(reply.status).toBe(200);
      return [reply.body.metrics.engine, reply.body.metrics.model];
    };
    expect(await engineOf('unpinned')).toEqual(['llm', 'sim-standard-2026-11-01']);

    const member = await signUp();
    await call('POST', `${base}/members`, { token: ws.session, body: { email: member.email, role: 'member' } });
    expectError(await call('PUT', `${base}/engine-settings`, { token: member.session, body: { default_engine: 'checkpoint' } }), 403, 'FORBIDDEN');
    for (const body of [{ default_engine: 'gpt' }, { default_engine: 1 }, {}, { use_own_key: 'yes', default_engine: 'llm' }]) {
      expectError(await call('PUT', `${base}/engine-settings`, { token: ws.session, body }), 400, 'INVALID_REQUEST');
    }

    const chosen = await call('PUT', `${base}/engine-settings`, { token: ws.session, body: { default_engine: 'checkpoint' } });
    expect(chosen.body).toMatchObject({ use_own_key: false, default_engine: 'checkpoint', service_default_engine: 'llm' });
    expect(await engineOf('unpinned')).toEqual(['checkpoint', 'ckpt-triage-7b']);
    expect(await engineOf('pinned')).toEqual(['llm', 'sim-standard-2026-11-01']);

    // Changing the key choice alone leaves the default engine as it is.
    expect((await call('PUT', `${base}/engine-settings`, { token: ws.session, body: { use_own_key: false } })).body.default_engine).toBe('checkpoint');

    const cleared = await call('PUT', `${base}/engine-settings`, { token: ws.session, body: { default_engine: null } });
    expect(cleared.body.default_engine).toBeNull();
    expect(await engineOf('unpinned')).toEqual(['llm', 'sim-standard-2026-11-01']);
  });
});

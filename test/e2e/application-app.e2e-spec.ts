import { call, createDecision, deploy, expectError, newWorkspace, signUp, triageSchema, Workspace } from './support/api';

/** The application endpoints the web app reads and the playground it runs, over plain HTTP. */
let owner: Workspace;

beforeAll(async () => {
  owner = await newWorkspace();
});

const app = (path: string) => `/app/v1/workspaces/${owner.workspaceId}${path}`;

describe('workspaces and decisions for the application', () => {
  it("lists the user's workspaces with the user's role in each, and describes one with its billing account", async () => {
    const list = await call('GET', '/app/v1/workspaces', { token: owner.session });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([{ id: owner.workspaceId, name: 'Test workspace', role: 'owner' }]);
    const one = await call('GET', app(''), { token: owner.session });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: owner.workspaceId, plan: 'genesis', account: { plan: { name: 'genesis' } } });
    expect(one.body.account.usage).toHaveProperty('used');
  });

  it('reads a decision by id or by slug: draft, revision, versions and the active schema', async () => {
    const { id } = await createDecision(owner, 'app-details', triageSchema());
    const byId = await call('GET', app(`/decisions/${id}`), { token: owner.session });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id, slug: 'app-details', status: 'draft', revision: 1, active_version: null, active_schema: null, versions: [] });
    expect(byId.body.draft.questions.map((q: { key: string }) => q.key)).toEqual(['intent', 'urgency', 'fraud']);

    await deploy(owner, id);
    const bySlug = await call('GET', app('/decisions/app-details'), { token: owner.session });
    expect(bySlug.body).toMatchObject({ id, status: 'deployed', active_version: 1, versions: [1] });
    expect(bySlug.body.active_schema).toEqual(bySlug.body.draft);

    expectError(await call('GET', app('/decisions/dec_aaaaaaaaaaaaaaaaaaaa'), { token: owner.session }), 404, 'NOT_FOUND');
    expectError(await call('GET', app('/decisions/no-such-slug'), { token: owner.session }), 404, 'NOT_FOUND');
    const list = await call('GET', app('/decisions'), { token: owner.session });
    expect(list.body.data.map((d: { slug: string }) => d.slug)).toContain('app-details');
  });
});

describe('the playground', () => {
  it('runs the draft and a version, answers calling destinations as previews, records the runs apart and bills none', async () => {
    const ws = await newWorkspace();
    const schema = triageSchema('Playground marker.', {
      destinations: [
        { key: 'notify', type: 'webhook', url: 'https://hooks.example.com/decisions', params: { intent: { from: 'result.intent' } } },
        { key: 'answer', type: 'reply', text: 'We read your message.' },
      ],
    });
    const created = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions`, {
      token: ws.session,
      body: { slug: 'pg', name: 'Playground', schema },
    });
    const id = created.body.id as string;
    const path = `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/playground`;

    const draft = await call('POST', path, { token: ws.session, body: { state: { message: 'Refund please' } } });
    expect(draft.status).toBe(200);
    expect(draft.body.version).toBeNull();
    expect(Object.keys(draft.body.result).sort()).toEqual(['fraud', 'intent', 'urgency']);
    expect(typeof draft.body.action).toBe('string');
    expect(draft.body.destinations).toEqual([
      {
        key: 'notify',
        type: 'webhook',
        status: 'preview',
        request: expect.objectContaining({ url: 'https://hooks.example.com/decisions', params: { intent: draft.body.result.intent } }),
      },
      { key: 'answer', type: 'reply', text: 'We read your message.' },
    ]);

    expectError(await call('POST', path, { token: ws.session, body: { version: 1, state: { message: 'x' } } }), 404, 'NOT_FOUND');
    await deploy(ws, id);
    const version = await call('POST', path, { token: ws.session, body: { version: 1, state: { message: 'Refund please' } } });
    expect(version.status).toBe(200);
    expect(version.body.version).toBe(1);
    expectError(await call('POST', path, { token: ws.session, body: { version: 'one', state: {} } }), 400, 'INVALID_REQUEST');
    expectError(await call('POST', path, { token: ws.session, body: { state: { amount: 3 } } }), 422, 'INVALID_STATE');

    const executions = await waitFor(async () => {
      const reply = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions?decision=pg&source=playground`, { token: ws.session });
      return reply.body.data.length >= 2 ? reply.body.data : null;
    });
    expect(executions.map((e: { source: string; livemode: boolean; version: number }) => [e.source, e.livemode, e.version])).toEqual([
      ['playground', false, 1],
      ['playground', false, 0],
    ]);
    // The log keeps a preview's params, never the destination's configuration: API keys and MCP clients read it.
    const logged = await call('GET', '/v1/executions?limit=5', { token: ws.apiKey });
    for (const execution of logged.body.data) {
      expect(execution.destinations[0]).toEqual({ key: 'notify', type: 'webhook', status: 'preview', request: { params: { intent: expect.any(String) } } });
    }
    expect(logged.text).not.toContain('hooks.example.com');
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.body.usage.used + me.body.usage.reserved).toBe(0);
  });

  it('allows 30 runs a minute per workspace, then answers 429 with Retry-After', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, 'pg-limit', triageSchema());
    const path = `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/playground`;
    for (let run = 0; run < 30; run++) {
      const reply = await call('POST', path, { token: ws.session, body: { state: { message: `run ${run}` } } });
      expect({ run, status: reply.status }).toEqual({ run, status: 200 });
    }
    const refused = await call('POST', path, { token: ws.session, body: { state: { message: 'one more' } } });
    expectError(refused, 429, 'RATE_LIMITED');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Spelled as on every other 429 the gateway answers.
    expect(refused.body.error.details).toEqual({ retryAfter });
  });

  it('is for members: a viewer may read the decision but not run it', async () => {
    const { id } = await createDecision(owner, 'pg-roles', triageSchema());
    const viewer = await signUp();
    expect((await call('POST', app('/members'), { token: owner.session, body: { email: viewer.email, role: 'viewer' } })).status).toBe(201);
    expect((await call('GET', app(`/decisions/${id}`), { token: viewer.session })).status).toBe(200);
    expectError(await call('POST', app(`/decisions/${id}/playground`), { token: viewer.session, body: { state: { message: 'x' } } }), 403, 'FORBIDDEN');
  });
});

describe('members', () => {
  it('changes a role and removes a member; the owner is neither changed nor removed', async () => {
    const ws = await newWorkspace();
    const members = `/app/v1/workspaces/${ws.workspaceId}/members`;
    const colleague = await signUp();
    await call('POST', members, { token: ws.session, body: { email: colleague.email, role: 'admin' } });
    const list = await call('GET', members, { token: ws.session });
    const ownerId = list.body.data.find((m: { role: string }) => m.role === 'owner').user_id;

    expect((await call('PUT', `${members}/${colleague.userId}`, { token: ws.session, body: { role: 'viewer' } })).body).toEqual({
      user_id: colleague.userId,
      role: 'viewer',
    });
    expectError(await call('PUT', `${members}/${ownerId}`, { token: colleague.session, body: { role: 'viewer' } }), 403, 'FORBIDDEN');
    expectError(await call('PUT', `${members}/${ownerId}`, { token: ws.session, body: { role: 'viewer' } }), 409, 'CONFLICT');
    expectError(await call('PUT', `${members}/${colleague.userId}`, { token: ws.session, body: { role: 'owner' } }), 400, 'INVALID_REQUEST');
    expectError(await call('DELETE', `${members}/${ownerId}`, { token: ws.session }), 409, 'CONFLICT');

    expect((await call('DELETE', `${members}/${colleague.userId}`, { token: ws.session })).status).toBe(204);
    expectError(await call('DELETE', `${members}/${colleague.userId}`, { token: ws.session }), 404, 'NOT_FOUND');
    expectError(await call('GET', members, { token: colleague.session }), 403, 'FORBIDDEN');
  });
});

async function waitFor<T>(probe: () => Promise<T | null>): Promise<T> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const value = await probe();
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('never happened');
}

describe('execution-log retention', () => {
  it("is the plan's until an admin shortens it; a member reads it, only an admin changes it", async () => {
    const ws = await newWorkspace();
    const path = `/app/v1/workspaces/${ws.workspaceId}/execution-retention`;
    const initial = await call('GET', path, { token: ws.session });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ days: null, plan_days: 7, effective_days: 7 });

    const shortened = await call('PUT', path, { token: ws.session, body: { days: 2 } });
    expect(shortened.status).toBe(200);
    expect(shortened.body).toEqual({ days: 2, plan_days: 7, effective_days: 2 });
    expect((await call('GET', path, { token: ws.session })).body).toEqual({ days: 2, plan_days: 7, effective_days: 2 });

    const viewer = await signUp();
    expect(
      (await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: viewer.email, role: 'viewer' } })).status,
    ).toBe(201);
    expect((await call('GET', path, { token: viewer.session })).body).toEqual({ days: 2, plan_days: 7, effective_days: 2 });
    expectError(await call('PUT', path, { token: viewer.session, body: { days: 1 } }), 403, 'FORBIDDEN');

    const reset = await call('PUT', path, { token: ws.session, body: { days: null } });
    expect(reset.body).toEqual({ days: null, plan_days: 7, effective_days: 7 });
  });

  it("refuses more than the plan's, or anything but whole days or null, with the field named", async () => {
    const ws = await newWorkspace();
    const path = `/app/v1/workspaces/${ws.workspaceId}/execution-retention`;
    for (const body of [{ days: 8 }, { days: 0 }, { days: 1.5 }, { days: '3' }, {}]) {
      const reply = await call('PUT', path, { token: ws.session, body });
      expectError(reply, 400, 'INVALID_REQUEST');
      expect(reply.body.error.details).toEqual([expect.objectContaining({ path: 'days' })]);
    }
    expect((await call('GET', path, { token: ws.session })).body).toEqual({ days: null, plan_days: 7, effective_days: 7 });
    expect((await call('GET', path, { token: ws.apiKey })).status).toBe(403);
  });
});

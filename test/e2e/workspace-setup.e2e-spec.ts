import { Client } from 'pg';
import { call, createDecision, expectError, newWorkspace, Reply, runDecision, signUp, triageSchema, Workspace } from './support/api';

/**
 * Workspace set-up as the application API describes it: who may do what (Owner and Admin unless said
 * otherwise), the exact replies, and the 401 of an expired session.
 */
let db: Client;

beforeAll(async () => {
  db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
});

async function join(ws: Workspace, role: 'admin' | 'member' | 'viewer'): Promise<string> {
  const user = await signUp();
  const added = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: user.email, role } });
  expect(added.status).toBe(201);
  return user.session;
}

describe('the admin-only set-up routes', () => {
  let ws: Workspace;
  let decisionId: string;
  const sessions: Record<'admin' | 'member' | 'viewer', string> = { admin: '', member: '', viewer: '' };

  beforeAll(async () => {
    ws = await newWorkspace();
    decisionId = (await createDecision(ws, 'setup-roles', triageSchema())).id;
    for (const role of ['admin', 'member', 'viewer'] as const) sessions[role] = await join(ws, role);
    // The secret URL is on, so that rotating it has something to rotate.
    expect((await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/hook`, { token: sessions.member })).status).toBe(201);
  });

  /** Each route with the status an admin gets; members and viewers get 403 FORBIDDEN and change nothing. */
  const routes: Array<[string, string, () => unknown, number]> = [
    ['POST', 'api-keys', () => ({ name: 'by-role', mode: 'live' }), 201],
    ['GET', 'api-keys', () => undefined, 200],
    ['DELETE', 'api-keys/:key', () => undefined, 204],
    ['PUT', 'decisions/:dec/endpoint', () => ({ enabled: false }), 200],
    ['POST', 'decisions/:dec/deploy', () => undefined, 201],
    ['POST', 'decisions/:dec/hook/rotate', () => undefined, 200],
    ['POST', 'decisions/:dec/hook/secret', () => undefined, 201],
    ['DELETE', 'decisions/:dec/hook/secret', () => undefined, 204],
    ['POST', 'signing-secret/rotate', () => undefined, 201],
  ];

  const path = (route: string) => `/app/v1/workspaces/${ws.workspaceId}/${route.replace(':dec', decisionId).replace(':key', ws.keyId)}`;

  it.each(routes)('%s %s is refused to a member and a viewer', async (method, route, body) => {
    for (const role of ['member', 'viewer'] as const) {
      expectError(await call(method, path(route), { token: sessions[role], body: body() }), 403, 'FORBIDDEN');
    }
  });

  it('lets an admin who is not the owner do each of them', async () => {
    for (const [method, route, body, status] of routes) {
      const reply: Reply = await call(method, path(route), { token: sessions.admin, body: body() });
      expect({ route: `${method} ${route}`, status: reply.status }).toEqual({ route: `${method} ${route}`, status });
    }
    // The key revoked by the admin no longer works; the one the admin made does.
    expectError(await runDecision(ws, 'setup-roles', { message: 'hi' }), 401, 'INVALID_API_KEY');
  });
});

describe('replies of workspace set-up', () => {
  it('creates a workspace as { id, name, plan }, its creator the owner', async () => {
    const user = await signUp();
    const created = await call('POST', '/app/v1/workspaces', { token: user.session, body: { name: 'Replies' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: 'Replies', plan: 'genesis' });
    const members = await call('GET', `/app/v1/workspaces/${created.body.id}/members`, { token: user.session });
    expect(members.body.data).toEqual([expect.objectContaining({ user_id: expect.any(String), email: user.email, role: 'owner' })]);
  });

  it('shows a new key once as { id, name, mode, key }, then lists it with its last four characters, when it was made and last used', async () => {
    const ws = await newWorkspace('test');
    const created = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session, body: { name: 'listed', mode: 'test' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^key_/), name: 'listed', mode: 'test', key: expect.stringMatching(/^svc_test_/) });

    const listed = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session });
    const entry = listed.body.data.find((key: { id: string }) => key.id === created.body.id);
    expect(entry).toEqual({
      id: created.body.id,
      name: 'listed',
      mode: 'test',
      hint: `svc_test_…${created.body.key.slice(-4)}`,
      created_at: expect.any(String),
      last_used_at: null,
    });
    expect(Number.isNaN(Date.parse(entry.created_at))).toBe(false);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);

    expect((await call('GET', '/v1/me', { token: created.body.key })).status).toBe(200);
    const used = (await call('GET', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session })).body.data.find(
      (key: { id: string }) => key.id === created.body.id,
    );
    expect(Date.parse(used.last_used_at)).toBeGreaterThanOrEqual(Date.parse(entry.created_at));
  });
});

describe('a stale or broken schema', () => {
  it('answers 422 INVALID_SCHEMA to a draft that does not validate, and keeps the saved one', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, 'bad-draft', triageSchema());
    const before = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}`, { token: ws.session });
    const saved = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/draft`, {
      token: ws.session,
      body: { schema: { ...triageSchema(), questions: [] }, revision: before.body.revision },
    });
    expectError(saved, 422, 'INVALID_SCHEMA');
    expect(saved.body.error.details.length).toBeGreaterThan(0);
    const after = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}`, { token: ws.session });
    expect(after.body.revision).toBe(before.body.revision);
  });

  it('re-validates the draft on deploy: a stored draft the rules no longer accept is 422 INVALID_SCHEMA, and nothing is deployed', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, 'stale-draft', triageSchema());
    // A draft saved under older rules, which today's validation refuses.
    await db.query(`UPDATE decision_runner.decisions SET draft_schema = jsonb_set(draft_schema, '{questions}', '[]'::jsonb) WHERE id = $1`, [id]);
    expectError(await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/deploy`, { token: ws.session }), 422, 'INVALID_SCHEMA');
    expectError(await runDecision(ws, 'stale-draft', { message: 'hi' }), 409, 'DECISION_NOT_DEPLOYED');
  });
});

describe('sessions', () => {
  it('refuses an expired session with 401 UNAUTHORIZED', async () => {
    const user = await signUp();
    expect((await call('GET', '/app/v1/workspaces', { token: user.session })).status).toBe(200);
    await db.query(`UPDATE gateway.sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.userId]);
    expectError(await call('GET', '/app/v1/workspaces', { token: user.session }), 401, 'UNAUTHORIZED');
  });
});

describe('invitations', () => {
  it('are sent by admins, accepted by the invited e-mail with the link’s token, and revoked', async () => {
    const ws = await newWorkspace();
    const base = `/app/v1/workspaces/${ws.workspaceId}/invitations`;
    const invitee = await signUp();
    const member = await join(ws, 'member');
    expectError(await call('POST', base, { token: member, body: { email: invitee.email, role: 'viewer' } }), 403, 'FORBIDDEN');
    expectError(await call('GET', base, { token: member }), 403, 'FORBIDDEN');
    expectError(await call('POST', base, { token: ws.session, body: { email: 'nope', role: 'viewer' } }), 400, 'INVALID_REQUEST');
    expectError(await call('POST', base, { token: ws.session, body: { email: ws.email, role: 'viewer' } }), 409, 'CONFLICT');

    const sent = await call('POST', base, { token: ws.session, body: { email: invitee.email, role: 'member' } });
    expect(sent.status).toBe(201);
    expect(sent.body).toEqual({
      id: expect.stringMatching(/^inv_/),
      email: invitee.email,
      role: 'member',
      emailed: true,
      created_at: expect.any(String),
      expires_at: expect.any(String),
      token: expect.stringMatching(/^inv_tok_/),
      url: expect.stringMatching(/\/invitations\/accept\?token=inv_tok_/),
    });
    const listed = await call('GET', base, { token: ws.session });
    expect(listed.body.data.map((invitation: { id: string }) => invitation.id)).toEqual([sent.body.id]);
    expect(listed.text).not.toContain(sent.body.token);

    // Someone else holding the link is refused; the invited e-mail joins with the role.
    const stranger = await signUp();
    expectError(await call('POST', '/app/v1/invitations/accept', { token: stranger.session, body: { token: sent.body.token } }), 403, 'FORBIDDEN');
    expectError(await call('POST', '/app/v1/invitations/accept', { token: null, body: { token: sent.body.token } }), 401, 'UNAUTHORIZED');
    expectError(await call('POST', '/app/v1/invitations/accept', { token: ws.apiKey, body: { token: sent.body.token } }), 403, 'FORBIDDEN');
    const accepted = await call('POST', '/app/v1/invitations/accept', { token: invitee.session, body: { token: sent.body.token } });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ workspace: { id: ws.workspaceId, name: 'Test workspace' }, role: 'member' });
    const members = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: invitee.session });
    expect(members.body.data.find((entry: { email: string }) => entry.email === invitee.email)?.role).toBe('member');
    expectError(await call('POST', '/app/v1/invitations/accept', { token: invitee.session, body: { token: sent.body.token } }), 404, 'NOT_FOUND');

    // A revoked invitation's link stops working.
    const later = await signUp();
    const revoked = await call('POST', base, { token: ws.session, body: { email: later.email, role: 'viewer' } });
    expect((await call('DELETE', `${base}/${revoked.body.id}`, { token: ws.session })).status).toBe(204);
    expectError(await call('DELETE', `${base}/${revoked.body.id}`, { token: ws.session }), 404, 'NOT_FOUND');
    expectError(await call('POST', '/app/v1/invitations/accept', { token: later.session, body: { token: revoked.body.token } }), 404, 'NOT_FOUND');
  });

  it('answer 429 with Retry-After past 30 an hour for a workspace', async () => {
    const ws = await newWorkspace();
    const base = `/app/v1/workspaces/${ws.workspaceId}/invitations`;
    const admins = [ws.session, await join(ws, 'admin')];
    for (let i = 0; i < 30; i++) {
      const sent = await call('POST', base, { token: admins[i % 2], body: { email: `hourly-${i}-${ws.workspaceId}@example.com`, role: 'viewer' } });
      expect({ i, status: sent.status }).toEqual({ i, status: 201 });
    }
    const refused = await call('POST', base, { token: ws.session, body: { email: `hourly-late-${ws.workspaceId}@example.com`, role: 'viewer' } });
    expectError(refused, 429, 'RATE_LIMITED');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3_000);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
  });
});

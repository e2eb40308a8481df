import { call, expectError, signUp } from './support/api';

describe('owned workspaces per user', () => {
  it('the 11th POST /app/v1/workspaces is 409 CONFLICT, also when the creations race', async () => {
    const user = await signUp();
    const create = (i: number) => call('POST', '/app/v1/workspaces', { token: user.session, body: { name: `Workspace ${i}` } });
    const first = await Promise.all(Array.from({ length: 12 }, (_, i) => create(i)));
    expect(first.filter((reply) => reply.status === 201)).toHaveLength(10);
    const refused = first.filter((reply) => reply.status !== 201);
    expect(refused).toHaveLength(2);
    for (const reply of refused) expectError(reply, 409, 'CONFLICT');

    const eleventh = await create(99);
    expectError(eleventh, 409, 'CONFLICT');
    expect(eleventh.body.error.message).toContain('10 workspaces');

    // Another user is not affected by this one's count.
    const other = await signUp();
    expect((await call('POST', '/app/v1/workspaces', { token: other.session, body: { name: 'Mine' } })).status).toBe(201);
  });
});

describe('handing a workspace over and leaving it', () => {
  async function joined(ws: { workspaceId: string; session: string }, role: 'admin' | 'member' | 'viewer') {
    const user = await signUp();
    expect((await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: user.email, role } })).status).toBe(201);
    return user;
  }

  const roles = async (workspaceId: string, session: string) => {
    const listed = await call('GET', `/app/v1/workspaces/${workspaceId}/members`, { token: session });
    expect(listed.status).toBe(200);
    return Object.fromEntries((listed.body.data as Array<{ user_id: string; role: string }>).map((member) => [member.user_id, member.role]));
  };

  it('only the Owner transfers; the previous Owner stays as an Admin and the new one can hand it on', async () => {
    const owner = await signUp();
    const created = await call('POST', '/app/v1/workspaces', { token: owner.session, body: { name: 'Handover' } });
    const ws = { workspaceId: created.body.id as string, session: owner.session };
    const admin = await joined(ws, 'admin');
    const viewer = await joined(ws, 'viewer');
    const transfer = (session: string, userId: unknown) =>
      call('POST', `/app/v1/workspaces/${ws.workspaceId}/ownership`, { token: session, body: { user_id: userId } });

    expectError(await transfer(admin.session, admin.userId), 403, 'FORBIDDEN');
    expectError(await transfer(owner.session, 'usr_nobody'), 404, 'NOT_FOUND');
    expectError(await transfer(owner.session, owner.userId), 409, 'CONFLICT');
    expectError(await transfer(owner.session, undefined), 400, 'INVALID_REQUEST');

    const moved = await transfer(owner.session, viewer.userId);
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ owner: viewer.userId, previous_owner: owner.userId });
    expect(await roles(ws.workspaceId, owner.session)).toEqual({ [owner.userId]: 'admin', [admin.userId]: 'admin', [viewer.userId]: 'owner' });

    // Transferring is the Owner's alone: the previous Owner no longer may, the new one may.
    expectError(await transfer(owner.session, owner.userId), 403, 'FORBIDDEN');
    expect((await transfer(viewer.session, owner.userId)).status).toBe(200);
  });

  it('a member leaves and loses access; the Owner cannot leave without a transfer', async () => {
    const owner = await signUp();
    const created = await call('POST', '/app/v1/workspaces', { token: owner.session, body: { name: 'Leaving' } });
    const ws = { workspaceId: created.body.id as string, session: owner.session };
    const member = await joined(ws, 'member');

    expectError(await call('POST', `/app/v1/workspaces/${ws.workspaceId}/leave`, { token: owner.session }), 409, 'CONFLICT');
    const left = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/leave`, { token: member.session });
    expect(left.status).toBe(204);
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: member.session }), 403, 'FORBIDDEN');
    expect(await roles(ws.workspaceId, owner.session)).toEqual({ [owner.userId]: 'owner' });
  });

  it('refuses a new Owner who already owns ten workspaces', async () => {
    const owner = await signUp();
    const created = await call('POST', '/app/v1/workspaces', { token: owner.session, body: { name: 'Too many' } });
    const ws = { workspaceId: created.body.id as string, session: owner.session };
    const busy = await joined(ws, 'member');
    for (let i = 0; i < 10; i++) expect((await call('POST', '/app/v1/workspaces', { token: busy.session, body: { name: `Own ${i}` } })).status).toBe(201);
    const refused = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/ownership`, { token: owner.session, body: { user_id: busy.userId } });
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details).toEqual({ limit: 10 });
  });
});

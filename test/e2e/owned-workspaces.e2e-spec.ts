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

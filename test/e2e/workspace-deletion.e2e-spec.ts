import { randomUUID } from 'node:crypto';
import { call, deployedDecision, opsPort, expectError, newWorkspace, runDecision, signUp, triageSchema, Workspace } from './support/api';
import { DeliveryPublisher, startReceiver, webhookMessage } from './support/deliveries';
import { eventually, partnerWorkspace, subWorkspace, v1, withDatabase } from './support/partner';

/**
 * The Owner deletes a workspace: refused to every other role, to a workspace with a live paid subscription and
 * to a partner that still has sub-workspaces; then every service removes what it holds, and the ledger keeps
 * its entries.
 */
const admin = (path: string, body: unknown) => call('PUT', path, { token: process.env.E2E_ADMIN_TOKEN, body });
const remove = (ws: Workspace, session = ws.session) => call('DELETE', `/app/v1/workspaces/${ws.workspaceId}`, { token: session });

async function joined(ws: Workspace, role: 'admin' | 'member' | 'viewer'): Promise<string> {
  const user = await signUp();
  expect((await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: user.email, role } })).status).toBe(201);
  return user.session;
}

/** The delivery service's count of deliveries dropped because their workspace was deleted (ops port 3 of the cluster). */
async function droppedDeliveries(): Promise<number> {
  const metrics = (await call('GET', '/metrics', {}, `http://127.0.0.1:${opsPort(3)}`)).text;
  return Number(/^decision_service_deliveries_total\{[^}]*outcome="dropped"[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? 0);
}

function remaining(workspaceId: string) {
  return withDatabase(async (db) => {
    const count = async (sql: string) => (await db.query(sql, [workspaceId])).rows[0].n as number;
    return {
      workspaces: await count('SELECT count(*)::int AS n FROM gateway.workspaces WHERE id = $1'),
      keys: await count('SELECT count(*)::int AS n FROM gateway.api_keys WHERE workspace_id = $1'),
      memberships: await count('SELECT count(*)::int AS n FROM gateway.memberships WHERE workspace_id = $1'),
      invitations: await count('SELECT count(*)::int AS n FROM gateway.invitations WHERE workspace_id = $1'),
      decisions: await count('SELECT count(*)::int AS n FROM decision_runner.decisions WHERE workspace_id = $1'),
      executions: await count('SELECT count(*)::int AS n FROM decision_runner.executions WHERE workspace_id = $1'),
      rollups: await count('SELECT count(*)::int AS n FROM decision_runner.execution_rollup_totals WHERE workspace_id = $1'),
      signingSecrets: await count('SELECT count(*)::int AS n FROM delivery.signing_secrets WHERE workspace_id = $1'),
      partnerSettings: await count('SELECT count(*)::int AS n FROM partner.partner_settings WHERE workspace_id = $1::text'),
    };
  });
}

describe('deleting a workspace', () => {
  it('is the Owner’s alone, and takes everything every service holds of it', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'doomed', triageSchema());
    expect((await runDecision(ws, 'doomed', { message: 'hello' })).status).toBe(200);
    expect((await call('POST', `/app/v1/workspaces/${ws.workspaceId}/signing-secret/rotate`, { token: ws.session })).status).toBe(201);
    const invited = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/invitations`, {
      token: ws.session,
      body: { email: `later-${randomUUID()}@example.com`, role: 'viewer' },
    });
    expect(invited.status).toBe(201);
    const sessions = { admin: await joined(ws, 'admin'), member: await joined(ws, 'member'), viewer: await joined(ws, 'viewer') };
    const stranger = await signUp();

    for (const session of Object.values(sessions)) expectError(await remove(ws, session), 403, 'FORBIDDEN');
    expectError(await remove(ws, stranger.session), 403, 'FORBIDDEN');
    expect(await remaining(ws.workspaceId)).toMatchObject({
      workspaces: 1,
      keys: 1,
      memberships: 4,
      invitations: 1,
      decisions: 1,
      executions: 1,
      signingSecrets: 1,
    });
    // The run was counted in the minute, hour and day rollups.
    expect((await remaining(ws.workspaceId)).rollups).toBeGreaterThanOrEqual(3);

    const deleted = await remove(ws);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');

    // At once: the key no longer authenticates and no member sees the workspace.
    expectError(await runDecision(ws, 'doomed', { message: 'after' }), 401, 'INVALID_API_KEY');
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}`, { token: ws.session }), 403, 'FORBIDDEN');
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: sessions.admin }), 403, 'FORBIDDEN');
    const listed = await call('GET', '/app/v1/workspaces', { token: sessions.member });
    expect(listed.body.data.map((workspace: { id: string }) => workspace.id)).not.toContain(ws.workspaceId);
    // A second DELETE finds no membership to act on.
    expectError(await remove(ws), 403, 'FORBIDDEN');

    const after = await eventually(
      () => remaining(ws.workspaceId),
      (counts) => Object.values(counts).every((n) => n === 0),
    );
    expect(after).toEqual({
      workspaces: 0,
      keys: 0,
      memberships: 0,
      invitations: 0,
      decisions: 0,
      executions: 0,
      rollups: 0,
      signingSecrets: 0,
      partnerSettings: 0,
    });
    // The ledger is the record of what was billed: its entries stay.
    const transfers = () =>
      withDatabase(
        async (db) => (await db.query('SELECT count(*)::int AS n FROM billing_ledger.transfers WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n as number,
      );
    expect(await eventually(transfers, (n) => n > 0)).toBeGreaterThan(0);
  });

  it('stops its deliveries: one still queued afterwards is dropped, never recorded or sent', async () => {
    const ws = await newWorkspace();
    const receiver = await startReceiver();
    const publisher = await DeliveryPublisher.open();
    try {
      // The delivery service has seen the workspace: a delivery of it went through.
      const before = webhookMessage(ws.workspaceId, receiver.url);
      await publisher.publish(before);
      expect(
        await eventually(
          async () => receiver.received.length,
          (n) => n === 1,
        ),
      ).toBe(1);

      expect((await remove(ws)).status).toBe(204);
      const late = webhookMessage(ws.workspaceId, receiver.url);
      await eventually(
        () =>
          withDatabase(
            async (db) =>
              (await db.query('SELECT count(*)::int AS n FROM delivery.deleted_workspaces WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n as number,
          ),
        (n) => n === 1,
      );
      const dropped = await droppedDeliveries();
      await publisher.publish(late);
      // The delivery service counts the message it dropped; by then the late one has had its turn.
      expect(await eventually(droppedDeliveries, (n) => n > dropped)).toBeGreaterThan(dropped);
      expect(receiver.received.map((request) => JSON.parse(request.body).id)).not.toContain(late.deliveryId);
      const rows = await withDatabase(
        async (db) => (await db.query('SELECT count(*)::int AS n FROM delivery.deliveries WHERE workspace_id = $1', [ws.workspaceId])).rows[0].n,
      );
      expect(rows).toBe(0);
    } finally {
      await publisher.close();
      await receiver.close();
    }
  });

  it('is refused while a paid subscription is live, and allowed once the workspace is back on genesis', async () => {
    const ws = await newWorkspace();
    expect((await admin(`/admin/v1/workspaces/${ws.workspaceId}/plan`, { plan: 'developer' })).status).toBe(200);
    const refused = await remove(ws);
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details).toEqual({ plan: 'developer' });
    expect((await runDecision(ws, 'absent', {})).status).toBe(404);

    expect((await admin(`/admin/v1/workspaces/${ws.workspaceId}/plan`, { plan: 'genesis' })).status).toBe(200);
    expect((await remove(ws)).status).toBe(204);
  });

  it('is refused to a partner with sub-workspaces until they are deleted', async () => {
    const ws = await partnerWorkspace('genesis');
    const sub = await subWorkspace(ws, { external_id: `cust-${randomUUID()}`, name: 'Customer' });

    const refused = await remove(ws);
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details).toEqual({ sub_workspaces: 1 });
    // Partner mode is untouched by the refusal.
    expect((await v1(ws, 'GET', `/v1/workspaces/${sub.id}`)).status).toBe(200);

    expect((await v1(ws, 'DELETE', `/v1/workspaces/${sub.id}`)).status).toBe(204);
    expect((await remove(ws)).status).toBe(204);
    expect(
      await eventually(
        () => remaining(ws.workspaceId),
        (counts) => counts.partnerSettings === 0 && counts.workspaces === 0,
      ),
    ).toMatchObject({
      partnerSettings: 0,
      workspaces: 0,
    });
  });
});

import { Client } from 'pg';
import { call, deployedDecision, expectError, newWorkspace, runDecision, signUp, triageSchema, Workspace } from './support/api';

const admin = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(method, path, { token: process.env.E2E_ADMIN_TOKEN, body, headers });

async function onPaidVolume(ws: Workspace, overrides: Record<string, unknown> = {}): Promise<void> {
  // Genesis prices decisions past the included volume at 50,000 cents per million: 0.05 cents each.
  const reply = await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { plan: 'genesis', overrides: { included_decisions: 1, ...overrides } });
  expect(reply.status).toBe(200);
}

describe('billing through the whole stack', () => {
  it('pays from the included volume, then from credits, and shows it in /v1/me', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'billed', triageSchema());
    await onPaidVolume(ws);
    const grant = await admin(
      'POST',
      `/admin/v1/workspaces/${ws.workspaceId}/credits`,
      { kind: 'paid', amount_cents: 100, currency: 'usd' },
      { 'idempotency-key': 'grant-1' },
    );
    expect(grant.status).toBe(201);
    expect(grant.body).toMatchObject({ kind: 'paid', amount_cents: 100, currency: 'usd' });
    // The same grant sent again grants once.
    expect(
      (
        await admin(
          'POST',
          `/admin/v1/workspaces/${ws.workspaceId}/credits`,
          { kind: 'paid', amount_cents: 100, currency: 'usd' },
          { 'idempotency-key': 'grant-1' },
        )
      ).body.id,
    ).toBe(grant.body.id);

    for (let i = 0; i < 3; i++) expect((await runDecision(ws, 'billed', { message: `run ${i}` })).status).toBe(200);
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      workspace: { id: ws.workspaceId },
      api_key: { id: ws.keyId },
      plan: { name: 'genesis', rate_limit_per_minute: 60, hard_cap: false },
      usage: { used: 3, included: 1, reserved: 0 },
      balance: { currency: 'usd', paid_cents: 99 },
    });
    expect(new Date(me.body.usage.period_end).getTime()).toBeGreaterThan(new Date(me.body.usage.period_start).getTime());
  });

  it('answers CREDITS_EXHAUSTED, then SPEND_CAP_REACHED, then QUOTA_EXCEEDED with their details', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'capped', triageSchema());
    await onPaidVolume(ws);
    expect((await runDecision(ws, 'capped', { message: 'included' })).status).toBe(200);

    const exhausted = await runDecision(ws, 'capped', { message: 'no credits' });
    expectError(exhausted, 402, 'CREDITS_EXHAUSTED');
    expect(exhausted.body.error.details).toEqual({
      used: 1,
      included: 1,
      availableCents: 0,
      currency: 'usd',
      billingUrl: expect.stringMatching(/^https?:\/\//),
    });

    await admin('POST', `/admin/v1/workspaces/${ws.workspaceId}/credits`, { kind: 'paid', amount_cents: 10, currency: 'usd' });
    expect((await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/spend-cap`, { spend_cap_cents: 0 })).status).toBe(200);
    const capped = await runDecision(ws, 'capped', { message: 'at the cap' });
    expectError(capped, 402, 'SPEND_CAP_REACHED');
    expect(capped.body.error.details).toEqual({
      spendCapCents: 0,
      spentCents: 0,
      currency: 'usd',
      periodEnd: expect.any(String),
      billingUrl: expect.any(String),
    });
    expectError(await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/spend-cap`, { spend_cap_cents: -1 }), 400, 'INVALID_REQUEST');
    await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/spend-cap`, { spend_cap_cents: null });
    expect((await runDecision(ws, 'capped', { message: 'paid from credits' })).status).toBe(200);

    await onPaidVolume(ws, { hard_cap: true });
    const quota = await runDecision(ws, 'capped', { message: 'hard cap' });
    expectError(quota, 402, 'QUOTA_EXCEEDED');
    expect(quota.body.error.details).toEqual({ used: 2, included: 1, periodEnd: expect.any(String), upgradeUrl: expect.any(String) });
  });

  it("lets the Owner set the workspace's own spend cap, which the run then meets; Admins and below are refused", async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'owner-capped', triageSchema());
    await onPaidVolume(ws);
    await admin('POST', `/admin/v1/workspaces/${ws.workspaceId}/credits`, { kind: 'paid', amount_cents: 10, currency: 'usd' });
    const setCap = (value: unknown, token = ws.session) =>
      call('PUT', `/app/v1/workspaces/${ws.workspaceId}/spend-cap`, { token, body: { spend_cap_cents: value } });

    const adminUser = await signUp();
    expect(
      (await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: adminUser.email, role: 'admin' } })).status,
    ).toBe(201);
    expectError(await setCap(0, adminUser.session), 403, 'FORBIDDEN');
    expectError(await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/spend-cap`, { token: ws.apiKey, body: { spend_cap_cents: 0 } }), 403, 'FORBIDDEN');
    for (const bad of [-1, 1.5, '100', undefined]) {
      const refused = await setCap(bad);
      expectError(refused, 400, 'INVALID_REQUEST');
      expect(refused.body.error.details).toEqual([{ path: 'spend_cap_cents', message: expect.any(String) }]);
    }

    expect((await runDecision(ws, 'owner-capped', { message: 'included' })).status).toBe(200);
    const set = await setCap(0);
    expect(set.status).toBe(200);
    expect(set.body.spend_cap).toMatchObject({ spend_cap_cents: 0, currency: 'usd' });
    expect((await call('GET', `/app/v1/workspaces/${ws.workspaceId}`, { token: adminUser.session })).body.account.spend_cap.spend_cap_cents).toBe(0);
    expectError(await runDecision(ws, 'owner-capped', { message: 'at the cap' }), 402, 'SPEND_CAP_REACHED');

    expect((await setCap(null)).body.spend_cap.spend_cap_cents).toBeNull();
    expect((await runDecision(ws, 'owner-capped', { message: 'paid from credits' })).status).toBe(200);
  });

  it('runs past the included volume take their decisions from money leases, up to the spend cap exactly', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'overage', triageSchema());
    await onPaidVolume(ws, { included_decisions: 0 });
    await admin('POST', `/admin/v1/workspaces/${ws.workspaceId}/credits`, { kind: 'paid', amount_cents: 100, currency: 'usd' });
    // A cap of 1 cent: exactly 20 decisions at 0.05 cents.
    await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/spend-cap`, { spend_cap_cents: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await runDecision(ws, 'overage', { message: `run ${i}` })).status);
    expect(statuses).toEqual(Array(20).fill(200));
    expectError(await runDecision(ws, 'overage', { message: 'past the cap' }), 402, 'SPEND_CAP_REACHED');
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.body.usage).toMatchObject({ used: 20, included: 0, reserved: 0 });
    expect(me.body.spend_cap).toMatchObject({ spend_cap_cents: 1, spent_cents: 1 });
    expect(me.body.balance).toMatchObject({ available_cents: 99, paid_cents: 99 });
    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM decision_runner.executions e JOIN billing_ledger.leases l ON l.id = e.lease_id
         WHERE e.workspace_id = $1 AND l.funding = 'credits'`,
        [ws.workspaceId],
      );
      expect(rows[0].n).toBeGreaterThan(0);
    } finally {
      await db.end();
    }
  });

  it('never bills an error or an engine-error fallback', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'free-errors', triageSchema());
    expectError(await runDecision(ws, 'free-errors', { amount: 1 }), 422, 'INVALID_STATE');
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.body.usage).toMatchObject({ used: 0, reserved: 0 });
  });
});

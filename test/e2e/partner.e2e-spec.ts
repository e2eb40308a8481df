import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@ds/contracts';
import { baseUrl, call, createDecision, deployedDecision, expectError, newWorkspace, opsPort, triageSchema, Workspace } from './support/api';
import { ServiceRpc } from './support/engine-rpc';
import {
  ALLOWED_ORIGINS,
  asEmbed,
  embedSession,
  eventually,
  launch,
  launchPath,
  openEmbed,
  partnerWorkspace,
  setPartner,
  subWorkspace,
  v1,
  withDatabase,
} from './support/partner';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ALL_PERMISSIONS = ['decisions:read', 'decisions:write', 'decisions:deploy', 'decisions:delete', 'executions:read', 'agent'];
const ext = () => `cust-${randomUUID()}`;

let rpc: ServiceRpc;
beforeAll(() => {
  rpc = new ServiceRpc();
});
afterAll(() => rpc.close());

/** A run in a sub-workspace, as the gateway's run route (or the playground, or a secret URL) asks the runner for one. */
function runIn(workspaceId: string, slug: string) {
  return rpc.call(SUBJECTS.runner.run, {
    workspaceId,
    slug,
    body: { state: { message: 'My phone arrived broken.' } },
    includeProbabilities: false,
    source: 'api',
    livemode: true,
    apiKeyId: null,
  });
}

function issuePaths(reply: { body: any }): string[] {
  return (reply.body.error.details as Array<{ path: string }>).map((issue) => issue.path);
}

describe('partner mode switch', () => {
  it('is set by the operator with origins checked', async () => {
    const ws = await newWorkspace();
    const bad = await setPartner(ws, { enabled: 'yes', allowed_origins: ['http://partner.example', 'https://ok.example'] });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(issuePaths(bad)).toEqual(['enabled', 'allowed_origins.0']);
    expectError(
      await call('PUT', `/admin/v1/workspaces/${randomUUID()}/partner`, { token: process.env.E2E_ADMIN_TOKEN, body: { enabled: true } }),
      404,
      'WORKSPACE_NOT_FOUND',
    );
    const on = await setPartner(ws, { enabled: true, allowed_origins: ['https://App.Partner.example', 'https://app.partner.example'] });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ enabled: true, allowed_origins: ['https://app.partner.example'] });
  });

  it('gates every partner endpoint: partner_disabled, then key_without_author', async () => {
    const ws = await newWorkspace();
    const endpoints: Array<[string, string, unknown?]> = [
      ['POST', '/v1/workspaces', { external_id: 'a', name: 'A' }],
      ['GET', '/v1/workspaces'],
      ['GET', '/v1/workspaces/ext:a'],
      ['PATCH', '/v1/workspaces/ext:a', { name: 'B' }],
      ['DELETE', '/v1/workspaces/ext:a'],
      ['POST', '/v1/embed/sessions', { workspace: 'ext:a', user: { id: 'u' } }],
      ['DELETE', `/v1/embed/sessions/emb_${'a'.repeat(20)}`],
      ['POST', '/v1/embed/sessions/revoke', { user_id: 'u' }],
    ];
    for (const [method, path, body] of endpoints) {
      const reply = await v1(ws, method, path, body);
      expectError(reply, 403, 'FORBIDDEN');
      expect({ path, reason: reply.body.error.details.reason }).toEqual({ path, reason: 'partner_disabled' });
    }
    expect((await setPartner(ws, { enabled: true, allowed_origins: ALLOWED_ORIGINS })).status).toBe(200);
    expect((await v1(ws, 'GET', '/v1/workspaces')).status).toBe(200);

    // A key nobody created (for example one seeded by an installer) has no author.
    const key = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/api-keys`, { token: ws.session, body: { name: 'machine', mode: 'live' } });
    await withDatabase((db) => db.query('UPDATE gateway.api_keys SET created_by = NULL WHERE id = $1', [key.body.id]));
    for (const [method, path, body] of endpoints) {
      const reply = await call(method, path, { token: key.body.key, ...(body === undefined ? {} : { body }) });
      expectError(reply, 403, 'FORBIDDEN');
      expect({ path, reason: reply.body.error.details.reason }).toEqual({ path, reason: 'key_without_author' });
    }

    expect((await setPartner(ws, { enabled: false })).status).toBe(200);
    expect((await v1(ws, 'GET', '/v1/workspaces')).body.error.details.reason).toBe('partner_disabled');
  });
});

describe('sub-workspaces', () => {
  let partner: Workspace;
  beforeAll(async () => {
    partner = await partnerWorkspace();
  });

  it('creates (201), then updates name, metadata and limits on the same external_id (200)', async () => {
    const externalId = ext();
    const created = await v1(partner, 'POST', '/v1/workspaces', { external_id: externalId, name: 'Acme', metadata: { tier: 'gold' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      external_id: externalId,
      name: 'Acme',
      metadata: { tier: 'gold' },
      limits: { max_decisions: null, monthly_decisions: null },
      usage: { decisions: 0, period_used: 0, period_start: expect.any(String), period_end: expect.any(String) },
      created_at: expect.any(String),
      seed: { created: [], skipped: [] },
    });
    expect(Date.parse(created.body.usage.period_end)).toBeGreaterThan(Date.parse(created.body.usage.period_start));

    const again = await v1(partner, 'POST', '/v1/workspaces', {
      external_id: externalId,
      name: 'Acme Corp',
      metadata: { tier: 'platinum' },
      limits: { max_decisions: 5 },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      id: created.body.id,
      name: 'Acme Corp',
      metadata: { tier: 'platinum' },
      limits: { max_decisions: 5, monthly_decisions: null },
    });
    expect(again.body.seed).toBeUndefined();

    for (const ref of [created.body.id, `ext:${externalId}`]) {
      const read = await v1(partner, 'GET', `/v1/workspaces/${ref}`);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id: created.body.id, external_id: externalId, name: 'Acme Corp' });
    }

    const patched = await v1(partner, 'PATCH', `/v1/workspaces/ext:${externalId}`, { name: 'Acme Inc', limits: { monthly_decisions: 100 } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Acme Inc', metadata: { tier: 'platinum' }, limits: { max_decisions: 5, monthly_decisions: 100 } });
    // The workspace row is the gateway's: it carries the name too.
    const [row] = (await withDatabase((db) => db.query('SELECT name FROM gateway.workspaces WHERE id = $1', [created.body.id]))).rows;
    expect(row).toEqual({ name: 'Acme Inc' });
  });

  it('refuses every broken field with its path', async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{}, ['external_id', 'name']],
      [{ external_id: 'has space', name: 'n' }, ['external_id']],
      [{ external_id: 'x'.repeat(129), name: 'n' }, ['external_id']],
      [{ external_id: 'a', name: '' }, ['name']],
      [{ external_id: 'a', name: 'n'.repeat(81) }, ['name']],
      [{ external_id: 'a', name: 'n', metadata: 'x' }, ['metadata']],
      [{ external_id: 'a', name: 'n', metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, ['metadata']],
      [{ external_id: 'a', name: 'n', metadata: { k: 1 } }, ['metadata.k']],
      [{ external_id: 'a', name: 'n', limits: { max_decisions: -1, monthly_decisions: 'many' } }, ['limits.max_decisions', 'limits.monthly_decisions']],
      [{ external_id: 'a', name: 'n', limits: { seats: 3 } }, ['limits.seats']],
      [{ external_id: 'a', name: 'n', seed: { decisions: ['Not A Slug'], deploy: 1 } }, ['seed.decisions.0', 'seed.deploy']],
    ];
    for (const [body, paths] of cases) {
      const reply = await v1(partner, 'POST', '/v1/workspaces', body);
      expectError(reply, 400, 'INVALID_REQUEST');
      expect({ body, paths: issuePaths(reply) }).toEqual({ body, paths });
    }
    const sub = await subWorkspace(partner, { external_id: ext(), name: 'Patchable' });
    const patch = await v1(partner, 'PATCH', `/v1/workspaces/${sub.id}`, { name: '', seed: { decisions: [] } });
    expectError(patch, 400, 'INVALID_REQUEST');
    expect(issuePaths(patch)).toEqual(['name', 'seed']);
    expectError(await v1(partner, 'POST', '/v1/workspaces', [1]), 400, 'INVALID_REQUEST');
  });

  it('pages with limit and cursor, and filters by external_id', async () => {
    const own = await partnerWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await subWorkspace(own, { external_id: `page-${i}`, name: `Page ${i}` })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const reply = await v1(own, 'GET', `/v1/workspaces?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status).toBe(200);
      expect(reply.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...reply.body.data.map((workspace: { id: string }) => workspace.id));
      cursor = reply.body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
    const filtered = await v1(own, 'GET', '/v1/workspaces?external_id=page-3');
    expect(filtered.body).toEqual({ data: [expect.objectContaining({ id: ids[3], external_id: 'page-3' })], next_cursor: null });
    expect((await v1(own, 'GET', '/v1/workspaces')).body.data).toHaveLength(5);
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'cursor=forged', 'external_id=has%20space']) {
      expectError(await v1(own, 'GET', `/v1/workspaces?${query}`), 400, 'INVALID_REQUEST');
    }
  });

  it('answers 404 WORKSPACE_NOT_FOUND for an unknown reference and for another partner’s', async () => {
    const other = await partnerWorkspace();
    const externalId = ext();
    const sub = await subWorkspace(partner, { external_id: externalId, name: 'Mine' });
    for (const ref of [sub.id, `ext:${externalId}`, randomUUID(), 'not-a-ref', 'ext:']) {
      for (const [method, body] of [['GET'], ['PATCH', { name: 'Stolen' }], ['DELETE']] as Array<[string, unknown?]>) {
        expectError(await v1(other, method, `/v1/workspaces/${ref}`, body), 404, 'WORKSPACE_NOT_FOUND');
      }
    }
    expect((await v1(partner, 'GET', `/v1/workspaces/${sub.id}`)).body.name).toBe('Mine');
    expect((await v1(other, 'GET', '/v1/workspaces')).body.data).toEqual([]);
  });

  it('makes one workspace of concurrent creates with one external_id', async () => {
    const externalId = ext();
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => v1(partner, 'POST', '/v1/workspaces', { external_id: externalId, name: `Racer ${i}` })),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(replies.map((reply) => reply.body.id)).size).toBe(1);
    const counts = await withDatabase(async (db) => ({
      links: (await db.query('SELECT count(*)::int AS n FROM partner.sub_workspaces WHERE external_id = $1', [externalId])).rows[0].n,
      rows: (await db.query('SELECT count(*)::int AS n FROM gateway.workspaces WHERE id = $1', [replies[0]!.body.id])).rows[0].n,
    }));
    expect(counts).toEqual({ links: 1, rows: 1 });
  });

  it('answers 402 PLAN_LIMIT_REACHED with scope workspaces past the plan’s count', async () => {
    const small = await partnerWorkspace('genesis');
    for (let i = 0; i < 3; i++) await subWorkspace(small, { external_id: `small-${i}`, name: `Small ${i}` });
    const refused = await v1(small, 'POST', '/v1/workspaces', { external_id: 'small-3', name: 'One too many' });
    expectError(refused, 402, 'PLAN_LIMIT_REACHED');
    expect(refused.body.error.details).toMatchObject({ scope: 'workspaces', limit: 3, used: 3 });
    // Updating an existing one is not a creation.
    expect((await v1(small, 'POST', '/v1/workspaces', { external_id: 'small-0', name: 'Renamed' })).status).toBe(200);
    expectError(
      await v1(small, 'POST', '/v1/embed/sessions', { workspace: { external_id: 'small-4', name: 'On the fly' }, user: { id: 'u' } }),
      402,
      'PLAN_LIMIT_REACHED',
    );
  });

  it('seeds from the partner’s deployed decisions, deployed or as drafts', async () => {
    const own = await partnerWorkspace();
    await deployedDecision(own, 'seeded-triage', triageSchema());
    await createDecision(own, 'only-draft', triageSchema());
    const deployed = await v1(own, 'POST', '/v1/workspaces', {
      external_id: ext(),
      name: 'Seeded',
      seed: { decisions: ['seeded-triage', 'only-draft', 'missing-one'], deploy: true },
    });
    expect(deployed.status).toBe(201);
    expect(deployed.body.seed).toEqual({
      created: [{ slug: 'seeded-triage', id: expect.stringMatching(/^dec_[A-Za-z0-9]{20}$/), deployed: true }],
      skipped: [
        { slug: 'only-draft', reason: 'not_deployed' },
        { slug: 'missing-one', reason: 'not_found' },
      ],
    });
    expect(deployed.body.usage.decisions).toBe(1);
    const run = await runIn(deployed.body.id, 'seeded-triage');
    expect(run.ok).toBe(true);

    const drafts = await subWorkspace(own, { external_id: ext(), name: 'Drafts', seed: { decisions: ['seeded-triage'] } });
    expect(drafts.seed.created).toEqual([{ slug: 'seeded-triage', id: expect.any(String), deployed: false }]);
    const notDeployed = await runIn(drafts.id, 'seeded-triage');
    expect(notDeployed.ok ? null : notDeployed.error.code).toBe('DECISION_NOT_DEPLOYED');
  });

  it('enforces limits on the sub-workspace’s runs and decisions; null falls back to the partner’s default', async () => {
    const own = await partnerWorkspace();
    await deployedDecision(own, 'limited', triageSchema());
    const sub = await subWorkspace(own, {
      external_id: ext(),
      name: 'Limited',
      limits: { max_decisions: 1, monthly_decisions: 2 },
      seed: { decisions: ['limited'], deploy: true },
    });
    expect((await runIn(sub.id, 'limited')).ok).toBe(true);
    expect((await runIn(sub.id, 'limited')).ok).toBe(true);
    const third = await runIn(sub.id, 'limited');
    expect(third.ok ? null : { code: third.error.code, status: third.error.status }).toEqual({ code: 'QUOTA_EXCEEDED', status: 402 });
    const read = await eventually(
      () => v1(own, 'GET', `/v1/workspaces/${sub.id}`),
      (reply) => reply.body.usage.period_used === 2,
    );
    expect(read.body.usage).toMatchObject({ decisions: 1, period_used: 2 });

    const { token } = await openEmbed(own, { workspace: sub.id, user: { id: 'editor' }, origins: [ALLOWED_ORIGINS[0]] });
    const second = await asEmbed(token, 'POST', `/app/v1/workspaces/${sub.id}/decisions`, { slug: 'second', name: 'Second', schema: triageSchema() });
    expectError(second, 402, 'PLAN_LIMIT_REACHED');
    expect(second.body.error.details).toMatchObject({ limit: 1, used: 1 });

    // Back to the partner's default: enterprise has no decision ceiling and no monthly hard cap.
    expect((await v1(own, 'PATCH', `/v1/workspaces/${sub.id}`, { limits: { max_decisions: null, monthly_decisions: null } })).status).toBe(200);
    expect((await asEmbed(token, 'POST', `/app/v1/workspaces/${sub.id}/decisions`, { slug: 'second', name: 'Second', schema: triageSchema() })).status).toBe(
      201,
    );
    expect((await runIn(sub.id, 'limited')).ok).toBe(true);
  });

  it('keeps a sub-workspace inside its partner’s plan, overrides included, and gives it that plan', async () => {
    // A developer-plan partner whose operator set overrides: 10 decisions, 5,000 included a month, 77 requests a minute.
    const small = await newWorkspace();
    expect((await setPartner(small, { enabled: true, allowed_origins: ALLOWED_ORIGINS })).status).toBe(200);
    const plan = await call('PUT', `/admin/v1/workspaces/${small.workspaceId}/plan`, {
      token: process.env.E2E_ADMIN_TOKEN,
      body: { plan: 'developer', overrides: { included_decisions: 5_000, rate_limit_per_minute: 77, price_per_million_cents: 12_345 } },
    });
    expect(plan.status).toBe(200);

    const above = await v1(small, 'POST', '/v1/workspaces', { external_id: ext(), name: 'Big', limits: { max_decisions: 11, monthly_decisions: 5_001 } });
    expectError(above, 400, 'INVALID_REQUEST');
    expect(above.body.error.details.map((issue: { path: string }) => issue.path)).toEqual(['limits.max_decisions', 'limits.monthly_decisions']);
    const embedAbove = await v1(small, 'POST', '/v1/embed/sessions', {
      workspace: { external_id: ext(), name: 'Big', limits: { max_decisions: 1_000 } },
      user: { id: 'x' },
    });
    expectError(embedAbove, 400, 'INVALID_REQUEST');
    expect(embedAbove.body.error.details.map((issue: { path: string }) => issue.path)).toEqual(['workspace.limits.max_decisions']);

    const sub = await subWorkspace(small, { external_id: ext(), name: 'Small', limits: { max_decisions: 10 } });
    expectError(await v1(small, 'PATCH', `/v1/workspaces/${sub.id}`, { limits: { monthly_decisions: 1e6 } }), 400, 'INVALID_REQUEST');
    const account = await rpc.ok(SUBJECTS.billing.account, { workspaceId: sub.id });
    expect(account.plan).toMatchObject({
      name: 'developer',
      max_decisions: 10,
      included_decisions: 5_000,
      rate_limit_per_minute: 77,
      price_per_million_cents: 12_345,
    });
    // Its own monthly limit narrows the partner's and caps it hard.
    expect((await v1(small, 'PATCH', `/v1/workspaces/${sub.id}`, { limits: { monthly_decisions: 40 } })).status).toBe(200);
    expect((await rpc.ok(SUBJECTS.billing.account, { workspaceId: sub.id })).plan).toMatchObject({
      included_decisions: 40,
      hard_cap: true,
      rate_limit_per_minute: 77,
    });
  });

  it('deletes a sub-workspace with everything every service holds of it', async () => {
    const own = await partnerWorkspace();
    await deployedDecision(own, 'doomed', triageSchema());
    const sub = await subWorkspace(own, { external_id: ext(), name: 'Doomed', seed: { decisions: ['doomed'], deploy: true } });
    expect((await runIn(sub.id, 'doomed')).ok).toBe(true);
    expect((await rpc.call(SUBJECTS.engine.setProviderKey, { workspaceId: sub.id, provider: 'openai', apiKey: 'sk-doomed-0001' })).ok).toBe(true);
    expect((await rpc.call(SUBJECTS.delivery.rotateSigningSecret, { workspaceId: sub.id })).ok).toBe(true);
    const { token } = await openEmbed(own, { workspace: sub.id, user: { id: 'editor' } });
    expect((await asEmbed(token, 'GET', '/app/v1/embed/session')).status).toBe(200);

    const remaining = () =>
      withDatabase(async (db) => {
        const count = async (sql: string) => (await db.query(sql, [sub.id])).rows[0].n as number;
        return {
          gatewayWorkspaces: await count('SELECT count(*)::int AS n FROM gateway.workspaces WHERE id = $1'),
          gatewayKeys: await count('SELECT count(*)::int AS n FROM gateway.api_keys WHERE workspace_id = $1'),
          gatewayMemberships: await count('SELECT count(*)::int AS n FROM gateway.memberships WHERE workspace_id = $1'),
          decisions: await count('SELECT count(*)::int AS n FROM decision_runner.decisions WHERE workspace_id = $1'),
          versions: await count(
            'SELECT count(*)::int AS n FROM decision_runner.decision_versions v WHERE NOT EXISTS (SELECT 1 FROM decision_runner.decisions d WHERE d.id = v.decision_id) OR v.decision_id IN (SELECT id FROM decision_runner.decisions WHERE workspace_id = $1)',
          ),
          executions: await count('SELECT count(*)::int AS n FROM decision_runner.executions WHERE workspace_id = $1'),
          credentials: await count('SELECT count(*)::int AS n FROM engine_proxy.provider_credentials WHERE workspace_id = $1'),
          signingSecrets: await count('SELECT count(*)::int AS n FROM delivery.signing_secrets WHERE workspace_id = $1'),
          deliveries: await count('SELECT count(*)::int AS n FROM delivery.deliveries WHERE workspace_id = $1'),
          links: await count('SELECT count(*)::int AS n FROM partner.sub_workspaces WHERE id = $1'),
          sessions: await count('SELECT count(*)::int AS n FROM partner.embed_sessions WHERE workspace_id = $1'),
        };
      });
    const before = await remaining();
    expect(before).toMatchObject({ gatewayWorkspaces: 1, decisions: 1, versions: 1, executions: 1, credentials: 1, signingSecrets: 1, links: 1, sessions: 1 });

    const deleted = await v1(own, 'DELETE', `/v1/workspaces/${sub.id}`);
    expect(deleted.status).toBe(204);
    expectError(await v1(own, 'GET', `/v1/workspaces/${sub.id}`), 404, 'WORKSPACE_NOT_FOUND');
    expectError(await v1(own, 'DELETE', `/v1/workspaces/${sub.id}`), 404, 'WORKSPACE_NOT_FOUND');
    expectError(await asEmbed(token, 'GET', '/app/v1/embed/session'), 401, 'UNAUTHORIZED');

    const zero = {
      gatewayWorkspaces: 0,
      gatewayKeys: 0,
      gatewayMemberships: 0,
      decisions: 0,
      versions: 0,
      executions: 0,
      credentials: 0,
      signingSecrets: 0,
      deliveries: 0,
      links: 0,
      sessions: 0,
    };
    const after = await eventually(remaining, (counts) => Object.values(counts).every((n) => n === 0));
    expect(after).toEqual(zero);
    const run = await runIn(sub.id, 'doomed');
    expect(run.ok ? null : run.error.code).toBe('DECISION_NOT_FOUND');
    // The partner's own decision is untouched.
    expect((await v1(own, 'GET', '/v1/decisions')).body.data.map((decision: { slug: string }) => decision.slug)).toEqual(['doomed']);
  });
});

describe('embed sessions', () => {
  let partner: Workspace;
  let sub: any;
  beforeAll(async () => {
    partner = await partnerWorkspace();
    sub = await subWorkspace(partner, { external_id: ext(), name: 'Embedded' });
  });

  it('answers the session with its defaults', async () => {
    const before = Date.now();
    const reply = await v1(partner, 'POST', '/v1/embed/sessions', {
      workspace: `ext:${sub.external_id}`,
      user: { id: 'user-1', name: 'Ada', email: 'ada@example.com' },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^emb_[A-Za-z0-9]{20}$/),
      url: expect.stringMatching(/^https?:\/\/[^/]+\/embed\/launch\?ticket=[A-Za-z0-9_-]{43}$/),
      launch_expires_at: expect.any(String),
      expires_at: expect.any(String),
      permissions: ALL_PERMISSIONS,
      origins: ALLOWED_ORIGINS,
      workspace: expect.objectContaining({ id: sub.id, external_id: sub.external_id, name: 'Embedded', created: false }),
    });
    const launchSeconds = (Date.parse(reply.body.launch_expires_at) - before) / 1000;
    expect(launchSeconds).toBeGreaterThan(50);
    expect(launchSeconds).toBeLessThanOrEqual(61);
    const ttl = (Date.parse(reply.body.expires_at) - before) / 1000;
    expect(ttl).toBeGreaterThan(3590);
    expect(ttl).toBeLessThanOrEqual(3601);
    const custom = await embedSession(partner, {
      workspace: sub.id,
      user: { id: 'user-1' },
      ttl_seconds: 300,
      permissions: ['decisions:read'],
      origins: [ALLOWED_ORIGINS[1]],
    });
    expect(custom).toMatchObject({ permissions: ['decisions:read'], origins: [ALLOWED_ORIGINS[1]] });
  });

  it('creates the workspace on the fly from an object, once', async () => {
    const externalId = ext();
    const first = await embedSession(partner, { workspace: { external_id: externalId, name: 'On the fly', metadata: { src: 'embed' } }, user: { id: 'u' } });
    expect(first.workspace).toMatchObject({ external_id: externalId, name: 'On the fly', metadata: { src: 'embed' }, created: true });
    const second = await embedSession(partner, { workspace: { external_id: externalId, name: 'On the fly' }, user: { id: 'u' } });
    expect(second.workspace).toMatchObject({ id: first.workspace.id, created: false });
    expect((await v1(partner, 'GET', `/v1/workspaces/ext:${externalId}`)).status).toBe(200);
  });

  it('refuses every broken field with its path, and unknown workspaces with 404', async () => {
    const ws = `ext:${sub.external_id}`;
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ user: { id: 'u' } }, ['workspace']],
      [{ workspace: 'acme', user: { id: 'u' } }, ['workspace']],
      [{ workspace: { name: 'no id' }, user: { id: 'u' } }, ['workspace.external_id']],
      [{ workspace: ws }, ['user']],
      [{ workspace: ws, user: { id: '' } }, ['user.id']],
      [{ workspace: ws, user: { id: 'u', email: 'not-an-email' } }, ['user.email']],
      [{ workspace: ws, user: { id: 'u' }, permissions: ['decisions:read', 'billing:write'] }, ['permissions.1']],
      [{ workspace: ws, user: { id: 'u' }, permissions: 'agent' }, ['permissions']],
      [{ workspace: ws, user: { id: 'u' }, start_path: '/settings' }, ['start_path']],
      [{ workspace: ws, user: { id: 'u' }, start_path: '/decisions/new/editor' }, ['start_path']],
      [{ workspace: ws, user: { id: 'u' }, start_path: 'https://evil.example/decisions' }, ['start_path']],
      [{ workspace: ws, user: { id: 'u' }, origins: ['https://evil.example'] }, ['origins.0']],
      [{ workspace: ws, user: { id: 'u' }, origins: ['http://localhost:5173'] }, ['origins.0']],
      [{ workspace: ws, user: { id: 'u' }, origins: ['https://app.partner.example/path'] }, ['origins.0']],
      [{ workspace: ws, user: { id: 'u' }, origins: [] }, ['origins']],
      [{ workspace: ws, user: { id: 'u' }, locale: 'de' }, ['locale']],
      [{ workspace: ws, user: { id: 'u' }, theme: 'blue' }, ['theme']],
      [{ workspace: ws, user: { id: 'u' }, ttl_seconds: 299 }, ['ttl_seconds']],
      [{ workspace: ws, user: { id: 'u' }, ttl_seconds: 43_201 }, ['ttl_seconds']],
      [{ workspace: ws, user: { id: 'u' }, ttl_seconds: '600' }, ['ttl_seconds']],
    ];
    for (const [body, paths] of cases) {
      const reply = await v1(partner, 'POST', '/v1/embed/sessions', body);
      expectError(reply, 400, 'INVALID_REQUEST');
      expect({ body, paths: issuePaths(reply) }).toEqual({ body, paths });
    }
    for (const startPath of ['/decisions', '/decisions/new', `/decisions/dec_${'a'.repeat(20)}`, `/decisions/dec_${'a'.repeat(20)}/playground`]) {
      expect(
        (
          await v1(partner, 'POST', '/v1/embed/sessions', {
            workspace: ws,
            user: { id: 'u' },
            start_path: startPath,
            locale: 'pt',
            theme: 'dark',
            ttl_seconds: 43_200,
          })
        ).status,
      ).toBe(201);
    }
    expectError(await v1(partner, 'POST', '/v1/embed/sessions', { workspace: `ext:${ext()}`, user: { id: 'u' } }), 404, 'WORKSPACE_NOT_FOUND');
    expectError(await v1(partner, 'POST', '/v1/embed/sessions', { workspace: randomUUID(), user: { id: 'u' } }), 404, 'WORKSPACE_NOT_FOUND');
  });

  it('lets test keys use a local development origin', async () => {
    const testKey = await call('POST', `/app/v1/workspaces/${partner.workspaceId}/api-keys`, { token: partner.session, body: { name: 'dev', mode: 'test' } });
    const reply = await call('POST', '/v1/embed/sessions', {
      token: testKey.body.key,
      body: { workspace: sub.id, user: { id: 'dev' }, origins: ['http://localhost:5173'] },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.origins).toEqual(['http://localhost:5173']);
  });

  it('redeems the ticket once: cookie, frame-ancestors and start path, then the reopen page', async () => {
    const session = await embedSession(partner, { workspace: sub.id, user: { id: 'once' }, start_path: '/decisions/new', origins: ALLOWED_ORIGINS });
    // A HEAD (a link preview) does not spend the ticket.
    const head = await fetch(`${baseUrl()}${launchPath(session.url)}`, { method: 'HEAD', redirect: 'manual' });
    expect({ status: head.status, cookie: head.headers.get('set-cookie') }).toEqual({ status: 200, cookie: null });
    const first = await launch(session.url);
    expect(first.status).toBe(302);
    expect(first.location).toBe('/decisions/new');
    expect(first.csp).toBe(`frame-ancestors ${ALLOWED_ORIGINS.join(' ')}`);
    expect(first.token).not.toBeNull();
    for (const attribute of ['HttpOnly', 'Secure', 'SameSite=None', 'Partitioned', 'Path=/']) expect(first.setCookie).toContain(attribute);
    // Beside it, the hint the page can read (no secret in it) that an embed session may be there.
    expect(first.setCookie).toMatch(/(^|, )ds_embed_hint=1; Path=\/; Max-Age=\d+; Secure; SameSite=None; Partitioned(, |$)/);
    const seen = await asEmbed(first.token!, 'GET', '/app/v1/embed/session');
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ id: session.id, workspace_id: sub.id, user: { id: 'once' }, permissions: ALL_PERMISSIONS, start_path: '/decisions/new' });
    expect(seen.headers.get('content-security-policy')).toBe(`frame-ancestors ${ALLOWED_ORIGINS.join(' ')}`);

    const second = await launch(session.url);
    expect(second.status).toBe(410);
    expect(second.contentType).toMatch(/^text\/html/);
    expect(second.text).toContain('Reopen the editor from your app');
    expect(second.text).not.toMatch(/"error"|stack|\bat .+\.js/);
    expect(second.csp).toBe(`frame-ancestors ${ALLOWED_ORIGINS.join(' ')}`);
    expect(second.token).toBeNull();
    expect(second.setCookie).toContain('ds_embed_hint=; Path=/; Max-Age=0');
    // The first cookie is unaffected by the refused second load.
    expect((await asEmbed(first.token!, 'GET', '/app/v1/embed/session')).status).toBe(200);

    const forged = await launch(session.url.replace(/ticket=.*/, `ticket=${'A'.repeat(43)}`));
    expect(forged.status).toBe(410);
    expect(forged.text).toContain('Reopen the editor from your app');
    expect((await launch(session.url.replace(/\?ticket=.*/, ''))).status).toBe(410);
  });

  it('lets one of simultaneous loads of a launch URL win', async () => {
    const session = await embedSession(partner, { workspace: sub.id, user: { id: 'racer' } });
    const loads = await Promise.all(Array.from({ length: 6 }, () => launch(session.url)));
    expect(loads.map((load) => load.status).sort()).toEqual([302, 410, 410, 410, 410, 410]);
    expect(loads.filter((load) => load.token !== null)).toHaveLength(1);
  });

  it('refuses a ticket past its 60 seconds', async () => {
    const session = await embedSession(partner, { workspace: sub.id, user: { id: 'late' } });
    await withDatabase((db) => db.query(`UPDATE partner.embed_sessions SET launch_expires_at = now() - interval '1 second' WHERE id = $1`, [session.id]));
    const late = await launch(session.url);
    expect(late.status).toBe(410);
    expect(late.text).toContain('Reopen the editor from your app');
    expect(late.token).toBeNull();
  });

  it('ends sessions that expire, are closed, or are revoked by workspace or by user', async () => {
    const home = await subWorkspace(partner, { external_id: ext(), name: 'Home' });
    const other = await subWorkspace(partner, { external_id: ext(), name: 'Other' });
    const expiring = await openEmbed(partner, { workspace: home.id, user: { id: 'x' } });
    await withDatabase((db) => db.query(`UPDATE partner.embed_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring.session.id]));
    expectError(await asEmbed(expiring.token, 'GET', '/app/v1/embed/session'), 401, 'UNAUTHORIZED');

    const closed = await openEmbed(partner, { workspace: home.id, user: { id: 'x' } });
    expect((await v1(partner, 'DELETE', `/v1/embed/sessions/${closed.session.id}`)).status).toBe(204);
    expect((await v1(partner, 'DELETE', `/v1/embed/sessions/${closed.session.id}`)).status).toBe(204);
    expectError(await asEmbed(closed.token, 'GET', '/app/v1/embed/session'), 401, 'UNAUTHORIZED');
    expectError(await v1(partner, 'DELETE', `/v1/embed/sessions/emb_${'z'.repeat(20)}`), 404, 'NOT_FOUND');
    const unlaunched = await embedSession(partner, { workspace: home.id, user: { id: 'x' } });
    expect((await v1(partner, 'DELETE', `/v1/embed/sessions/${unlaunched.id}`)).status).toBe(204);
    expect((await launch(unlaunched.url)).status).toBe(410);
    // Another partner cannot close this partner's sessions.
    const stranger = await partnerWorkspace();
    const mine = await openEmbed(partner, { workspace: home.id, user: { id: 'x' } });
    expectError(await v1(stranger, 'DELETE', `/v1/embed/sessions/${mine.session.id}`), 404, 'NOT_FOUND');
    expect((await asEmbed(mine.token, 'GET', '/app/v1/embed/session')).status).toBe(200);

    const ada1 = await openEmbed(partner, { workspace: home.id, user: { id: 'ada' } });
    const ada2 = await openEmbed(partner, { workspace: other.id, user: { id: 'ada' } });
    const bob = await openEmbed(partner, { workspace: other.id, user: { id: 'bob' } });
    const byWorkspace = await v1(partner, 'POST', '/v1/embed/sessions/revoke', { workspace: `ext:${home.external_id}` });
    expect(byWorkspace.status).toBe(200);
    expect(byWorkspace.body).toEqual({ revoked: 2 }); // ada1 and mine
    expectError(await asEmbed(ada1.token, 'GET', '/app/v1/embed/session'), 401, 'UNAUTHORIZED');
    expect((await asEmbed(ada2.token, 'GET', '/app/v1/embed/session')).status).toBe(200);

    const byUser = await v1(partner, 'POST', '/v1/embed/sessions/revoke', { user_id: 'ada' });
    expect(byUser.body).toEqual({ revoked: 1 });
    expectError(await asEmbed(ada2.token, 'GET', '/app/v1/embed/session'), 401, 'UNAUTHORIZED');
    expect((await asEmbed(bob.token, 'GET', '/app/v1/embed/session')).status).toBe(200);
    expect((await v1(partner, 'POST', '/v1/embed/sessions/revoke', { workspace: other.id, user_id: 'bob' })).body).toEqual({ revoked: 1 });
    expectError(await asEmbed(bob.token, 'GET', '/app/v1/embed/session'), 401, 'UNAUTHORIZED');

    expectError(await v1(partner, 'POST', '/v1/embed/sessions/revoke', {}), 400, 'INVALID_REQUEST');
    expectError(await v1(partner, 'POST', '/v1/embed/sessions/revoke', { workspace: `ext:${ext()}` }), 404, 'WORKSPACE_NOT_FOUND');
    expect((await v1(partner, 'POST', '/v1/embed/sessions/revoke', { user_id: 'nobody' })).body).toEqual({ revoked: 0 });
  });

  it('ends every embed session when the operator turns partner mode off, and keeps them ended when it is turned on again', async () => {
    const own = await partnerWorkspace();
    const home = await subWorkspace(own, { external_id: ext(), name: 'Home' });
    const launched = await openEmbed(own, { workspace: home.id, user: { id: 'x' } });
    const unlaunched = await embedSession(own, { workspace: home.id, user: { id: 'y' } });
    expect((await asEmbed(launched.token, 'GET', '/app/v1/embed/session')).status).toBe(200);

    expect((await setPartner(own, { enabled: false, allowed_origins: ALLOWED_ORIGINS })).status).toBe(200);
    expectError(await asEmbed(launched.token, 'GET', '/app/v1/embed/session'), 401, 'UNAUTHORIZED');
    expectError(await asEmbed(launched.token, 'GET', `/app/v1/workspaces/${home.id}/decisions`), 401, 'UNAUTHORIZED');
    expect((await launch(unlaunched.url)).status).toBe(410);

    expect((await setPartner(own, { enabled: true, allowed_origins: ALLOWED_ORIGINS })).status).toBe(200);
    expectError(await asEmbed(launched.token, 'GET', '/app/v1/embed/session'), 401, 'UNAUTHORIZED');
    const closed = await withDatabase((db) =>
      db.query(`SELECT count(*)::int AS open FROM partner.embed_sessions WHERE partner_workspace_id = $1 AND closed_at IS NULL`, [own.workspaceId]),
    );
    expect(closed.rows[0].open).toBe(0);
  });

  it('frames each session by its own origins only', async () => {
    const a = await embedSession(partner, { workspace: sub.id, user: { id: 'a' }, origins: [ALLOWED_ORIGINS[0]] });
    const b = await embedSession(partner, { workspace: sub.id, user: { id: 'b' }, origins: [ALLOWED_ORIGINS[1]] });
    const launchedA = await launch(a.url);
    const launchedB = await launch(b.url);
    expect(launchedA.csp).toBe(`frame-ancestors ${ALLOWED_ORIGINS[0]}`);
    expect(launchedB.csp).toBe(`frame-ancestors ${ALLOWED_ORIGINS[1]}`);
    const page = await call('GET', '/decisions', { headers: { cookie: `ds_embed=${launchedB.token}`, accept: 'text/html' } });
    // The application's own policy, with the session's framing added to it.
    const pageCsp = (page.headers.get('content-security-policy') ?? '').split('; ');
    expect(pageCsp).toContain(`frame-ancestors ${ALLOWED_ORIGINS[1]}`);
    expect(pageCsp).toContain("script-src 'self'");
    expect(pageCsp.filter((directive) => directive.startsWith('frame-ancestors'))).toHaveLength(1);
    const api = await asEmbed(launchedA.token!, 'GET', `/app/v1/workspaces/${sub.id}/decisions`);
    expect(api.status).toBe(200);
    expect(api.headers.get('content-security-policy')).toBe(`frame-ancestors ${ALLOWED_ORIGINS[0]}`);
  });
});

interface RouteEntry {
  method: string;
  url: string;
  access: { kind: string; role?: string; embed?: string };
}

describe('the application endpoints under an embed session', () => {
  let partner: Workspace;
  let sub: any;
  let routes: RouteEntry[];

  beforeAll(async () => {
    partner = await partnerWorkspace();
    sub = await subWorkspace(partner, { external_id: ext(), name: 'Permissions' });
    const table = await fetch(`http://127.0.0.1:${opsPort(0)}/routes`);
    routes = ((await table.json()) as { routes: RouteEntry[] }).routes.filter((route) => route.url.startsWith('/app/v1/') && route.method !== 'HEAD');
  });

  const pathIn = (url: string, workspaceId: string) => url.replace(':ws', workspaceId).replace(/:(\w+)/g, `dec_${'b2'.repeat(10)}`);
  const bodyFor = (method: string) =>
    method === 'GET' || method === 'DELETE' ? undefined : { slug: 'probe', name: 'Probe', schema: {}, revision: 1, enabled: true };
  const refused = (status: number) => status === 401 || status === 403;

  it('declares a permission on the decision endpoints', () => {
    const declared = Object.fromEntries(routes.filter((route) => route.access.embed).map((route) => [`${route.method} ${route.url}`, route.access.embed]));
    expect(declared).toMatchObject({
      'GET /app/v1/workspaces/:ws/decisions': 'decisions:read',
      'POST /app/v1/workspaces/:ws/decisions': 'decisions:write',
      'PUT /app/v1/workspaces/:ws/decisions/:id/draft': 'decisions:write',
      'POST /app/v1/workspaces/:ws/decisions/:id/deploy': 'decisions:deploy',
    });
  });

  it('admits each route only with its permission, in its own sub-workspace', async () => {
    const everything = await openEmbed(partner, { workspace: sub.id, user: { id: 'all' } });
    const nothing = await openEmbed(partner, { workspace: sub.id, user: { id: 'none' }, permissions: [] });
    for (const route of routes) {
      const name = `${route.method} ${route.url}`;
      const path = pathIn(route.url, sub.id);
      const withAll = await asEmbed(everything.token, route.method, path, bodyFor(route.method));
      const withNone = await asEmbed(nothing.token, route.method, path, bodyFor(route.method));
      if (route.access.kind === 'embed' || route.access.embed === 'session') {
        expect({ name, all: refused(withAll.status), none: refused(withNone.status) }).toEqual({ name, all: false, none: false });
      } else if (route.access.embed) {
        expect({ name, all: refused(withAll.status), none: withNone.status, code: withNone.body?.error?.code }).toEqual({
          name,
          all: false,
          none: 403,
          code: 'FORBIDDEN',
        });
        expect(withNone.body.error.details).toEqual({ reason: 'embed_permission', permission: route.access.embed });
        // Only with exactly that permission, and only in its own sub-workspace.
        const only = await openEmbed(partner, { workspace: sub.id, user: { id: 'one' }, permissions: [route.access.embed] });
        const allBut = await openEmbed(partner, {
          workspace: sub.id,
          user: { id: 'but' },
          permissions: ALL_PERMISSIONS.filter((p) => p !== route.access.embed),
        });
        expect({ name, only: refused((await asEmbed(only.token, route.method, path, bodyFor(route.method))).status) }).toEqual({ name, only: false });
        expect({ name, allBut: (await asEmbed(allBut.token, route.method, path, bodyFor(route.method))).status }).toEqual({ name, allBut: 403 });
        const elsewhere = await asEmbed(everything.token, route.method, pathIn(route.url, partner.workspaceId), bodyFor(route.method));
        expect({ name, status: elsewhere.status, reason: elsewhere.body?.error?.details?.reason }).toEqual({ name, status: 403, reason: 'workspace_access' });
      } else if (route.access.kind === 'session') {
        const reply = withAll;
        expect({ name, status: reply.status, reason: reply.body?.error?.details?.reason }).toEqual({ name, status: 403, reason: 'embed_permission' });
      }
    }
  });

  it('refuses a write carried by the cookie from another site', async () => {
    const { token } = await openEmbed(partner, { workspace: sub.id, user: { id: 'csrf' } });
    const crossSite = await asEmbed(
      token,
      'POST',
      `/app/v1/workspaces/${sub.id}/decisions`,
      { slug: 'csrf', name: 'CSRF', schema: triageSchema() },
      { 'sec-fetch-site': 'cross-site' },
    );
    expectError(crossSite, 403, 'FORBIDDEN');
    expect(crossSite.body.error.details).toEqual({ reason: 'cross_site' });
    const sameOrigin = await asEmbed(
      token,
      'POST',
      `/app/v1/workspaces/${sub.id}/decisions`,
      { slug: 'csrf', name: 'CSRF', schema: triageSchema() },
      { 'sec-fetch-site': 'same-origin' },
    );
    expect(sameOrigin.status).toBe(201);
    expect((await asEmbed(token, 'GET', `/app/v1/workspaces/${sub.id}/decisions`)).body.data.map((d: { slug: string }) => d.slug)).toEqual(['csrf']);
  });

  it('is refused on the public API and never mixes with a user session', async () => {
    const { token } = await openEmbed(partner, { workspace: sub.id, user: { id: 'api' } });
    expectError(await asEmbed(token, 'GET', '/v1/decisions'), 401, 'INVALID_API_KEY');
    // A bearer session wins over the cookie: the owner's session acts as the owner.
    const members = await call('GET', `/app/v1/workspaces/${partner.workspaceId}/members`, {
      token: partner.session,
      headers: { cookie: `ds_embed=${token}` },
    });
    expect(members.status).toBe(200);
  });
});

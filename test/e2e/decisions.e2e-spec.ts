import { Client } from 'pg';
import { call, createDecision, deploy, deployedDecision, expectError, newWorkspace, runDecision, signUp, triageSchema, Workspace } from './support/api';
import { waitFor } from './support/cluster';

const decisionsPath = (ws: Workspace) => `/app/v1/workspaces/${ws.workspaceId}/decisions`;
const admin = (path: string, body: unknown) => call('PUT', path, { token: process.env.E2E_ADMIN_TOKEN, body });

describe('decision definitions', () => {
  it('goes through drafts and deploys: stale drafts refused, versions 1 and 2 deployed and run, contract read', async () => {
    const ws = await newWorkspace();
    const created = await call('POST', decisionsPath(ws), {
      token: ws.session,
      body: { slug: 'lifecycle', name: 'Lifecycle', description: 'From draft to v2', schema: triageSchema() },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^dec_[A-Za-z0-9]{20}$/), slug: 'lifecycle', name: 'Lifecycle', status: 'draft', revision: 1 });
    const id = created.body.id;
    const draftPath = `${decisionsPath(ws)}/${id}/draft`;

    const saved = await call('PUT', draftPath, { token: ws.session, body: { schema: triageSchema(), revision: 1 } });
    expect(saved.body).toEqual({ revision: 2 });
    const stale = await call('PUT', draftPath, { token: ws.session, body: { schema: triageSchema(), revision: 1 } });
    expectError(stale, 409, 'CONFLICT');
    expect(stale.body.error.details).toEqual({ currentRevision: 2 });

    expect(await deploy(ws, id)).toBe(1);
    const v1 = await runDecision(ws, 'lifecycle', { message: 'hello' });
    expect(v1.body.version).toBe(1);
    expect(Object.keys(v1.body.result)).toEqual(['intent', 'urgency', 'fraud']);

    const v2Schema = triageSchema();
    v2Schema.questions = v2Schema.questions.filter((question) => question.key !== 'urgency');
    v2Schema.composites = [{ key: 'risk', terms: [{ question: 'fraud', weight: 1 }] }];
    expect((await call('PUT', draftPath, { token: ws.session, body: { schema: v2Schema, revision: 2 } })).body).toEqual({ revision: 3 });
    // Saving a draft does not change what runs.
    expect((await runDecision(ws, 'lifecycle', { message: 'hello' })).body.version).toBe(1);
    expect(await deploy(ws, id)).toBe(2);
    const v2 = await runDecision(ws, 'lifecycle', { message: 'hello' });
    expect(v2.body.version).toBe(2);
    expect(Object.keys(v2.body.result)).toEqual(['intent', 'fraud']);
    expect(v2.body).not.toHaveProperty('scores');

    const contract = await call('GET', '/v1/decisions/lifecycle', { token: ws.apiKey });
    expect(contract.status).toBe(200);
    expect(contract.body).toMatchObject({ slug: 'lifecycle', status: 'deployed', version: 2 });
    expect(contract.body.questions.map((q: { key: string }) => q.key)).toEqual(['intent', 'fraud']);
    expect(contract.body.questions[0].options.map((o: { value: string }) => o.value)).toEqual(['refund', 'exchange', 'other']);
    expect(contract.body.state_schema).toMatchObject({ type: 'object' });
    expect(contract.body).not.toHaveProperty('policies');
    expect(contract.body).not.toHaveProperty('destinations');
    expect(contract.body).not.toHaveProperty('composites');
    expect((await runDecision(ws, 'lifecycle', contract.body.example_state)).status).toBe(200);

    const listed = await call('GET', '/v1/decisions', { token: ws.apiKey });
    expect(listed.body.data).toEqual([{ id, slug: 'lifecycle', name: 'Lifecycle', status: 'deployed', active_version: 2, endpoint_enabled: true }]);
  });

  it('runs see every change to their decision at once: created after a 404, deployed, switched off and on, redeployed', async () => {
    const ws = await newWorkspace();
    const endpoint = (id: string, enabled: boolean) => call('PUT', `${decisionsPath(ws)}/${id}/endpoint`, { token: ws.session, body: { enabled } });
    // Each answer below is asked twice, so that the second one could come from what the first left behind.
    for (let i = 0; i < 2; i += 1) expectError(await runDecision(ws, 'changing', { message: 'hello' }), 404, 'DECISION_NOT_FOUND');
    const { id } = await createDecision(ws, 'changing', triageSchema());
    for (let i = 0; i < 2; i += 1) expectError(await runDecision(ws, 'changing', { message: 'hello' }), 409, 'DECISION_NOT_DEPLOYED');
    expect(await deploy(ws, id)).toBe(1);
    for (let i = 0; i < 2; i += 1) expect((await runDecision(ws, 'changing', { message: 'hello' })).body.version).toBe(1);
    expect((await endpoint(id, false)).body).toEqual({ enabled: false });
    for (let i = 0; i < 2; i += 1) expectError(await runDecision(ws, 'changing', { message: 'hello' }), 409, 'DECISION_DISABLED');
    expect((await endpoint(id, true)).body).toEqual({ enabled: true });
    for (let i = 0; i < 2; i += 1) expect((await runDecision(ws, 'changing', { message: 'hello' })).status).toBe(200);
    expect(await deploy(ws, id)).toBe(2);
    for (let i = 0; i < 2; i += 1) expect((await runDecision(ws, 'changing', { message: 'hello' })).body.version).toBe(2);
    // Other workspaces' decisions of the same slug are not this one.
    const other = await newWorkspace();
    expectError(await runDecision(other, 'changing', { message: 'hello' }), 404, 'DECISION_NOT_FOUND');
  });

  it('lists every schema issue at once with paths', async () => {
    const ws = await newWorkspace();
    const schema = triageSchema();
    schema.questions[0]!.options = [{ value: 'Refund!', description: null }] as never;
    (schema as Record<string, unknown>).fallbackAction = 'panic';
    const reply = await call('POST', decisionsPath(ws), { token: ws.session, body: { slug: 'broken', name: 'Broken', schema } });
    expectError(reply, 422, 'INVALID_SCHEMA');
    const paths = reply.body.error.details.map((issue: { path: string }) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['questions.0.options', 'questions.0.options.0.value', 'fallbackAction']));
    for (const issue of reply.body.error.details) expect(typeof issue.message).toBe('string');
  });

  it('enforces slug, name and description rules', async () => {
    const ws = await newWorkspace();
    await createDecision(ws, 'taken', triageSchema());
    expectError(await call('POST', decisionsPath(ws), { token: ws.session, body: { slug: 'taken', name: 'Again', schema: triageSchema() } }), 409, 'CONFLICT');
    for (const slug of ['Upper', 'double--dash', '-lead', 'trail-', 'a'.repeat(65), 'sp ace']) {
      expectError(await call('POST', decisionsPath(ws), { token: ws.session, body: { slug, name: 'x', schema: triageSchema() } }), 400, 'INVALID_REQUEST');
    }
    expectError(
      await call('POST', decisionsPath(ws), { token: ws.session, body: { slug: 'long-name', name: 'n'.repeat(81), schema: triageSchema() } }),
      400,
      'INVALID_REQUEST',
    );
    expectError(
      await call('POST', decisionsPath(ws), {
        token: ws.session,
        body: { slug: 'long-desc', name: 'x', description: 'd'.repeat(501), schema: triageSchema() },
      }),
      400,
      'INVALID_REQUEST',
    );
    const atLimits = await call('POST', decisionsPath(ws), {
      token: ws.session,
      body: { slug: 'a'.repeat(64), name: 'n'.repeat(80), description: 'd'.repeat(500), schema: triageSchema() },
    });
    expect(atLimits.status).toBe(201);
  });

  it('holds the plan’s decision count: Genesis allows 2, then 402 until the plan changes', async () => {
    const ws = await newWorkspace();
    await createDecision(ws, 'one', triageSchema());
    await createDecision(ws, 'two', triageSchema());
    const third = await call('POST', decisionsPath(ws), { token: ws.session, body: { slug: 'three', name: 'Three', schema: triageSchema() } });
    expectError(third, 402, 'PLAN_LIMIT_REACHED');
    expect(third.body.error.details).toEqual({ limit: 2, used: 2, upgradeUrl: expect.any(String) });
    expect((await admin(`/admin/v1/workspaces/${ws.workspaceId}/plan`, { plan: 'developer' })).status).toBe(200);
    expect((await call('POST', decisionsPath(ws), { token: ws.session, body: { slug: 'three', name: 'Three', schema: triageSchema() } })).status).toBe(201);
  });

  it('lets one of two concurrent deploys win and refuses the other with 409', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, 'raced', triageSchema());
    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    // Activity is read from a second connection: inside a transaction PostgreSQL keeps one snapshot of it.
    const watcher = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await Promise.all([db.connect(), watcher.connect()]);
    try {
      // Hold the decision row so that both deploys read the same state and queue up on the row.
      await db.query('BEGIN');
      await db.query('SELECT 1 FROM decision_runner.decisions WHERE id = $1 FOR UPDATE', [id]);
      const deploys = [1, 2].map(() => call('POST', `${decisionsPath(ws)}/${id}/deploy`, { token: ws.session }));
      await waitFor(
        async () =>
          (
            await watcher.query(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE decisions SET active_version%'",
            )
          ).rows[0].n === 2,
        10_000,
        'both deploys waiting on the row',
      );
      await db.query('COMMIT');
      const replies = await Promise.all(deploys);
      expect(replies.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(replies.find((r) => r.status === 201)!.body).toEqual({ version: 1, breaking: [] });
      expectError(
        replies.find((r) => r.status === 409)!,
        409,
        'CONFLICT',
      );
      const versions = await db.query('SELECT version FROM decision_runner.decision_versions WHERE decision_id = $1', [id]);
      expect(versions.rows).toEqual([{ version: 1 }]);
    } finally {
      await Promise.all([db.end(), watcher.end()]);
    }
  });

  it('keeps a deployed version as it was deployed', async () => {
    const ws = await newWorkspace();
    const id = await deployedDecision(ws, 'frozen', triageSchema());
    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await db.connect();
    // A version stored under older, looser rules (here: an instruction longer than today's limit) still runs.
    await db.query(
      `UPDATE decision_runner.decision_versions SET schema = jsonb_set(schema, '{questions,0,instructions}', to_jsonb(repeat('x', 9000))) WHERE decision_id = $1`,
      [id],
    );
    await db.end();
    const reply = await runDecision(ws, 'frozen', { message: 'still runs' });
    expect(reply.status).toBe(200);
  });

  it('lets Members edit but not deploy, and Viewers change nothing', async () => {
    const ws = await newWorkspace();
    const [member, viewer] = await Promise.all([signUp(), signUp()]);
    const membersPath = `/app/v1/workspaces/${ws.workspaceId}/members`;
    expect((await call('POST', membersPath, { token: ws.session, body: { email: member.email, role: 'member' } })).status).toBe(201);
    expect((await call('POST', membersPath, { token: ws.session, body: { email: viewer.email, role: 'viewer' } })).status).toBe(201);
    expectError(await call('POST', membersPath, { token: ws.session, body: { email: viewer.email, role: 'viewer' } }), 409, 'CONFLICT');

    const created = await call('POST', decisionsPath(ws), { token: member.session, body: { slug: 'by-member', name: 'x', schema: triageSchema() } });
    expect(created.status).toBe(201);
    const denied = await call('POST', `${decisionsPath(ws)}/${created.body.id}/deploy`, { token: member.session });
    expectError(denied, 403, 'FORBIDDEN');
    expect(denied.body.error).not.toHaveProperty('details');
    expectError(
      await call('POST', decisionsPath(ws), { token: viewer.session, body: { slug: 'by-viewer', name: 'x', schema: triageSchema() } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call('PUT', `${decisionsPath(ws)}/${created.body.id}/draft`, { token: viewer.session, body: { schema: triageSchema(), revision: 1 } }),
      403,
      'FORBIDDEN',
    );
    const members = await call('GET', membersPath, { token: viewer.session });
    expect(members.body.data.map((m: { role: string }) => m.role).sort()).toEqual(['member', 'owner', 'viewer']);
  });
});

describe('templates', () => {
  it('lists nine built-in templates and every one deploys and runs with its sample state', async () => {
    const list = await call('GET', '/app/v1/templates', { token: (await signUp()).session });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(9);
    for (const summary of list.body.data) expect(Object.keys(summary).sort()).toEqual(['category', 'description', 'id', 'name', 'patterns']);

    const ws = await newWorkspace();
    expect((await admin(`/admin/v1/workspaces/${ws.workspaceId}/plan`, { plan: 'growth' })).status).toBe(200);
    for (const { id } of list.body.data) {
      const template = await call('GET', `/app/v1/templates/${id}`, { token: ws.session });
      expect(template.status).toBe(200);
      await deployedDecision(ws, id, template.body.schema);
      const run = await runDecision(ws, id, template.body.sample_state);
      expect({ id, status: run.status }).toEqual({ id, status: 200 });
    }
    expectError(await call('GET', '/app/v1/templates/no-such-template', { token: ws.session }), 404, 'NOT_FOUND');
  });
});

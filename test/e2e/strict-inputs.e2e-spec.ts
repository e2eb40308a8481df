import { call, deploy, deployedDecision, expectError, newWorkspace, runDecision, triageSchema, uniqueMarker, Workspace } from './support/api';
import { waitFor } from './support/cluster';

/**
 * Outcomes only where they mean something, and dates and version numbers read one strict way by every route:
 * an outcome on a run that answered nobody live is 409 by the public and the application route alike, and a day that
 * does not exist, a version with a leading zero or a version sent as a string is 400 naming the parameter.
 */

const paths = (reply: { body: any }) => (reply.body.error.details as Array<{ path: string }>).map((issue) => issue.path).sort();

describe('outcomes of executions that are not live runs', () => {
  it('are refused with 409 CONFLICT by both routes for playground, replay and shadow runs, and leave the report alone', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const decisionId = await deployedDecision(ws, 'judged', triageSchema(marker, { settings: { storeInput: true } }));
    const base = `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`;
    const live = await runDecision(ws, 'judged', { message: 'broken screen' });
    expect(live.status).toBe(200);

    const ofDraft = await call('POST', `${base}/playground`, { token: ws.session, body: { state: { message: 'a' } } });
    const ofVersion = await call('POST', `${base}/playground`, { token: ws.session, body: { state: { message: 'b' }, version: 1 } });
    expect([ofDraft.status, ofVersion.status]).toEqual([200, 200]);

    const replay = await call('POST', `${base}/replays`, { token: ws.session, body: { version: 1, last: 1 } });
    expect(replay.status).toBe(201);
    let replayed: string | null = null;
    await waitFor(
      async () => {
        const items = await call('GET', `${base}/replays/${replay.body.id}/executions`, { token: ws.session });
        replayed = items.body.data[0]?.replay_execution_id ?? null;
        return replayed !== null;
      },
      30_000,
      'the replay',
    );

    // The draft becomes version 2, shadowing every run of version 1.
    expect((await call('POST', `${base}/shadow`, { token: ws.session, body: { rate: 100 } })).status).toBe(201);
    expect((await runDecision(ws, 'judged', { message: 'shadowed' })).status).toBe(200);
    let shadowed: string | null = null;
    await waitFor(
      async () => {
        const listed = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions?limit=100&source=shadow`, { token: ws.session });
        shadowed = listed.body.data.find((execution: { source: string }) => execution.source === 'shadow')?.id ?? null;
        return shadowed !== null;
      },
      30_000,
      'the shadow run',
    );

    const outcome = { answers: { intent: 'refund' }, action: 'continue' };
    for (const id of [ofDraft.body.execution_id, ofVersion.body.execution_id, replayed!, shadowed!]) {
      const byKey = await call('POST', `/v1/executions/${id}/outcome`, { token: ws.apiKey, body: outcome });
      expectError(byKey, 409, 'CONFLICT');
      expect(byKey.body.error.message).toContain('Outcomes are recorded only for live runs of a deployed version');
      expectError(await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/executions/${id}/outcome`, { token: ws.session, body: outcome }), 409, 'CONFLICT');
    }
    expect((await call('POST', `/v1/executions/${live.body.execution_id}/outcome`, { token: ws.apiKey, body: outcome })).status).toBe(200);

    for (const version of [1, 2]) {
      const report = await call('GET', `${base}/quality?version=${version}`, { token: ws.session });
      expect(report.status).toBe(200);
      expect(report.body.action.labelled).toBe(version === 1 ? 1 : 0);
    }
  });
});

describe('dates and version numbers', () => {
  let ws: Workspace;
  let base: string;

  beforeAll(async () => {
    ws = await newWorkspace();
    const decisionId = await deployedDecision(ws, 'parsed', triageSchema(uniqueMarker(), { settings: { storeInput: true } }));
    base = `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`;
    // A second version, so that version 1 is one a shadow, a rollback or a comparison may name.
    await deploy(ws, decisionId);
  });

  it('a day that does not exist is 400 naming the parameter, on every route that takes a date', async () => {
    const report = await call('GET', `${base}/quality?from=2026-02-30&to=2026-03-01`, { token: ws.session });
    expectError(report, 400, 'INVALID_REQUEST');
    expect(paths(report)).toEqual(['from']);
    expect(report.body.error.details[0].message).toContain('February 2026 has no day 30');
    const both = await call('GET', `${base}/quality?from=2026-02-29&to=2026-04-01T24:00:00Z`, { token: ws.session });
    expect(paths(both)).toEqual(['from', 'to']);
    expect((await call('GET', `${base}/quality?from=2024-02-29&to=2024-03-01T00:00:00%2B01:00`, { token: ws.session })).status).toBe(200);

    const overview = await call('GET', `${base}/overview?from=2026-02-30T00:00:00Z&to=2026-03-03T00:00:00Z`, { token: ws.session });
    expectError(overview, 400, 'INVALID_REQUEST');
    expect(paths(overview)).toEqual(['from']);

    const replay = await call('POST', `${base}/replays`, { token: ws.session, body: { from: '2026-02-30T00:00:00Z', to: '2026-03-03T00:00:00Z' } });
    expectError(replay, 400, 'INVALID_REQUEST');
    expect(paths(replay)).toEqual(['from']);
  });

  it('a version must be canonical digits in a path or a query, on the report and the rollback alike', async () => {
    const report = await call('GET', `${base}/quality?version=01`, { token: ws.session });
    expectError(report, 400, 'INVALID_REQUEST');
    expect(paths(report)).toEqual(['version']);
    const rollback = await call('POST', `${base}/versions/01/rollback`, { token: ws.session });
    expectError(rollback, 400, 'INVALID_REQUEST');
    expect(paths(rollback)).toEqual(['version']);
    expect(report.body.error.details[0].message).toBe(rollback.body.error.details[0].message);
    for (const query of ['from=01&to=2', 'from=1&to=%2B2', 'from=1&to=2.0']) {
      expectError(await call('GET', `${base}/versions/compare?${query}`, { token: ws.session }), 400, 'INVALID_REQUEST');
    }
    expect((await call('GET', `${base}/versions/compare?from=1&to=2`, { token: ws.session })).status).toBe(200);
    expect((await call('GET', `${base}/quality?version=1`, { token: ws.session })).status).toBe(200);
    expectError(await runDecision(ws, 'parsed', { message: 'x' }, { 'decision-version': '01' }), 400, 'INVALID_REQUEST');
  });

  it('a version in a body must be a JSON number: "1" is refused by the shadow, the replay, the fit and the playground alike', async () => {
    for (const [path, body] of [
      ['shadow', { version: '1', rate: 10 }],
      ['replays', { version: '1', last: 1 }],
      ['calibration', { version: '1' }],
      ['playground', { version: '1', state: { message: 'x' } }],
    ] as const) {
      const reply = await call('POST', `${base}/${path}`, { token: ws.session, body });
      expectError(reply, 400, 'INVALID_REQUEST');
      expect(reply.body.error.details).toEqual([{ path: 'version', message: expect.stringContaining('as a JSON number (1, not "1")') }]);
    }
    const shadow = await call('GET', `${base}/shadow`, { token: ws.session });
    expect(shadow.body.shadow).toBeNull();
    expect((await call('POST', `${base}/shadow`, { token: ws.session, body: { version: 1, rate: 10 } })).status).toBe(201);
  });
});

import {
  call,
  createDecision,
  deploy,
  engineRequests,
  expectError,
  newWorkspace,
  roomyWorkspace,
  runDecision,
  scriptEngine,
  signUp,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';
import type { Browser } from 'playwright-core';
import { checkScreen, launchChromium, signedInContext, watchProblems } from './support/browser';
import { eventually } from './support/deliveries';

/** Shadowing a candidate version on live traffic: sampled runs evaluated again after they answer, compared, promoted, stopped. */

const app = (ws: Workspace, id: string, rest = '') => `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}${rest}`;

/** A version that blocks at `threshold` of fraud and otherwise continues (escalating when unsure). */
const versionSchema = (context: string, threshold: number) =>
  triageSchema(context, { policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: threshold }, action: 'block' }] });

async function saveDraft(ws: Workspace, id: string, schema: unknown): Promise<void> {
  const current = await call('GET', app(ws, id), { token: ws.session });
  const saved = await call('PUT', app(ws, id, '/draft'), { token: ws.session, body: { schema, revision: current.body.revision } });
  expect(saved.status).toBe(200);
}

const shadowOf = async (ws: Workspace, id: string) => (await call('GET', app(ws, id, '/shadow'), { token: ws.session })).body;

/** Fraud probabilities of the cases, each answered with confidence; the active version blocks at 0.95, the candidate at 0.8. */
const FRAUD = [0.99, 0.9, 0.92, 0.05];

/** The run response with what differs between any two runs (their id and measured latency) taken out. */
function stable(body: string): string {
  const parsed = JSON.parse(body) as { execution_id: string; metrics: { latency_ms: number } };
  return body.replace(parsed.execution_id, 'EXEC').replace(`"latency_ms":${parsed.metrics.latency_ms}`, '"latency_ms":0');
}

/** Scripts the engine to answer each case with confidence, whichever version asks. */
async function scriptCases(marker: string): Promise<Array<{ message: string }>> {
  const cases = FRAUD.map((fraud, i) => ({ message: `case-${i}-${marker}`, fraud }));
  for (const { message, fraud } of cases) {
    const answers = { intent: { refund: 1, exchange: 0, other: 0 }, urgency: { calm: 1, annoyed: 0, furious: 0 }, fraud: { yes: fraud, no: 1 - fraud } };
    await scriptEngine(message, [{ answers }], true);
  }
  return cases.map(({ message }) => ({ message }));
}

let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
});

describe('shadow', () => {
  it('at 100 % doubles engine calls but not billing, leaves live answers byte-identical and compares exactly', async () => {
    const ws = await roomyWorkspace();
    const marker = uniqueMarker();
    const { id } = await createDecision(ws, 'shadowed', versionSchema(marker, 0.95));
    expect(await deploy(ws, id)).toBe(1);
    const cases = await scriptCases(marker);

    const runAll = async () => {
      const bodies: string[] = [];
      for (const { message } of cases) {
        const run = await runDecision(ws, 'shadowed', { message });
        expect(run.status).toBe(200);
        bodies.push(run.text);
      }
      return bodies;
    };
    const alone = await runAll();
    expect(await engineRequests(marker)).toHaveLength(4);

    await saveDraft(ws, id, versionSchema(marker, 0.8));
    const started = await call('POST', app(ws, id, '/shadow'), { token: ws.session, body: { rate: 100 } });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ active_version: 1, shadow: { version: 2, rate: 100 }, comparison: { samples: 0, compared: 0 } });
    const versions = (await call('GET', app(ws, id, '/versions'), { token: ws.session })).body.data;
    expect(versions.map((v: { version: number; active: boolean; shadow: boolean }) => [v.version, v.active, v.shadow])).toEqual([
      [2, false, true],
      [1, true, false],
    ]);

    const shadowed = await runAll();
    expect(shadowed.map(stable)).toEqual(alone.map(stable));
    expect(shadowed.map((body) => JSON.parse(body).version)).toEqual([1, 1, 1, 1]);

    await eventually(async () => (await engineRequests(marker)).length === 12, 15_000, 'four shadow engine calls');
    const comparison = (
      await eventually(async () => ((await shadowOf(ws, id)).comparison?.samples === 4 ? await shadowOf(ws, id) : null), 15_000, 'four shadow runs')
    ).comparison;
    expect(comparison).toMatchObject({
      samples: 4,
      shadow_errors: 0,
      compared: 4,
      action: { compared: 4, agreed: 2, rate: 0.5 },
      confusion: [
        { live: 'continue', shadow: 'block', count: 2 },
        { live: 'block', shadow: 'block', count: 1 },
        { live: 'continue', shadow: 'continue', count: 1 },
      ],
      accuracy: { action: { labelled: 0, live: null, shadow: null } },
    });
    expect(comparison.questions.map((q: { key: string; rate: number }) => [q.key, q.rate])).toEqual([
      ['intent', 1],
      ['urgency', 1],
      ['fraud', 1],
    ]);
    expect(comparison.shadow.input_tokens).toBeGreaterThan(0);
    expect(comparison.live.latency_ms.p50).not.toBeNull();

    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.body.usage).toMatchObject({ used: 8, reserved: 0 });

    // Each shadow run is an execution of its own, of the shadow's version, that fired no destination.
    const executions = (await call('GET', '/v1/executions?decision=shadowed&limit=100', { token: ws.apiKey })).body.data;
    const shadowRuns = executions.filter((e: { source: string }) => e.source === 'shadow');
    expect(shadowRuns).toHaveLength(4);
    expect(new Set(shadowRuns.map((e: { version: number; destinations: unknown }) => `${e.version} ${JSON.stringify(e.destinations)}`))).toEqual(
      new Set(['2 null']),
    );

    // An outcome reported on a live execution scores both versions.
    const liveId = JSON.parse(shadowed[1]!).execution_id;
    expect((await call('POST', `/v1/executions/${liveId}/outcome`, { token: ws.apiKey, body: { action: 'block' } })).status).toBe(200);
    expect((await shadowOf(ws, id)).comparison.accuracy.action).toEqual({ labelled: 1, live: 0, shadow: 1 });
  });

  it('never waits for a slow or failing shadow, then promotes it, shadows an older version, and stops', async () => {
    const ws = await roomyWorkspace();
    const marker = uniqueMarker();
    const { id } = await createDecision(ws, 'candidate', versionSchema(marker, 0.9));
    await deploy(ws, id);
    // The candidate's engine calls carry its own context: slow, then answered outside the contract.
    const candidate = `${marker}-candidate`;
    await scriptEngine(candidate, [{ delayMs: 3_000, malformed: true }], true);
    await saveDraft(ws, id, versionSchema(candidate, 0.5));

    for (const [body, code] of [
      [{ rate: 0 }, 'INVALID_REQUEST'],
      [{ rate: 101 }, 'INVALID_REQUEST'],
      [{ rate: 50.5 }, 'INVALID_REQUEST'],
      [{ rate: 50, version: 2 ** 31 }, 'INVALID_REQUEST'],
      [{ rate: 50, version: 1 }, 'CONFLICT'],
      [{ rate: 50, version: 7 }, 'NOT_FOUND'],
    ] as const) {
      const refused = await call('POST', app(ws, id, '/shadow'), { token: ws.session, body });
      expectError(refused, code === 'INVALID_REQUEST' ? 400 : code === 'CONFLICT' ? 409 : 404, code);
    }
    const stranger = await newWorkspace();
    expectError(await call('GET', `/app/v1/workspaces/${stranger.workspaceId}/decisions/${id}/shadow`, { token: stranger.session }), 404, 'NOT_FOUND');
    expectError(await call('POST', app(ws, id, '/shadow/promote'), { token: ws.session }), 409, 'CONFLICT');
    // Like deploy: Admin (or decisions:deploy); a member may neither read, start, promote nor stop a shadow.
    const member = await signUp();
    const added = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: member.email, role: 'member' } });
    expect(added.status).toBe(201);
    for (const [method, path, body] of [
      ['GET', '/shadow', undefined],
      ['POST', '/shadow', { rate: 50 }],
      ['POST', '/shadow/promote', undefined],
      ['DELETE', '/shadow', undefined],
    ] as const) {
      expectError(await call(method, app(ws, id, path), { token: member.session, body }), 403, 'FORBIDDEN');
    }

    expect((await call('POST', app(ws, id, '/shadow'), { token: ws.session, body: { rate: 100 } })).status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const startedAt = Date.now();
      const run = await runDecision(ws, 'candidate', { message: `slow-${i}` });
      expect(run.status).toBe(200);
      expect(run.body.version).toBe(1);
      expect(Date.now() - startedAt).toBeLessThan(2_500);
    }
    const failed = await eventually(
      async () => {
        const state = await shadowOf(ws, id);
        return state.comparison.shadow_errors === 2 ? state : null;
      },
      20_000,
      'two failed shadow runs',
    );
    expect(failed.comparison).toMatchObject({ samples: 2, compared: 0, action: { compared: 0, rate: null } });
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.body.usage).toMatchObject({ used: 2, reserved: 0 });

    // Changing the rate keeps the shadow and its comparison.
    const lowered = await call('POST', app(ws, id, '/shadow'), { token: ws.session, body: { rate: 10, version: 2 } });
    expect(lowered.body).toMatchObject({ shadow: { version: 2, rate: 10, started_at: failed.shadow.started_at }, comparison: { samples: 2 } });

    // A shadow newer than the active version becomes active as it is.
    const promoted = await call('POST', app(ws, id, '/shadow/promote'), { token: ws.session });
    expect(promoted.status).toBe(201);
    expect(promoted.body).toEqual({ version: 2, breaking: [] });
    expect(await shadowOf(ws, id)).toMatchObject({ active_version: 2, shadow: null, comparison: null });
    expect((await call('GET', '/v1/decisions/candidate', { token: ws.apiKey })).body.version).toBe(2);

    // An older version is promoted as a copy, so numbers only grow.
    expect((await call('POST', app(ws, id, '/shadow'), { token: ws.session, body: { rate: 100, version: 1 } })).status).toBe(201);
    const copied = await call('POST', app(ws, id, '/shadow/promote'), { token: ws.session });
    expect(copied.body).toEqual({ version: 3, breaking: [] });
    const history = (await call('GET', app(ws, id, '/versions'), { token: ws.session })).body.data;
    expect(history[0]).toMatchObject({ version: 3, active: true, rolled_back_from: 1 });

    // Stopped: runs go on alone.
    expect((await call('POST', app(ws, id, '/shadow'), { token: ws.session, body: { rate: 100, version: 2 } })).status).toBe(201);
    const stop = await call('DELETE', app(ws, id, '/shadow'), { token: ws.session });
    expect(stop.status).toBe(204);
    expect((await shadowOf(ws, id)).shadow).toBeNull();
    const before = (await engineRequests(candidate)).length;
    expect((await runDecision(ws, 'candidate', { message: 'after stop' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await engineRequests(candidate)).toHaveLength(before);
  });

  it('in the browser: starts a shadow of the draft, shows its live comparison, and promotes it after confirming', async () => {
    const ws = await roomyWorkspace();
    const marker = uniqueMarker();
    const { id } = await createDecision(ws, 'shadow-screen', versionSchema(marker, 0.95));
    await deploy(ws, id);
    const cases = await scriptCases(marker);
    await saveDraft(ws, id, versionSchema(marker, 0.8));

    browser = await launchChromium();
    const page = await (await signedInContext(browser, ws)).newPage();
    const problems: string[] = [];
    watchProblems(page, problems);
    const checked: Record<string, string[]> = {};
    await page.goto(`/decisions/${id}/history`);
    const panel = page.getByRole('region', { name: 'Shadow a candidate on live traffic' });
    await panel.getByLabel('Live runs sampled (%)').fill('100');
    await panel.getByRole('button', { name: 'Start shadow' }).click();
    await panel.getByText('Version 2 shadows version 1 on 100 % of live runs.').waitFor();

    for (const state of cases) expect((await runDecision(ws, 'shadow-screen', state)).status).toBe(200);
    // The panel reads the comparison again by itself while the shadow runs.
    await panel.getByText('4 shadow runs, 4 compared, 0 failed.').waitFor({ timeout: 30_000 });
    await panel.getByText('Same action: 50 %').waitFor();
    await checkScreen(page, 'shadow', checked);
    await panel.getByRole('region', { name: 'Actions: active against shadow' }).scrollIntoViewIfNeeded();
    await checkScreen(page, 'shadow-comparison', checked, false);

    await page.setViewportSize({ width: 360, height: 780 });
    const overflow = await page.evaluate(
      () => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth,
    );
    await checkScreen(page, 'narrow-shadow', checked);
    expect(overflow).toBe(0);
    await page.setViewportSize({ width: 1280, height: 860 });

    await panel.getByRole('button', { name: 'Promote to active' }).click();
    const dialog = page.getByRole('dialog', { name: 'Promote to active' });
    await checkScreen(page, 'shadow-promote', checked, false);
    await dialog.getByRole('button', { name: 'Promote to active' }).click();
    await panel.getByText('Version 2 is now active; the shadow has ended.').waitFor();
    expect((await call('GET', '/v1/decisions/shadow-screen', { token: ws.apiKey })).body.version).toBe(2);

    expect(Object.values(checked).flat()).toEqual([]);
    expect(problems).toEqual([]);
  });
});

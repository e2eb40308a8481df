import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { call, Reply, triageSchema, uniqueMarker } from './support/api';
import { checkScreen, launchChromium, watchProblems } from './support/browser';
import { Cluster, OwnCluster, startOwnCluster, waitFor } from './support/cluster';

/**
 * Replaying a draft against a decision's past executions. A cluster of its own: one test kills the
 * decision-runner that runs the replay, and the launcher brings it back.
 */
const ADMIN_TOKEN = 'replays-admin-token-0123456789';
const EXECUTIONS = 200;
/** Each engine answer takes this long, so that a replay of 200 is still running when the test acts on it. */
const ENGINE_DELAY_MS = 40;
/** Slow enough that a cancel lands while the replay's engine calls are in flight. */
const SLOW_ENGINE_DELAY_MS = 3_000;

let own: OwnCluster;
let cluster: Cluster;

beforeAll(async () => {
  own = await startOwnCluster('replays', { ADMIN_TOKEN, RESTART_DELAY_MS: '500' });
  cluster = own.cluster;
}, 180_000);

afterAll(async () => {
  await own?.stop();
});

const api = (method: string, path: string, options: Parameters<typeof call>[2] = {}): Promise<Reply> => call(method, path, options, cluster.baseUrl);

interface Setup {
  session: string;
  ws: string;
  decisionId: string;
  marker: string;
  base: string;
}

/** p(fraud) of the i-th execution: 0.05, 0.15, … 0.95, each ten times in every hundred. */
const fraudOf = (i: number) => (i % 10) / 10 + 0.05;
const message = (marker: string, i: number) => `${marker}-${String(i).padStart(3, '0')}-end`;

function schema(marker: string, threshold: number) {
  return triageSchema(marker, {
    policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: threshold }, action: 'block' }],
    settings: { storeInput: true },
  });
}

/** A workspace with a deployed decision (block at p(fraud) ≥ 0.5) run on 200 states, and a draft that blocks at ≥ 0.7. */
async function decisionWithHistory(): Promise<Setup> {
  const marker = uniqueMarker();
  const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${marker}@example.com`, password: 'correcthorse42', name: 'x' } });
  const session = user.body.session.token;
  const ws = (await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'replays' } })).body.id;
  const plan = await api('PUT', `/admin/v1/workspaces/${ws}/plan`, {
    token: ADMIN_TOKEN,
    body: { plan: 'enterprise', overrides: { rate_limit_per_minute: 1_000_000 } },
  });
  expect(plan.status).toBe(200);
  const apiKey = (await api('POST', `/app/v1/workspaces/${ws}/api-keys`, { token: session, body: { name: 'k', mode: 'live' } })).body.key;
  const created = await api('POST', `/app/v1/workspaces/${ws}/decisions`, {
    token: session,
    body: { slug: 'triage', name: 'triage', schema: schema(marker, 0.5) },
  });
  const decisionId = created.body.id;
  expect((await api('POST', `/app/v1/workspaces/${ws}/decisions/${decisionId}/deploy`, { token: session })).status).toBe(201);

  await scriptAnswers(marker, ENGINE_DELAY_MS);
  for (let start = 0; start < EXECUTIONS; start += 20) {
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, k) => api('POST', '/v1/decisions/triage', { token: apiKey, body: { state: { message: message(marker, start + k) } } })),
    );
    expect(runs.map((run) => run.status)).toEqual(Array(20).fill(200));
  }
  const saved = await api('PUT', `/app/v1/workspaces/${ws}/decisions/${decisionId}/draft`, {
    token: session,
    body: { schema: schema(marker, 0.7), revision: 1 },
  });
  expect(saved.status).toBe(200);
  return { session, ws, decisionId, marker, base: `/app/v1/workspaces/${ws}/decisions/${decisionId}/replays` };
}

/** The engine's answer to each of the 200 states, after `delayMs`; a later call replaces the earlier scripts' delay. */
async function scriptAnswers(marker: string, delayMs: number): Promise<void> {
  const scripted = await Promise.all(
    Array.from({ length: EXECUTIONS }, (_, i) => {
      const answers = {
        intent: { refund: 0.9, exchange: 0.1, other: 0 },
        urgency: { calm: 0, annoyed: 1, furious: 0 },
        fraud: { yes: fraudOf(i), no: 1 - fraudOf(i) },
      };
      return call('POST', '/_sim/scripts', { body: { match: message(marker, i), steps: [{ answers, delayMs }], repeat: true } }, own.simulator.url);
    }),
  );
  expect(scripted.map((reply) => reply.status)).toEqual(Array(EXECUTIONS).fill(201));
}

async function finished(setup: Setup, id: string): Promise<Reply> {
  let reply!: Reply;
  await waitFor(
    async () => {
      reply = await api('GET', `${setup.base}/${id}`, { token: setup.session });
      return reply.body.status !== 'running';
    },
    120_000,
    'the replay to finish',
  );
  return reply;
}

async function database<T>(use: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: own.databaseUrl });
  await db.connect();
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}

/** Old block, new continue: p(fraud) 0.55 and 0.65, 40 of 200. Everything else agrees. */
const EXPECTED_RESULT = {
  compared: 200,
  failed: 0,
  action: { agreed: 160, agreement: 0.8 },
  questions: [
    { key: 'intent', compared: 200, agreed: 200, agreement: 1 },
    { key: 'urgency', compared: 200, agreed: 200, agreement: 1 },
    { key: 'fraud', compared: 200, agreed: 200, agreement: 1 },
  ],
  confusion: {
    actions: ['continue', 'block'],
    counts: [
      [100, 0],
      [40, 60],
    ],
  },
  // Outcomes reported by the customer are not reviewers' answers.
  reviewers: {
    executions: 0,
    action: { compared: 0, old: null, new: null },
    questions: ['intent', 'urgency', 'fraud'].map((key) => ({ key, compared: 0, old: null, new: null })),
  },
};

describe('replays', () => {
  it('replays 200 executions against a draft that moves one threshold, through a kill of the runner, each exactly once', async () => {
    const setup = await decisionWithHistory();
    // Outcomes reported on six executions: four the draft now gets right, two both get right.
    const listed = await api('GET', `/app/v1/workspaces/${setup.ws}/executions?decision=triage&limit=100`, { token: setup.session });
    const withFraud = (p: number) => listed.body.data.filter((execution: { result: { fraud: number } }) => Math.abs(execution.result.fraud - p) < 1e-9);
    const labels = [
      ...withFraud(0.55)
        .slice(0, 4)
        .map((e: { id: string }) => [e.id, 'continue']),
      ...withFraud(0.95)
        .slice(0, 2)
        .map((e: { id: string }) => [e.id, 'block']),
    ];
    expect(labels).toHaveLength(6);
    for (const [executionId, action] of labels) {
      expect((await api('PUT', `/app/v1/workspaces/${setup.ws}/executions/${executionId}/outcome`, { token: setup.session, body: { action } })).status).toBe(
        200,
      );
    }
    const started = await api('POST', setup.base, { token: setup.session, body: { version: null, last: EXECUTIONS } });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ version: null, selection: { last: EXECUTIONS }, status: 'running', progress: { total: EXECUTIONS } });
    const id = started.body.id;

    await waitFor(async () => (await api('GET', `${setup.base}/${id}`, { token: setup.session })).body.progress.done >= 40, 60_000, '40 replayed');
    const log = () => readFileSync(cluster.logFile, 'utf8');
    const returns = (log().match(/decision-runner is back/g) ?? []).length;
    const pid = Number(/all-in-one: processes: .*?decision-runner (\d+)/.exec(log())![1]);
    process.kill(pid, 'SIGKILL');
    const atKill = (
      await database((db) => db.query(`SELECT count(*)::int AS n FROM decision_runner.replay_items WHERE replay_id = $1 AND status = 'done'`, [id]))
    ).rows[0].n;
    expect(atKill).toBeLessThan(EXECUTIONS);
    await waitFor(async () => (log().match(/decision-runner is back/g) ?? []).length > returns, 30_000, 'the runner back');

    const done = await finished(setup, id);
    expect(done.body.status).toBe('completed');
    expect(done.body.progress).toEqual({ total: EXECUTIONS, done: EXECUTIONS, failed: 0, cancelled: 0, pending: 0, running: 0 });
    expect(done.body.result).toEqual({ ...EXPECTED_RESULT, accuracy: { labelled: 6, old: 2 / 6, new: 1 } });
    // The active version, run beside the draft on each execution, agrees with itself.
    expect(done.body.baseline).toMatchObject({ version: 1, same_as_result: false, compared: EXECUTIONS, action: { agreed: EXECUTIONS, agreement: 1 } });

    // Each past execution has exactly one replay recorded, and it is the one its item names.
    const recorded = await database((db) =>
      db.query(
        `SELECT i.execution_id, count(e.id)::int AS replays, min(e.source) AS source, min(e.version) AS version
           FROM decision_runner.replay_items i LEFT JOIN decision_runner.executions e ON e.id = i.replay_execution_id
          WHERE i.replay_id = $1 GROUP BY i.execution_id`,
        [id],
      ),
    );
    expect(recorded.rows).toHaveLength(EXECUTIONS);
    expect(recorded.rows.every((row) => row.replays === 1 && row.source === 'replay' && row.version === 0)).toBe(true);
    const replayRows = await database((db) =>
      db.query(`SELECT count(*)::int AS n FROM decision_runner.executions WHERE workspace_id = $1 AND source = 'replay'`, [setup.ws]),
    );
    expect(replayRows.rows[0].n).toBe(EXECUTIONS);

    // Their tokens count in the usage rollups, as test traffic of source "replay".
    const rollups = await database((db) =>
      db.query(
        `SELECT sum(runs)::int AS runs, bool_or(livemode) AS live, sum(input_tokens)::int AS tokens FROM decision_runner.execution_rollup_totals
          WHERE workspace_id = $1 AND source = 'replay' AND grain = 60`,
        [setup.ws],
      ),
    );
    expect(rollups.rows[0]).toMatchObject({ runs: EXECUTIONS, live: false });
    expect(rollups.rows[0].tokens).toBeGreaterThan(0);

    // Each replayed execution, old against new, paged in replay order (oldest execution first).
    const first = await api('GET', `${setup.base}/${id}/executions?limit=10`, { token: setup.session });
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(10);
    expect(first.body.next_after).toBe(10);
    for (const item of first.body.data) {
      const fraud = item.old.answers.fraud;
      expect(item).toMatchObject({
        status: 'done',
        replay_execution_id: expect.stringMatching(/^exec_/),
        old: { action: fraud >= 0.5 ? 'block' : 'continue', answers: { intent: 'refund', urgency: 'annoyed', fraud } },
        new: { action: fraud >= 0.7 ? 'block' : 'continue', answers: { intent: 'refund', urgency: 'annoyed', fraud } },
        error: null,
      });
    }
    const last = await api('GET', `${setup.base}/${id}/executions?after=190&limit=50`, { token: setup.session });
    expect(last.body.data.map((item: { position: number }) => item.position)).toEqual(Array.from({ length: 10 }, (_, k) => 191 + k));
    expect(last.body.next_after).toBeNull();

    // Replays are not billed: the ledger counts the 200 live runs only.
    const account = await api('GET', `/app/v1/workspaces/${setup.ws}/usage`, { token: setup.session });
    expect(account.body.account.usage.used).toBe(EXECUTIONS);
  }, 300_000);

  it('cancels: calls in flight finish, are recorded and count against the cap; nothing more runs; bad requests and other workspaces are refused', async () => {
    const setup = await decisionWithHistory();
    const started = await api('POST', setup.base, { token: setup.session, body: { version: 1, last: EXECUTIONS } });
    expect(started.status).toBe(201);
    const id = started.body.id;
    await waitFor(async () => (await api('GET', `${setup.base}/${id}`, { token: setup.session })).body.progress.done >= 4, 60_000, 'a few replayed');
    // From here each engine call takes 3 s: once the fast calls still in flight are over, the cancel lands mid-call.
    await scriptAnswers(setup.marker, SLOW_ENGINE_DELAY_MS);
    await new Promise((done) => setTimeout(done, 500));
    const cancelled = await api('POST', `${setup.base}/${id}/cancel`, { token: setup.session });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const { done: ranAtCancel, running: inFlight } = cancelled.body.progress;
    expect(inFlight).toBeGreaterThan(0);
    expect(cancelled.body.progress.cancelled).toBe(EXECUTIONS - ranAtCancel - inFlight);
    expect(cancelled.body.progress.pending).toBe(0);

    // The calls in flight finish and are recorded; nothing else runs.
    await waitFor(async () => (await api('GET', `${setup.base}/${id}`, { token: setup.session })).body.progress.running === 0, 30_000, 'calls in flight over');
    await new Promise((done) => setTimeout(done, 1_000));
    const spent = ranAtCancel + inFlight;
    const later = await api('GET', `${setup.base}/${id}`, { token: setup.session });
    expect(later.body.status).toBe('cancelled');
    expect(later.body.progress).toEqual({ ...cancelled.body.progress, done: spent, running: 0 });
    // Version 1 against its own history agrees with itself.
    expect(later.body.result.action.agreement).toBe(1);
    expect(later.body.result.compared).toBe(spent);
    expect(later.body.result.accuracy).toEqual({ labelled: 0, old: null, new: null });
    const recorded = await database((db) =>
      db.query(`SELECT count(*)::int AS n FROM decision_runner.executions WHERE workspace_id = $1 AND source = 'replay'`, [setup.ws]),
    );
    expect(recorded.rows[0].n).toBe(spent);
    const rolledUp = await database((db) =>
      db.query(`SELECT sum(runs)::int AS runs FROM decision_runner.execution_rollup_totals WHERE workspace_id = $1 AND source = 'replay' AND grain = 60`, [
        setup.ws,
      ]),
    );
    expect(rolledUp.rows[0].runs).toBe(spent);
    expect((await api('POST', `${setup.base}/${id}/cancel`, { token: setup.session })).body.progress).toEqual(later.body.progress);

    const listed = await api('GET', setup.base, { token: setup.session });
    expect(listed.body.data.map((replay: { id: string }) => replay.id)).toEqual([id]);

    const refused = await api('POST', setup.base, { token: setup.session, body: { version: 0, last: 1_001 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('INVALID_REQUEST');
    expect(refused.body.error.details.map((issue: { path: string }) => issue.path)).toEqual(['version', 'last']);
    const unknownVersion = await api('POST', setup.base, { token: setup.session, body: { version: 9, last: 5 } });
    expect(unknownVersion.status).toBe(404);
    const empty = await api('POST', setup.base, { token: setup.session, body: { from: '2001-01-01T00:00:00Z', to: '2001-01-02T00:00:00Z' } });
    expect(empty.status).toBe(400);
    const badPage = await api('GET', `${setup.base}/${id}/executions?limit=201`, { token: setup.session });
    expect(badPage.status).toBe(400);

    // The daily cap: on genesis, 1,000 replayed executions a day; what the cancelled replay ran counts, the calls in
    // flight at the cancel included, the rest not.
    const genesis = await api('PUT', `/admin/v1/workspaces/${setup.ws}/plan`, {
      token: ADMIN_TOKEN,
      body: { plan: 'genesis', overrides: { rate_limit_per_minute: 1_000_000 } },
    });
    expect(genesis.status).toBe(200);
    // 4 × 200 more fit beside what the cancelled replay spent; then exactly 200 - spent are left.
    const more: string[] = [];
    for (let k = 0; k < 4; k++) {
      const fits = await api('POST', setup.base, { token: setup.session, body: { version: 1, last: EXECUTIONS } });
      expect(fits.status).toBe(201);
      more.push(fits.body.id);
    }
    const capped = await api('POST', setup.base, { token: setup.session, body: { version: 1, last: EXECUTIONS - spent + 1 } });
    expect(capped.status).toBe(429);
    expect(capped.body.error.code).toBe('RATE_LIMITED');
    expect(capped.body.error.message).toContain(`${EXECUTIONS - spent} are left`);
    expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(0);
    const last = await api('POST', setup.base, { token: setup.session, body: { version: 1, last: EXECUTIONS - spent } });
    expect(last.status).toBe(201);
    more.push(last.body.id);
    for (const other of more) expect((await api('POST', `${setup.base}/${other}/cancel`, { token: setup.session })).status).toBe(200);

    // Another workspace's replay is not found, even by its own admin under their workspace.
    const other = await decisionlessWorkspace();
    const foreign = await api('GET', `/app/v1/workspaces/${other.ws}/decisions/${setup.decisionId}/replays/${id}`, { token: other.session });
    expect(foreign.status).toBe(404);
  }, 300_000);
});

/** States whose keys come in orders jsonb would not keep: reverse alphabetical, nested, mixed, in arrays. */
function unusualStates(marker: string): Array<Record<string, unknown>> {
  return Array.from({ length: 24 }, (_, i) => {
    const text = `${marker} ticket ${i}: the screen of my phone cracked after ${i + 2} days`;
    switch (i % 4) {
      case 0:
        return { subject: `Broken screen ${i}`, previous_tickets: i, plan: 'pro', message: text, channel: 'email' };
      case 1:
        return {
          message: text,
          plan: 'basic',
          channel: 'chat',
          previous_tickets: [
            { when: '2026-01-02', what: 'refund' },
            { what: 'exchange', when: '2026-03-04' },
          ],
          subject: 'Order',
        };
      case 2:
        return {
          zone: 'eu',
          customer: { tier: 'gold', name: `C${i}`, address: { zip: '1000', street: 'Main', city: 'Lisbon' }, age: 30 + i },
          message: text,
          amount: i * 10,
        };
      default:
        return { plan: 'free', message: text, 'b-key': true, aa: { z: 1, y: { x: [3, { q: 1, p: 2 }] } }, a: null, channel: 'phone' };
    }
  });
}

describe('replays keep the state as it was sent', () => {
  it('replays the active version against itself over states in unusual key orders: every action and answer is the live one; the baseline is there', async () => {
    const marker = uniqueMarker();
    const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${marker}@example.com`, password: 'correcthorse42', name: 'x' } });
    const session = user.body.session.token;
    const ws = (await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'order' } })).body.id;
    expect(
      (
        await api('PUT', `/admin/v1/workspaces/${ws}/plan`, {
          token: ADMIN_TOKEN,
          body: { plan: 'enterprise', overrides: { rate_limit_per_minute: 1_000_000 } },
        })
      ).status,
    ).toBe(200);
    const apiKey = (await api('POST', `/app/v1/workspaces/${ws}/api-keys`, { token: session, body: { name: 'k', mode: 'live' } })).body.key;
    // No scripted answers: the simulator answers from a digest of the prompt, so a state's key order moves its answers.
    const created = await api('POST', `/app/v1/workspaces/${ws}/decisions`, {
      token: session,
      body: { slug: 'ordered', name: 'ordered', schema: schema(`${marker} order`, 0.5) },
    });
    const decisionId = created.body.id;
    expect((await api('POST', `/app/v1/workspaces/${ws}/decisions/${decisionId}/deploy`, { token: session })).status).toBe(201);
    const base = `/app/v1/workspaces/${ws}/decisions/${decisionId}/replays`;

    const states = unusualStates(marker);
    const live = new Map<string, { action: string; result: Record<string, unknown>; state: Record<string, unknown> }>();
    for (const state of states) {
      const run = await api('POST', '/v1/decisions/ordered', { token: apiKey, body: { state } });
      expect(run.status).toBe(200);
      live.set(run.body.execution_id, { action: run.body.action, result: run.body.result, state });
    }
    expect(new Set([...live.values()].map((run) => run.action)).size).toBeGreaterThan(1);

    const started = await api('POST', base, { token: session, body: { version: 1, last: states.length } });
    expect(started.status).toBe(201);
    const done = await finished({ session, ws, decisionId, marker, base }, started.body.id);
    expect(done.body.progress).toMatchObject({ total: states.length, done: states.length, failed: 0 });
    const items = (await api('GET', `${base}/${started.body.id}/executions?limit=200`, { token: session })).body.data;
    expect(items).toHaveLength(states.length);
    for (const item of items) {
      const run = live.get(item.execution_id)!;
      expect({ execution: item.execution_id, action: item.new.action, answers: item.new.answers }).toEqual({
        execution: item.execution_id,
        action: run.action,
        answers: run.result,
      });
    }
    expect(done.body.result.action).toEqual({ agreed: states.length, agreement: 1 });
    expect(done.body.result.questions.map((question: { agreement: number }) => question.agreement)).toEqual([1, 1, 1]);
    // The input comes back in the caller's order, at every level.
    for (const [executionId, run] of live) {
      const input = await api('GET', `/app/v1/workspaces/${ws}/executions/${executionId}/input`, { token: session });
      expect(input.status).toBe(200);
      expect(JSON.stringify(input.body.state)).toBe(JSON.stringify(run.state));
    }

    // Asked before a replay starts: how many of a selection kept their input.
    const eligible = await api('GET', `${base}/eligible?last=1000`, { token: session });
    expect(eligible.status).toBe(200);
    expect(eligible.body).toEqual({ selection: { last: 1000 }, eligible: states.length, without_input: 0, store_input: true });
    const later = new Date(Date.now() + 60_000).toISOString();
    const ranged = await api('GET', `${base}/eligible?from=2001-01-01&to=${encodeURIComponent(later)}`, { token: session });
    expect(ranged.body.eligible).toBe(states.length);
    expect((await api('GET', `${base}/eligible?from=2001-01-01&to=2001-01-02`, { token: session })).body.eligible).toBe(0);
    for (const bad of ['last=0', 'last=01', 'last=1001', 'last=5&from=2001-01-01', 'from=2026-02-30&to=2026-03-02', 'lats=5', '']) {
      const refused = await api('GET', `${base}/eligible?${bad}`, { token: session });
      expect([bad, refused.status, refused.body.error?.code]).toEqual([bad, 400, 'INVALID_REQUEST']);
    }

    // A replay of the active version is its own baseline.
    expect(done.body.baseline).toEqual({ ...done.body.result, version: 1, same_as_result: true });

    // A draft's replay runs the active version beside it on each execution, as its baseline.
    const draft = await api('PUT', `/app/v1/workspaces/${ws}/decisions/${decisionId}/draft`, {
      token: session,
      body: { schema: schema(`${marker} order`, 0.7), revision: 1 },
    });
    expect(draft.status).toBe(200);
    const ofDraft = await api('POST', base, { token: session, body: { version: null, last: states.length } });
    expect(ofDraft.status).toBe(201);
    const draftDone = await finished({ session, ws, decisionId, marker, base }, ofDraft.body.id);
    expect(draftDone.body.baseline).toMatchObject({
      version: 1,
      same_as_result: false,
      compared: states.length,
      failed: 0,
      action: { agreed: states.length, agreement: 1 },
    });
    expect(draftDone.body.baseline.questions.map((question: { agreement: number }) => question.agreement)).toEqual([1, 1, 1]);
    const draftItems = (await api('GET', `${base}/${ofDraft.body.id}/executions?limit=200`, { token: session })).body.data;
    for (const item of draftItems) {
      const run = live.get(item.execution_id)!;
      expect(item.baseline).toEqual({ action: run.action, answers: run.result });
    }
    // Each of its executions took two engine calls against the daily cap.
    const usage = await database((db) =>
      db.query(`SELECT count(*)::int AS n FROM decision_runner.replay_items WHERE replay_id = $1 AND baseline_action IS NOT NULL`, [ofDraft.body.id]),
    );
    expect(usage.rows[0].n).toBe(states.length);
  }, 300_000);
});

describe('the replay panel', () => {
  it('starts a replay of the draft, shows its progress, then its agreement and confusion table; axe clean, 360 px', async () => {
    const setup = await decisionWithHistory();
    const browser = await launchChromium();
    const problems: string[] = [];
    const checked: Record<string, string[]> = {};
    try {
      const context = await browser.newContext({ baseURL: cluster.baseUrl, viewport: { width: 1280, height: 900 } });
      context.setDefaultTimeout(30_000);
      await context.addInitScript(
        ([token, workspace]) => {
          (globalThis as any).localStorage.setItem('ds.session', token);
          (globalThis as any).localStorage.setItem('ds.workspace', workspace);
        },
        [setup.session, setup.ws],
      );
      const page = await context.newPage();
      watchProblems(page, problems);
      await page.goto(`/decisions/triage/replay`);
      await page.getByRole('heading', { name: 'Replay against past executions' }).waitFor();
      expect(await page.getByRole('link', { name: 'Replay' }).getAttribute('aria-current')).toBe('page');
      // Before it starts, the form says how many executions of the selection kept their input, and what that costs.
      const start = page.getByRole('button', { name: 'Start replay' });
      await page.getByRole('combobox', { name: /^Executions/ }).selectOption('range');
      await page.getByLabel('From', { exact: true }).fill('2001-01-01T00:00');
      await page.getByLabel('To', { exact: true }).fill('2001-01-02T00:00');
      await page.getByText('No execution in this selection kept its input').waitFor();
      expect(await start.isDisabled()).toBe(true);
      await page.getByRole('combobox', { name: /^Executions/ }).selectOption('last');
      await page.getByLabel('How many').fill(String(EXECUTIONS));
      await page
        .getByText(
          `${EXECUTIONS} executions in this selection kept their input and will be replayed. Each is run twice, by the draft and by the active version v1 as the baseline: ${2 * EXECUTIONS} engine calls counted against the daily cap.`,
        )
        .waitFor();
      expect(await start.isDisabled()).toBe(false);
      await checkScreen(page, 'replay-start', checked);
      await start.click();

      const progress = page.getByRole('progressbar', { name: 'Replay progress' });
      await progress.waitFor();
      await page.getByRole('heading', { name: 'Replay of Draft' }).waitFor();
      await page.getByRole('button', { name: 'Cancel replay' }).waitFor();
      await checkScreen(page, 'replay-running', checked);

      await page
        .getByRole('status')
        .filter({ hasText: `${EXECUTIONS} of ${EXECUTIONS} replayed` })
        .waitFor({ timeout: 120_000 });
      await page.getByText('completed', { exact: true }).waitFor();
      expect(await progress.getAttribute('value')).toBe(String(EXECUTIONS));
      await page.getByText('80.0 % (baseline, the active version against itself: 100.0 %)').waitFor();
      await page.getByText('The baseline is the active version v1 replayed on the same executions').waitFor();

      const confusion = page.getByRole('table', { name: 'Action then (rows) against action in the replay (columns)' });
      const cells = await confusion
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((row: any) => [...row.querySelectorAll('th, td')].map((cell: any) => cell.textContent.trim())));
      expect(cells).toEqual([
        ['Then continue', '100', '0'],
        ['Then block', '40', '60'],
      ]);
      await page.getByText('Executions whose action changed').click();
      await page.getByRole('table', { name: 'Executions whose action changed' }).locator('tbody tr').nth(39).waitFor();
      expect(await page.getByRole('table', { name: 'Executions whose action changed' }).locator('tbody tr').count()).toBe(40);
      await checkScreen(page, 'replay-result', checked);

      await page.setViewportSize({ width: 360, height: 780 });
      const overflow = await page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth,
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await checkScreen(page, 'replay-narrow', checked);
    } finally {
      await browser.close();
    }
    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  }, 300_000);
});

async function decisionlessWorkspace(): Promise<{ session: string; ws: string }> {
  const marker = uniqueMarker();
  const user = await api('POST', '/app/v1/auth/sign-up', { body: { email: `${marker}@example.com`, password: 'correcthorse42', name: 'x' } });
  const session = user.body.session.token;
  return { session, ws: (await api('POST', '/app/v1/workspaces', { token: session, body: { name: 'other' } })).body.id };
}

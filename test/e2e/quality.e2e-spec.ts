import { Client } from 'pg';
import {
  call,
  defined,
  deploy,
  deployedDecision,
  endFitRest,
  engineRequests,
  expectError,
  newWorkspace,
  roomyWorkspace,
  runDecision,
  scriptEngine,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';
import { waitFor } from './support/cluster';

/**
 * Outcomes, the quality report and calibration: outcomes recorded by API key and by session, replaced and refused;
 * a decision whose engine says 0.9 where the truth is right 60 % of the time is measured as such, fitted, deployed,
 * and then answers with confidences that match the truth.
 */

/** A decision approving or rejecting a message, and judging whether it is spam. */
const verdictSchema = (context: string, settings?: Record<string, unknown>) => ({
  state: { type: 'object', fields: { message: { type: 'string', required: true } } },
  context,
  questions: [
    { key: 'verdict', kind: 'choice', instructions: 'Approve or reject `message`.', options: [{ value: 'approve' }, { value: 'reject' }] },
    { key: 'spam', kind: 'probability', instructions: 'Judge `message`.', criterion: 'The message is spam' },
  ],
  fallbackAction: 'escalate',
  ...(settings ? { settings } : {}),
});

const executionsOf = async (ws: Workspace) => (await call('GET', '/v1/executions?limit=100', { token: ws.apiKey })).body.data as Array<Record<string, any>>;

describe('outcomes', () => {
  it('are recorded by key and by session, replaced by a repeat, shown on executions and refused with each error', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'reviewed', triageSchema(marker));
    const run = await runDecision(ws, 'reviewed', { message: 'broken screen' });
    expect(run.status).toBe(200);
    const id: string = run.body.execution_id;
    expect((await executionsOf(ws))[0]).toMatchObject({ id, outcome: null });

    const byKey = await call('POST', `/v1/executions/${id}/outcome`, {
      token: ws.apiKey,
      body: { answers: { fraud: false, intent: 'refund', urgency: 'calm' }, action: 'continue' },
    });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toEqual({
      execution_id: id,
      // In question order, whatever order they were sent in.
      answers: { intent: 'refund', urgency: 'calm', fraud: false },
      action: 'continue',
      recorded_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect((await executionsOf(ws))[0]!.outcome).toEqual({ answers: byKey.body.answers, action: 'continue', recorded_at: byKey.body.recorded_at });

    const bySession = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/executions/${id}/outcome`, {
      token: ws.session,
      body: { answers: { intent: 'other' } },
    });
    expect(bySession.status).toBe(200);
    expect(bySession.body).toMatchObject({ execution_id: id, answers: { intent: 'other' }, action: null });
    const listed = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions`, { token: ws.session });
    expect(listed.body.data[0].outcome).toEqual({ answers: { intent: 'other' }, action: null, recorded_at: bySession.body.recorded_at });
    const actionOnly = await call('POST', `/v1/executions/${id}/outcome`, { token: ws.apiKey, body: { action: 'block' } });
    expect(actionOnly.body).toMatchObject({ answers: {}, action: 'block' });

    const bad = await call('POST', `/v1/executions/${id}/outcome`, {
      token: ws.apiKey,
      body: { answers: { nope: 'x', intent: 'bogus', urgency: 3, fraud: 'yes' }, action: 'maybe' },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.map((issue: { path: string }) => issue.path).sort()).toEqual([
      'action',
      'answers.fraud',
      'answers.intent',
      'answers.nope',
      'answers.urgency',
    ]);
    expectError(await call('POST', `/v1/executions/${id}/outcome`, { token: ws.apiKey, body: {} }), 400, 'INVALID_REQUEST');
    expectError(await call('POST', `/v1/executions/${id}/outcome`, { token: ws.apiKey, body: { answers: [] } }), 400, 'INVALID_REQUEST');
    expectError(
      await call('POST', `/v1/executions/${id}/outcome`, { token: ws.apiKey, rawBody: '[1]', headers: { 'content-type': 'application/json' } }),
      400,
      'INVALID_REQUEST',
    );
    // A refused report leaves the last one in place.
    expect((await executionsOf(ws))[0]!.outcome).toMatchObject({ answers: {}, action: 'block' });

    const other = await newWorkspace();
    for (const [token, path] of [
      [ws.apiKey, '/v1/executions/exec_00000000000000000000/outcome'],
      [ws.apiKey, '/v1/executions/not-an-id/outcome'],
      [other.apiKey, `/v1/executions/${id}/outcome`],
    ] as const) {
      expectError(await call('POST', path, { token, body: { action: 'block' } }), 404, 'NOT_FOUND');
    }
    expectError(
      await call('PUT', `/app/v1/workspaces/${other.workspaceId}/executions/${id}/outcome`, { token: other.session, body: { action: 'block' } }),
      404,
      'NOT_FOUND',
    );
    expectError(await call('POST', `/v1/executions/${id}/outcome`, { body: { action: 'block' } }), 401, 'INVALID_API_KEY');
    expectError(
      await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/executions/${id}/outcome`, { token: ws.apiKey, body: { action: 'block' } }),
      403,
      'FORBIDDEN',
    );
  });

  it('count in a window of their own, twice the plan’s limit, which leaves the reads window alone and refuses past its limit', async () => {
    // A Genesis workspace: 60 requests a minute per window, 120 outcomes.
    const ws = await newWorkspace();
    await deployedDecision(ws, 'labelled', triageSchema(uniqueMarker()));
    const run = await runDecision(ws, 'labelled', { message: 'broken screen' });
    expect(run.status).toBe(200);
    const post = () => call('POST', `/v1/executions/${run.body.execution_id}/outcome`, { token: ws.apiKey, body: { action: 'block' } });
    const sendMany = async (count: number) => {
      const replies = [];
      for (let index = 0; index < count; index++) replies.push(await post());
      return replies;
    };

    const first = await sendMany(70);
    expect(first.filter((reply) => reply.status !== 200).map((reply) => reply.text)).toEqual([]);
    expect(first[0]!.headers.get('x-ratelimit-limit')).toBe('120');
    expect(first[69]!.headers.get('x-ratelimit-remaining')).toBe('50');
    expect(first[69]!.headers.get('ratelimit')).toMatch(/^"outcomes";r=50;t=\d+$/);
    expect(first[0]!.headers.get('ratelimit-policy')).toBe('"decisions";q=60;w=60, "reads";q=60;w=60, "webhooks";q=60;w=60, "outcomes";q=120;w=60');
    // Reading counts in the reads window, which the 70 outcomes did not touch.
    const read = await call('GET', '/v1/decisions', { token: ws.apiKey });
    expect([read.status, read.headers.get('x-ratelimit-limit'), read.headers.get('x-ratelimit-remaining')]).toEqual([200, '60', '59']);

    const rest = await sendMany(50);
    expect(rest.filter((reply) => reply.status !== 200).map((reply) => reply.text)).toEqual([]);
    const refused = await post();
    expectError(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect([refused.headers.get('x-ratelimit-limit'), refused.headers.get('x-ratelimit-remaining')]).toEqual(['120', '0']);
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Math.floor(Date.now() / 1000));
    // The reads window still has its room.
    expect((await call('GET', '/v1/decisions', { token: ws.apiKey })).headers.get('x-ratelimit-remaining')).toBe('58');
  });
});

/** A small seeded generator (mulberry32), so the drawn truths are the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `count` times with at most four in flight; answers the replies. */
async function runMany(ws: Workspace, slug: string, count: number): Promise<Array<Record<string, any>>> {
  const replies: Array<Record<string, any>> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        next++;
        const reply = await runDecision(ws, slug, { message: `case ${next}` }, {}, '?include=probabilities');
        if (reply.status !== 200) throw new Error(`run failed: ${reply.text}`);
        replies.push(reply.body);
      }
    }),
  );
  return replies;
}

/** The truth is the engine's top answer (approve, yes) with probability 0.6. */
async function reportOutcomes(ws: Workspace, ids: string[], random: () => number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        const right = random() < 0.6;
        const reply = await call('POST', `/v1/executions/${id}/outcome`, {
          token: ws.apiKey,
          body: { answers: { verdict: right ? 'approve' : 'reject', spam: right }, action: right ? 'continue' : 'block' },
        });
        if (reply.status !== 200) throw new Error(`outcome failed: ${reply.text}`);
      }
    }),
  );
}

/** 3σ of a rate near 0.6 measured over n draws. */
const tolerance = (n: number) => 3 * Math.sqrt(0.24 / n);

describe('quality report and calibration', () => {
  it('measures a known miscalibration, fits it into the draft, and the deployed fit answers with confidences that match the truth', async () => {
    const ws = await roomyWorkspace();
    const marker = uniqueMarker();
    const schema = {
      state: { type: 'object', fields: { message: { type: 'string', required: true } } },
      context: marker,
      questions: [
        { key: 'verdict', kind: 'choice', instructions: 'Approve or reject `message`.', options: [{ value: 'approve' }, { value: 'reject' }] },
        { key: 'spam', kind: 'probability', instructions: 'Judge `message`.', criterion: 'The message is spam', minConfidence: 0.5 },
      ],
      policies: [{ when: { on: 'answer', question: 'verdict', op: 'eq', value: 'reject' }, action: 'block' }],
      fallbackAction: 'escalate',
    };
    const decisionId = await deployedDecision(ws, 'overconfident', schema);
    await scriptEngine(marker, [{ answers: { verdict: { approve: 0.9, reject: 0.1, other: 0 }, spam: { yes: 0.9, no: 0.1 } } }], true);
    const random = seeded(28);

    const first = await runMany(ws, 'overconfident', 300);
    expect(first.every((run) => run.confidence.spam > 0.79 && run.action === 'continue')).toBe(true);
    await reportOutcomes(
      ws,
      first.map((run) => run.execution_id),
      random,
    );

    const report = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/quality`, { token: ws.session });
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ decision_id: decisionId, version: 1, from: null, to: null });
    const [verdict, spam] = report.body.questions;
    for (const question of [verdict, spam]) {
      const model = question.sources.model;
      expect(question.labelled).toBe(300);
      expect(model.bins).toHaveLength(10);
      const top = model.bins[9];
      expect(top).toMatchObject({ from: 0.9, to: 1, count: 300 });
      expect(top.confidence).toBeCloseTo(0.9, 6);
      expect(Math.abs(top.accuracy - 0.6)).toBeLessThan(tolerance(300));
      expect(Math.abs(model.ece - 0.3)).toBeLessThan(tolerance(300));
      expect(model.bins.slice(0, 9).every((bin: { count: number }) => bin.count === 0)).toBe(true);
      expect(model.thresholds).toHaveLength(20);
      expect(model.thresholds[0]).toMatchObject({ min_confidence: 0, kept: 300, coverage: 1 });
      expect(question.sources.tokens).toBeUndefined();
    }
    expect(verdict.sources.model.accuracy).toBeCloseTo(verdict.sources.model.bins[9].accuracy, 9);
    const p = spam.sources.model.bins[9].accuracy;
    expect(spam.sources.model.brier).toBeCloseTo(p * 0.01 + (1 - p) * 0.81, 6);
    expect(spam.sources.model.log_loss).toBeCloseTo(-(p * Math.log(0.9) + (1 - p) * Math.log(0.1)), 6);
    // spam's confidence is |2p − 1| = 0.8: a minConfidence above it keeps nothing.
    expect(spam.sources.model.thresholds[16]).toMatchObject({ min_confidence: 0.8, kept: 300 });
    expect(spam.sources.model.thresholds[17]).toMatchObject({ min_confidence: 0.85, kept: 0, coverage: 0, accuracy: null });
    // Actions: continue taken every time, right whenever the truth was approve.
    expect(report.body.action.labelled).toBe(300);
    expect(report.body.action.agreement).toBeCloseTo(verdict.sources.model.accuracy, 9);

    const fit = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/calibration`, { token: ws.session, body: { version: 1 } });
    expect(fit.status).toBe(200);
    expect(fit.body.not_fitted).toEqual([]);
    expect(fit.body.fitted.map((q: { question: string; source: string }) => `${q.question}/${q.source}`)).toEqual(['verdict/model', 'spam/model']);
    for (const question of fit.body.fitted) {
      expect(Math.abs(question.ece_before - 0.3)).toBeLessThan(tolerance(300));
      expect(question.ece_after).toBeLessThan(0.1);
    }
    const details = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`, { token: ws.session });
    expect(Object.keys(details.body.draft.calibration.model).sort()).toEqual(['spam', 'verdict']);
    expect(await deploy(ws, decisionId)).toBe(2);

    const second = await runMany(ws, 'overconfident', 200);
    for (const run of second) {
      expect(run.version).toBe(2);
      expect(Math.abs(run.probabilities.verdict.approve - 0.6)).toBeLessThan(tolerance(300));
      expect(Math.abs(run.probabilities.spam.yes - 0.6)).toBeLessThan(tolerance(300));
      // The calibrated spam confidence |2p − 1| falls below its minConfidence of 0.5.
      expect(run.action_reason).toMatchObject({ type: 'low_confidence', question: 'spam' });
    }
    await reportOutcomes(
      ws,
      second.map((run) => run.execution_id),
      random,
    );
    const calibrated = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/quality?version=2`, { token: ws.session });
    expect(calibrated.status).toBe(200);
    for (const question of calibrated.body.questions) {
      expect(question.labelled).toBe(200);
      expect(question.sources.model.ece).toBeLessThan(tolerance(200) + tolerance(300));
      const bin = defined(question.sources.model.bins.find((b: { count: number }) => b.count > 0));
      expect(bin.count).toBe(200);
      expect(Math.abs(bin.accuracy - bin.confidence)).toBeLessThan(tolerance(200) + tolerance(300));
    }
    expect(calibrated.body.action.agreement).toBe(0);
    // Five hundred runs and outcomes, four at a time.
  }, 600_000);

  it('checks the report’s and the fit’s parameters', async () => {
    const ws = await newWorkspace();
    const decisionId = await deployedDecision(ws, 'checked', triageSchema(uniqueMarker()));
    const base = `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`;
    const empty = await call('GET', `${base}/quality?from=2026-01-01&to=2026-01-02T00:00:00Z`, { token: ws.session });
    expect(empty.status).toBe(200);
    expect(empty.body.questions.map((q: { key: string; labelled: number }) => [q.key, q.labelled])).toEqual([
      ['intent', 0],
      ['urgency', 0],
      ['fraud', 0],
    ]);
    expect(empty.body.questions[0].sources.model).toMatchObject({ ece: null, accuracy: null });
    const bad = await call('GET', `${base}/quality?version=x&from=yesterday`, { token: ws.session });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.map((issue: { path: string }) => issue.path).sort()).toEqual(['from', 'version']);
    expectError(await call('GET', `${base}/quality?version=7`, { token: ws.session }), 404, 'NOT_FOUND');
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/dec_00000000000000000000/quality`, { token: ws.session }), 404, 'NOT_FOUND');
    expectError(await call('POST', `${base}/calibration`, { token: ws.session, body: {} }), 400, 'INVALID_REQUEST');
    const unfit = await call('POST', `${base}/calibration`, { token: ws.session, body: { version: 1 } });
    expect(unfit.status).toBe(200);
    // Nothing recorded yet: every question listed, the draft unchanged.
    expect(unfit.body).toMatchObject({ version: 1, revision: 1, fitted: [] });
    expect(unfit.body.not_fitted).toEqual(
      ['intent', 'urgency', 'fraud'].map((question) => ({ question, source: 'model', outcomes: 0, reason: 'not_enough_outcomes', needed: 30 })),
    );
  });
});

describe('calibration fits share the runner fairly', () => {
  it('refuses a second fit of the workspace at once, with 409, while the first is still running', async () => {
    const ws = await roomyWorkspace();
    const marker = uniqueMarker();
    const schema = verdictSchema(marker);
    const decisionId = await deployedDecision(ws, 'fitted-once', schema);
    await scriptEngine(marker, [{ answers: { verdict: { approve: 0.9, reject: 0.1, other: 0 }, spam: { yes: 0.9, no: 0.1 } } }], true);
    const runs = await runMany(ws, 'fitted-once', 40);
    await reportOutcomes(
      ws,
      runs.map((run) => run.execution_id),
      seeded(38),
    );
    const path = `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/calibration`;
    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    const watcher = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await Promise.all([db.connect(), watcher.connect()]);
    try {
      // Holding the decision's row keeps the first fit at its last step, writing the maps into the draft.
      await db.query('BEGIN');
      await db.query('SELECT 1 FROM decision_runner.decisions WHERE id = $1 FOR UPDATE', [decisionId]);
      const first = call('POST', path, { token: ws.session, body: { version: 1 } });
      const savingFits = async () =>
        (
          await watcher.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE decisions SET draft_schema%'",
          )
        ).rows[0].n as number;
      await waitFor(async () => (await savingFits()) === 1, 20_000, 'the first fit waiting to save');
      const second = await call('POST', path, { token: ws.session, body: { version: 1 } });
      expectError(second, 409, 'CONFLICT');
      expect(second.body.error.message).toMatch(/calibration fit of this workspace is running/);
      // The second was answered while the first still waited: it never got as far as the first.
      expect(await savingFits()).toBe(1);
      await db.query('COMMIT');
      const done = await first;
      expect(done.status).toBe(200);
      expect(done.body.fitted.map((fit: { question: string; outcomes: number }) => [fit.question, fit.outcomes])).toEqual([
        ['verdict', 40],
        ['spam', 40],
      ]);
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await Promise.all([db.end(), watcher.end()]);
    }
    // The turn ended with the first, and the workspace rests in proportion to the fit before its next one runs.
    const resting = await call('POST', path, { token: ws.session, body: { version: 1 } });
    expectError(resting, 429, 'RATE_LIMITED');
    expect(resting.body.error.message).toMatch(/fitted a calibration a moment ago/);
    const rest = Number(resting.headers.get('retry-after'));
    expect(rest).toBeGreaterThanOrEqual(1);
    expect(rest).toBeLessThanOrEqual(120);
    await endFitRest(ws.workspaceId);
    expect((await call('POST', path, { token: ws.session, body: { version: 1 } })).status).toBe(200);
  }, 300_000);

  it('refuses fits past the plan’s daily cap with 429 and a Retry-After until the next UTC day', async () => {
    // A new workspace is on the free plan: 20 fits a day.
    const ws = await newWorkspace();
    const decisionId = await deployedDecision(ws, 'fitted-often', triageSchema(uniqueMarker()));
    const path = `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/calibration`;
    for (let i = 0; i < 20; i++) {
      const reply = await call('POST', path, { token: ws.session, body: { version: 1 } });
      expect(reply.status).toBe(200);
      await endFitRest(ws.workspaceId);
    }
    const refused = await call('POST', path, { token: ws.session, body: { version: 1 } });
    expectError(refused, 429, 'RATE_LIMITED');
    expect(refused.body.error.message).toMatch(/20 calibration fits a day/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    const untilMidnight = Math.ceil((Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000 - Date.now()) / 1000);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(Math.abs(retryAfter - untilMidnight)).toBeLessThanOrEqual(5);
    // Another workspace's budget is its own.
    const other = await newWorkspace();
    const otherDecision = await deployedDecision(other, 'fitted-often', triageSchema(uniqueMarker()));
    expect(
      (await call('POST', `/app/v1/workspaces/${other.workspaceId}/decisions/${otherDecision}/calibration`, { token: other.session, body: { version: 1 } }))
        .status,
    ).toBe(200);
  }, 120_000);
});

describe('token probabilities beside the model’s own numbers', () => {
  it('are asked for by a decision that answers from them, recorded beside the model’s, and compared in the report', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const schema = verdictSchema(marker, { confidenceSource: 'tokens' });
    const decisionId = await deployedDecision(ws, 'by-tokens', schema);
    const modelMarker = uniqueMarker();
    await deployedDecision(ws, 'by-model', { ...schema, context: modelMarker, settings: {} });
    const stated = { verdict: { approve: 0.9, reject: 0.1, other: 0 }, spam: { yes: 0.9, no: 0.1 } };
    await scriptEngine(marker, [{ answers: stated }], true);
    await scriptEngine(modelMarker, [{ answers: stated }], true);

    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const run = await runDecision(ws, 'by-tokens', { message: `case ${i}` }, {}, '?include=probabilities');
      expect(run.status).toBe(200);
      // The simulated tokens are surer than the stated numbers: 0.9² / (0.9² + 0.1²).
      expect(run.body.probabilities.verdict.approve).toBeCloseTo(0.81 / 0.82, 6);
      // Probability questions state numbers only: they keep the model's own.
      expect(run.body.probabilities.spam.yes).toBeCloseTo(0.9, 6);
      ids.push(run.body.execution_id);
    }
    const asked = (await engineRequests(marker)).at(-1)!.body;
    expect(asked).toMatchObject({ logprobs: true, top_logprobs: 20 });
    expect(Object.keys(asked.response_format.json_schema.schema.properties)).toEqual(['_picks', 'verdict', 'spam']);
    const modelRun = await runDecision(ws, 'by-model', { message: 'case' }, {}, '?include=probabilities');
    expect(modelRun.body.probabilities.verdict.approve).toBeCloseTo(0.9, 6);
    const plain = (await engineRequests(modelMarker)).at(-1)!.body;
    expect(plain.logprobs).toBeUndefined();
    expect(Object.keys(plain.response_format.json_schema.schema.properties)).toEqual(['verdict', 'spam']);

    for (const [i, id] of ids.entries()) {
      const reply = await call('POST', `/v1/executions/${id}/outcome`, {
        token: ws.apiKey,
        body: { answers: { verdict: i < 2 ? 'approve' : 'reject', spam: true } },
      });
      expect(reply.status).toBe(200);
    }
    const report = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/quality`, { token: ws.session });
    expect(report.status).toBe(200);
    const [verdict, spam] = report.body.questions;
    expect(Object.keys(verdict.sources).sort()).toEqual(['model', 'tokens']);
    expect(Object.keys(spam.sources)).toEqual(['model']);
    expect(verdict.sources.model.bins[9]).toMatchObject({ count: 4, accuracy: 0.5 });
    expect(verdict.sources.model.bins[9].confidence).toBeCloseTo(0.9, 6);
    expect(verdict.sources.tokens.bins[9]).toMatchObject({ count: 4, accuracy: 0.5 });
    expect(verdict.sources.tokens.bins[9].confidence).toBeCloseTo(0.81 / 0.82, 6);
    // Half right: the surer source is the less honest one.
    expect(verdict.sources.model.ece).toBeCloseTo(0.4, 6);
    expect(verdict.sources.tokens.ece).toBeCloseTo(0.81 / 0.82 - 0.5, 6);
  });
});

describe('token probabilities in every run mode', () => {
  it('are what a shadow and a replay of a decision answering from them use, exactly as its live runs do', async () => {
    const ws = await roomyWorkspace();
    const marker = uniqueMarker();
    const schema = verdictSchema(marker, { confidenceSource: 'tokens', storeInput: true });
    const decisionId = await deployedDecision(ws, 'tokens-everywhere', schema);
    await scriptEngine(marker, [{ answers: { verdict: { approve: 0.9, reject: 0.1, other: 0 }, spam: { yes: 0.9, no: 0.1 } } }], true);
    const decision = `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`;
    // The shadowed version asks the same questions; only its fallback differs.
    const current = await call('GET', decision, { token: ws.session });
    const draft = { ...schema, fallbackAction: 'block' };
    expect((await call('PUT', `${decision}/draft`, { token: ws.session, body: { schema: draft, revision: current.body.revision } })).status).toBe(200);
    expect((await call('POST', `${decision}/shadow`, { token: ws.session, body: { rate: 100 } })).status).toBe(201);

    const live = [];
    for (let i = 0; i < 2; i++) {
      const run = await runDecision(ws, 'tokens-everywhere', { message: `case ${i}` }, {}, '?include=probabilities');
      expect(run.status).toBe(200);
      expect(run.body.probabilities.verdict.approve).toBeCloseTo(0.81 / 0.82, 6);
      live.push(run.body.execution_id);
    }
    const replay = await call('POST', `${decision}/replays`, { token: ws.session, body: { version: 1, last: 2 } });
    expect(replay.status).toBe(201);
    await waitFor(
      async () => (await call('GET', `${decision}/replays/${replay.body.id}`, { token: ws.session })).body.status === 'completed',
      30_000,
      'the replay',
    );

    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await db.connect();
    try {
      const rows = async () =>
        (
          await db.query(
            `SELECT e.id, e.source, e.confidence, e.distributions, COALESCE(e.shadow_of, i.execution_id) AS of
               FROM decision_runner.executions e LEFT JOIN decision_runner.replay_items i ON i.replay_execution_id = e.id
              WHERE e.workspace_id = $1 ORDER BY e.source`,
            [ws.workspaceId],
          )
        ).rows as Array<{ id: string; source: string; confidence: unknown; distributions: { model: unknown; tokens?: unknown }; of: string | null }>;
      let all: Awaited<ReturnType<typeof rows>> = [];
      await waitFor(async () => (all = await rows()).length === 6, 15_000, 'two shadow runs');
      expect(all.map((row) => row.source)).toEqual(['api', 'api', 'replay', 'replay', 'shadow', 'shadow']);
      const byId = new Map(all.map((row) => [row.id, row]));
      for (const row of all.filter((row) => row.source !== 'api')) {
        const original = byId.get(row.of!)!;
        expect(live).toContain(original.id);
        expect(original.distributions.tokens).toBeDefined();
        // The same confidences from the same token distributions, and those distributions kept for calibration.
        expect({ source: row.source, confidence: row.confidence, distributions: row.distributions }).toEqual({
          source: row.source,
          confidence: original.confidence,
          distributions: original.distributions,
        });
      }
    } finally {
      await db.end();
    }
  }, 120_000);
});

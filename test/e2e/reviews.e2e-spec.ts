import Stripe from 'stripe';
import { auditSampled } from '@ds/decision-schema';
import { call, deployedDecision, opsPort, Reply, expectError, roomyWorkspace, runDecision, scriptEngine, signUp, uniqueMarker, Workspace } from './support/api';
import { eventually, Receiver, startReceiver } from './support/deliveries';

/**
 * Human review end to end: runs of a decision with review on get items for exactly the runs its `when` matches and
 * the audit share of the rest; two reviewers race for one claim; a resolution becomes the execution's outcome and
 * fires one signed `decision.reviewed` webhook; a reviewer reaches nothing but reviews.
 */

const stripe = new Stripe('sk_test_unused');
const AUDIT_RATE = 0.25;
const RUNS = { escalated: 30, unsure: 30, plain: 140 };

const reviewSchema = (marker: string, url: string) => ({
  state: { type: 'object', fields: { message: { type: 'string', required: true } } },
  context: `Support inbox ${marker}`,
  questions: [
    {
      key: 'intent',
      kind: 'choice',
      instructions: 'What does the customer want? Read `message`.',
      options: [{ value: 'refund' }, { value: 'exchange' }],
      minConfidence: 0.5,
    },
    { key: 'fraud', kind: 'probability', instructions: 'Judge `message`.', criterion: 'The request shows signs of fraud' },
  ],
  policies: [{ when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' }, action: 'escalate' }],
  fallbackAction: 'fallback',
  settings: { storeInput: true, review: { when: { actions: ['escalate'], lowConfidence: true }, auditRate: AUDIT_RATE, dueMinutes: 90 } },
  destinations: [{ key: 'reviewed', type: 'webhook', url, on: 'reviewed' }],
});

/** The engine's answer per kind of run, chosen by a word of the run's message. */
const SCRIPTED = {
  escalated: { intent: { refund: 0.96, exchange: 0.02, other: 0.02 }, fraud: { yes: 0.1, no: 0.9 } },
  unsure: { intent: { refund: 0.4, exchange: 0.4, other: 0.2 }, fraud: { yes: 0.1, no: 0.9 } },
  plain: { intent: { refund: 0.02, exchange: 0.96, other: 0.02 }, fraud: { yes: 0.1, no: 0.9 } },
} as const;
type Kind = keyof typeof SCRIPTED;

let ws: Workspace;
let decisionId: string;
let receiver: Receiver;
let secret: string;
let reviewer: { session: string; userId: string };
const runs: Array<{ kind: Kind; id: string; action: string }> = [];
const reviews = (query = '') => call('GET', `/app/v1/workspaces/${ws.workspaceId}/reviews${query}`, { token: ws.session });

async function allReviews(query: string): Promise<Array<Record<string, any>>> {
  const items: Array<Record<string, any>> = [];
  let cursor: string | null = null;
  do {
    const page = await reviews(`?limit=100&${query}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    items.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return items;
}

async function executionNamed(id: string): Promise<Record<string, any>> {
  let cursor: string | null = null;
  do {
    const page: Reply = await call('GET', `/v1/executions?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: ws.apiKey });
    const found = page.body.data.find((row: { id: string }) => row.id === id);
    if (found) return found;
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  throw new Error(`no execution ${id}`);
}

beforeAll(async () => {
  ws = await roomyWorkspace();
  receiver = await startReceiver();
  secret = (await call('POST', `/app/v1/workspaces/${ws.workspaceId}/signing-secret/rotate`, { token: ws.session })).body.secret;
  const marker = uniqueMarker();
  decisionId = await deployedDecision(ws, 'triage-reviewed', reviewSchema(marker, receiver.url));
  for (const kind of Object.keys(SCRIPTED) as Kind[]) await scriptEngine(`${marker}-${kind}`, [{ answers: SCRIPTED[kind] }], true);
  const planned = (Object.keys(RUNS) as Kind[]).flatMap((kind) => Array.from({ length: RUNS[kind] }, (_, i) => ({ kind, i })));
  for (let start = 0; start < planned.length; start += 8) {
    await Promise.all(
      planned.slice(start, start + 8).map(async ({ kind, i }) => {
        const reply = await runDecision(ws, 'triage-reviewed', { message: `case ${i} ${marker}-${kind}` });
        expect(reply.status).toBe(200);
        runs.push({ kind, id: reply.body.execution_id, action: reply.body.action });
      }),
    );
  }
  const user = await signUp();
  const added = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: user.email, role: 'reviewer' } });
  expect(added.status).toBe(201);
  reviewer = { session: user.session, userId: user.userId };
}, 180_000);

afterAll(async () => {
  await receiver?.close();
});

describe('review items', () => {
  it('appear for exactly the runs `when` matches and the audit share of the rest, oldest due first', async () => {
    expect(runs.filter((run) => run.kind === 'escalated').every((run) => run.action === 'escalate')).toBe(true);
    expect(runs.filter((run) => run.kind === 'unsure').every((run) => run.action === 'fallback')).toBe(true);
    const audited = runs.filter((run) => run.kind === 'plain' && auditSampled(run.id, AUDIT_RATE));
    const expected = new Map<string, string>([
      ...runs.filter((run) => run.kind === 'escalated').map((run): [string, string] => [run.id, 'action']),
      ...runs.filter((run) => run.kind === 'unsure').map((run): [string, string] => [run.id, 'low_confidence']),
      ...audited.map((run): [string, string] => [run.id, 'audit']),
    ]);
    // Items are written after the runs answer.
    const items = await eventually(
      async () => {
        const listed = await allReviews('');
        return listed.length >= expected.size ? listed : null;
      },
      20_000,
      'every review item',
    );
    expect(new Map(items.map((item) => [item.execution_id, item.reason]))).toEqual(expected);
    // The audit share of the 140 plain runs lies within three standard deviations of the rate.
    const sd = Math.sqrt(RUNS.plain * AUDIT_RATE * (1 - AUDIT_RATE));
    expect(Math.abs(audited.length - RUNS.plain * AUDIT_RATE)).toBeLessThan(3 * sd);
    expect(items.every((item) => item.status === 'open')).toBe(true);
    const due = items.map((item) => `${item.due_at} ${item.id}`);
    expect(due).toEqual([...due].sort());

    const lowOnes = await allReviews('reason=low_confidence');
    expect(lowOnes).toHaveLength(RUNS.unsure);
    expectError(await reviews('?status=pending&limit=0'), 400, 'INVALID_REQUEST');
    expect((await reviews('?status=pending&limit=0')).body.error.details.map((issue: { path: string }) => issue.path).sort()).toEqual(['limit', 'status']);
  }, 60_000);

  it('are claimed by one of two reviewers racing for the same item, resolved once as the execution’s outcome, with one signed webhook', async () => {
    const [item] = (await reviews('?reason=action&limit=1')).body.data;
    const path = `/app/v1/workspaces/${ws.workspaceId}/reviews/${item.id}`;
    const detail = await call('GET', path, { token: reviewer.session });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id: item.id, status: 'open', state: { message: expect.stringContaining('escalated') }, action: 'escalate' });
    expect(detail.body.action_reason).toEqual({ type: 'policy', rule: 0 });
    expect(detail.body.answers[0]).toEqual({
      key: 'intent',
      kind: 'choice',
      outcomes: ['refund', 'exchange', 'other'],
      answer: 'refund',
      confidence: expect.any(Number),
      distribution: SCRIPTED.escalated.intent,
    });
    expect(detail.body.trace).toEqual(expect.any(Object));

    const claims = await Promise.all([ws.session, reviewer.session].map((token) => call('POST', `${path}/claim`, { token })));
    expect(claims.map((claim) => claim.status).sort()).toEqual([200, 409]);
    const won = claims.find((claim) => claim.status === 200)!;
    expectError(
      claims.find((claim) => claim.status === 409)!,
      409,
      'CONFLICT',
    );
    const winner = won === claims[0] ? ws.session : reviewer.session;
    const loser = won === claims[0] ? reviewer.session : ws.session;
    const expires = Date.parse(won.body.claim_expires_at) - Date.now();
    expect(expires).toBeGreaterThan(14 * 60_000);
    expect(expires).toBeLessThanOrEqual(15 * 60_000);
    expect(won.body).toMatchObject({ status: 'claimed', claimed_by: expect.stringMatching(/\S/) });
    expectError(await call('POST', `${path}/resolve`, { token: loser, body: { action: 'continue' } }), 409, 'CONFLICT');

    const bad = await call('POST', `${path}/resolve`, { token: winner, body: { answers: { intent: 'maybe', nope: 1 }, action: 'approve', note: 7 } });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.map((issue: { path: string }) => issue.path).sort()).toEqual(['action', 'answers.intent', 'answers.nope', 'note']);

    const resolved = await call('POST', `${path}/resolve`, {
      token: winner,
      body: { answers: { intent: 'exchange', fraud: false }, action: 'continue', note: 'Wants another colour.' },
    });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({
      status: 'resolved',
      resolution: { answers: { intent: 'exchange', fraud: false }, action: 'continue', note: 'Wants another colour.' },
      outcome: { answers: { intent: 'exchange', fraud: false }, action: 'continue', source: 'review' },
      deliveries: [{ key: 'reviewed', status: 'queued' }],
    });
    expectError(await call('POST', `${path}/resolve`, { token: winner, body: { action: 'block' } }), 409, 'CONFLICT');
    expectError(await call('POST', `${path}/claim`, { token: loser }), 409, 'CONFLICT');

    const execution = await executionNamed(item.execution_id);
    expect(execution.outcome).toEqual({
      answers: { intent: 'exchange', fraud: false },
      action: 'continue',
      source: 'review',
      recorded_at: resolved.body.outcome.recorded_at,
    });

    const request = await eventually(async () => receiver.received[0], 20_000, 'the decision.reviewed webhook');
    const event = stripe.webhooks.constructEvent(request.body, String(request.headers['service-signature']), secret) as unknown as Record<string, any>;
    expect(event).toMatchObject({
      id: resolved.body.deliveries[0].delivery_id,
      type: 'decision.reviewed',
      data: {
        review_id: item.id,
        execution: { id: item.execution_id, action: 'escalate', result: { intent: 'refund' } },
        review: { action: 'continue', answers: { intent: 'exchange', fraud: false }, source: 'review' },
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received).toHaveLength(1);
  }, 60_000);

  it('record an audit sample’s outcome with the audit source, and a release frees a claim', async () => {
    const [item] = (await reviews('?reason=audit&limit=1')).body.data;
    const path = `/app/v1/workspaces/${ws.workspaceId}/reviews/${item.id}`;
    expect((await call('POST', `${path}/claim`, { token: reviewer.session })).status).toBe(200);
    expectError(await call('POST', `${path}/claim`, { token: ws.session }), 409, 'CONFLICT');
    const released = await call('POST', `${path}/release`, { token: reviewer.session });
    expect(released.body).toMatchObject({ status: 'open', claimed_by: null, claim_expires_at: null });
    const resolved = await call('POST', `${path}/resolve`, { token: ws.session, body: { action: 'continue' } });
    expect(resolved.body.outcome).toMatchObject({ action: 'continue', source: 'audit' });
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/reviews/rev_unknown0000000000000`, { token: ws.session }), 404, 'NOT_FOUND');
  });

  it('are listed and resolved by an agent through the MCP tools, under the same rules', async () => {
    const tool = async (name: string, args: Record<string, unknown>) => {
      const reply = await call('POST', '/mcp', {
        token: ws.apiKey,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      });
      expect(reply.status).toBe(200);
      return { isError: reply.body.result.isError === true, json: reply.body.result.structuredContent as Record<string, any> };
    };
    const listed = await tool('list_reviews', { reason: 'low_confidence', limit: 2 });
    expect(listed.isError).toBe(false);
    expect(listed.json.data.map((item: { reason: string }) => item.reason)).toEqual(['low_confidence', 'low_confidence']);
    const id = listed.json.data[0].id;
    const bad = await tool('resolve_review', { id, answers: { urgency: 'calm' } });
    expect(bad).toMatchObject({ isError: true, json: { error: { code: 'INVALID_REQUEST', details: [{ path: 'answers.urgency' }] } } });
    const resolved = await tool('resolve_review', { id, answers: { intent: 'refund' }, action: 'escalate' });
    expect(resolved.json).toMatchObject({ id, status: 'resolved', resolved_by: ws.keyId, outcome: { source: 'review', action: 'escalate' } });
    expect((await tool('resolve_review', { id, action: 'block' })).json).toMatchObject({ error: { code: 'CONFLICT' } });
  });

  it('are counted in the runner’s metrics: open items, the oldest, resolutions by reason', async () => {
    const page = (await call('GET', '/metrics', {}, `http://127.0.0.1:${opsPort(1)}`)).text;
    const value = (pattern: RegExp) => Number(pattern.exec(page)?.[1] ?? NaN);
    // The shared cluster holds other files' items too: these are lower bounds.
    expect(value(/^decision_service_review_open_items\{[^}]*\} (\d+)$/m)).toBeGreaterThan(0);
    expect(value(/^decision_service_review_oldest_open_age_seconds\{[^}]*\} ([\d.e+-]+)$/m)).toBeGreaterThan(0);
    expect(value(/^decision_service_review_resolutions_total\{reason="action"[^}]*\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^decision_service_review_resolutions_total\{reason="audit"[^}]*\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^decision_service_review_items_created_total\{reason="low_confidence"[^}]*\} (\d+)$/m)).toBeGreaterThanOrEqual(RUNS.unsure);
    expect(page).toMatch(/^decision_service_review_oldest_overdue_seconds\{[^}]*\} [\d.e+-]+$/m);
  });

  it('give the quality report the accuracy of the runs decided without review, from the audit samples, with Wilson’s interval', async () => {
    // One audit sample was resolved above with an action only. Every third of the rest is answered as the machine
    // did not (refund, escalate), the others as it did (exchange, continue); fraud's 0.1 "no" is right each time.
    expect(runs.filter((run) => run.kind === 'plain').every((run) => run.action === 'continue')).toBe(true);
    const open = await allReviews('reason=audit');
    expect(open.length).toBeGreaterThan(5);
    let wrong = 0;
    for (const [index, item] of open.entries()) {
      const miss = index % 3 === 0;
      if (miss) wrong++;
      const body = miss
        ? { answers: { intent: 'refund', fraud: false }, action: 'escalate' }
        : { answers: { intent: 'exchange', fraud: false }, action: 'continue' };
      const resolved = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/reviews/${item.id}/resolve`, { token: ws.session, body });
      expect(resolved.status).toBe(200);
    }
    const report = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/quality?version=1`, { token: ws.session });
    expect(report.status).toBe(200);
    const audit = report.body.audit;
    const audits = open.length + 1;
    // By hand: Wilson's bounds (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = 1.959964.
    const wilson = (right: number, n: number) => {
      const z = 1.959964;
      const p = right / n;
      const centre = p + (z * z) / (2 * n);
      const half = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
      const scale = 1 + (z * z) / n;
      return { low: expect.closeTo((centre - half) / scale, 5) as number, high: right === n ? 1 : (expect.closeTo((centre + half) / scale, 5) as number) };
    };
    expect(audit).toMatchObject({
      runs: 200,
      reviewed: { action: RUNS.escalated, low_confidence: RUNS.unsure, engine_error: 0, audit: audits },
      audits_resolved: audits,
      automation_rate: RUNS.plain / 200,
      action: { audited: audits, correct: audits - wrong, accuracy: expect.closeTo((audits - wrong) / audits, 12), interval: wilson(audits - wrong, audits) },
    });
    const [intent, fraud] = audit.questions;
    expect(intent).toMatchObject({
      key: 'intent',
      source: 'model',
      audited: open.length,
      correct: open.length - wrong,
      interval: wilson(open.length - wrong, open.length),
    });
    expect(fraud).toMatchObject({ key: 'fraud', audited: open.length, correct: open.length, accuracy: 1, interval: wilson(open.length, open.length) });
    // Plain runs are sure of intent at 0.82 (step 16), unsure ones at 0.04 (step 0), held back by intent's 0.5.
    const at = (minConfidence: number) => intent.thresholds.find((row: { min_confidence: number }) => Math.abs(row.min_confidence - minConfidence) < 1e-9);
    expect(at(0.8)).toMatchObject({ automation_rate: 0.7, covered: true, audited: open.length });
    expect(at(0.85)).toMatchObject({ automation_rate: 0, covered: true, audited: 0, accuracy: null });
    expect(at(0.45)).toMatchObject({ automation_rate: 0.7, covered: false, accuracy: null });
    expect(at(0)).toMatchObject({ automation_rate: (RUNS.plain + RUNS.unsure) / 200, covered: false });
  }, 120_000);

  it('are all a reviewer reaches', async () => {
    const { userId } = reviewer;
    expect(typeof userId).toBe('string');
    for (const [method, route] of [
      ['GET', 'executions'],
      ['GET', 'decisions'],
      ['GET', 'members'],
      ['GET', 'deliveries'],
    ] as const) {
      const reply = await call(method, `/app/v1/workspaces/${ws.workspaceId}/${route}`, { token: reviewer.session });
      expect({ route, status: reply.status, code: reply.body?.error?.code }).toEqual({ route, status: 403, code: 'FORBIDDEN' });
    }
    expect((await call('GET', `/app/v1/workspaces/${ws.workspaceId}/reviews`, { token: reviewer.session })).status).toBe(200);
  });
});

import { entropyConfidence } from '@ds/decision-schema';
import {
  call,
  deploy,
  deployedDecision,
  expectError,
  newWorkspace,
  runDecision,
  scriptEngine,
  signUp,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';

/** Changing a decision safely: the rule trace of every run, pinned versions. */

/** Saves `schema` as the draft of a decision whose draft is at `revision`, and deploys it; answers the version. */
async function redeploy(ws: Workspace, id: string, schema: unknown, revision: number): Promise<number> {
  const saved = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/draft`, { token: ws.session, body: { schema, revision } });
  expect(saved.status).toBe(200);
  return deploy(ws, id);
}

const executionsOf = async (ws: Workspace, slug: string) => (await call('GET', `/v1/executions?decision=${slug}&limit=100`, { token: ws.apiKey })).body.data;

/** Composites and a five-condition rule; the second rule does not match the scripted answers. */
function tracedSchema(marker: string, storeOutput = true) {
  return triageSchema(marker, {
    policies: [
      {
        when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' },
        and: [
          { on: 'confidence', question: 'intent', op: 'gte', value: 0.5 },
          { on: 'score', question: 'urgency', op: 'gte', value: 2 },
          { on: 'answer', question: 'fraud', op: 'gte', value: 0.5 },
          { on: 'composite', composite: 'risk', op: 'gt', value: 0.5 },
        ],
        action: 'block',
      },
      { when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.9 }, action: 'escalate' },
    ],
    settings: { storeInput: true, storeOutput },
  });
}

const SCRIPTED = { intent: { refund: 0.9, exchange: 0.1, other: 0 }, urgency: { calm: 0, annoyed: 1, furious: 0 }, fraud: { yes: 0.6, no: 0.4 } };

describe('rule trace', () => {
  it('records composites and every rule with each condition’s values, read with include=trace, never the input', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'traced', tracedSchema(marker));
    await scriptEngine(marker, [{ answers: SCRIPTED }], true);
    const secret = `secret-${uniqueMarker()}`;
    const run = await runDecision(ws, 'traced', { message: secret });
    expect(run.status).toBe(200);
    expect(run.body).not.toHaveProperty('trace');
    expect(run.body.action).toBe('block');

    const listed = await call('GET', '/v1/executions?decision=traced&include=trace', { token: ws.apiKey });
    expect(listed.status).toBe(200);
    const [execution] = listed.body.data;
    const intentConfidence = entropyConfidence([0.9, 0.1, 0]);
    // risk = (3 · p(fraud) + 1 · (score − 1) / 2) / 4 = (1.8 + 0.5) / 4
    const risk = 0.575;
    expect(execution.trace).toEqual({
      composites: [{ key: 'risk', value: expect.closeTo(risk, 12) }],
      rules: [
        {
          rule: 0,
          action: 'block',
          matched: true,
          conditions: [
            { on: 'answer', key: 'intent', left: 'refund', op: 'eq', right: 'refund', holds: true },
            { on: 'confidence', key: 'intent', left: expect.closeTo(intentConfidence, 12), op: 'gte', right: 0.5, holds: true },
            { on: 'score', key: 'urgency', left: 2, op: 'gte', right: 2, holds: true },
            { on: 'answer', key: 'fraud', left: 0.6, op: 'gte', right: 0.5, holds: true },
            { on: 'composite', key: 'risk', left: expect.closeTo(risk, 12), op: 'gt', right: 0.5, holds: true },
          ],
        },
        { rule: 1, action: 'escalate', matched: false, conditions: [{ on: 'answer', key: 'fraud', left: 0.6, op: 'gte', right: 0.9, holds: false }] },
      ],
      decided_by: { type: 'policy', rule: 0 },
      action: 'block',
    });
    expect(listed.text).not.toContain(secret);

    const plain = await call('GET', '/v1/executions?decision=traced', { token: ws.apiKey });
    expect(plain.body.data[0]).not.toHaveProperty('trace');
    const app = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions?decision=traced&include=probabilities,trace`, { token: ws.session });
    expect(app.body.data[0].trace).toEqual(execution.trace);
  });

  it('keeps which rules matched but not the run’s values when the decision does not store its output', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'untraced-values', tracedSchema(marker, false));
    await scriptEngine(marker, [{ answers: SCRIPTED }], true);
    expect((await runDecision(ws, 'untraced-values', { message: 'x' })).status).toBe(200);
    const [execution] = (await call('GET', '/v1/executions?include=trace', { token: ws.apiKey })).body.data;
    expect(execution.trace.composites).toEqual([{ key: 'risk', value: null }]);
    expect(execution.trace.rules.map((rule: { matched: boolean }) => rule.matched)).toEqual([true, false]);
    expect(execution.trace.rules[0].conditions.every((condition: { left: unknown }) => condition.left === null)).toBe(true);
  });
});

describe('Decision-Version', () => {
  it('runs a retained older version, refuses an unknown one with 404 naming it, and a malformed one with 400', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const id = await deployedDecision(ws, 'pinned', triageSchema(marker));
    // Version 2 blocks everything: a pinned run of version 1 cannot be mistaken for it.
    await redeploy(ws, id, triageSchema(marker, { policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: 0 }, action: 'block' }] }), 1);
    await scriptEngine(marker, [{ answers: { ...SCRIPTED, fraud: { yes: 0.1, no: 0.9 } } }], true);

    const active = await runDecision(ws, 'pinned', { message: 'a' });
    expect({ status: active.status, version: active.body.version, action: active.body.action }).toEqual({ status: 200, version: 2, action: 'block' });
    const older = await runDecision(ws, 'pinned', { message: 'a' }, { 'decision-version': '1' });
    expect({ status: older.status, version: older.body.version, action: older.body.action }).toEqual({ status: 200, version: 1, action: 'continue' });
    const [recorded] = await executionsOf(ws, 'pinned');
    expect({ id: recorded.id, version: recorded.version }).toEqual({ id: older.body.execution_id, version: 1 });

    const unknown = await runDecision(ws, 'pinned', { message: 'a' }, { 'decision-version': '3' });
    expectError(unknown, 404, 'DECISION_NOT_FOUND');
    expect(unknown.body.error.message).toContain('version 3');
    expectError(await runDecision(ws, 'pinned', { message: 'a' }, { 'decision-version': 'latest' }), 400, 'INVALID_REQUEST');
    expectError(await runDecision(ws, 'pinned', { message: 'a' }, { 'decision-version': '0' }), 400, 'INVALID_REQUEST');
    // Refused before a reservation, so neither left an execution behind.
    expect(await executionsOf(ws, 'pinned')).toHaveLength(2);
    // The decision checks keep their order: an unknown slug is still the slug's 404, a disabled endpoint its 409.
    expect((await runDecision(ws, 'nope', {}, { 'decision-version': '1' })).body.error.message).not.toContain('version');
    await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/endpoint`, { token: ws.session, body: { enabled: false } });
    expectError(await runDecision(ws, 'pinned', { message: 'a' }, { 'decision-version': '9' }), 409, 'DECISION_DISABLED');
  });

  it('is part of the idempotency fingerprint', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const id = await deployedDecision(ws, 'pinned-keys', triageSchema(marker));
    await redeploy(ws, id, triageSchema(`${marker} v2`), 1);
    const first = await runDecision(ws, 'pinned-keys', { message: 'k' }, { 'idempotency-key': 'pin-1', 'decision-version': '1' });
    expect(first.body.version).toBe(1);
    const replay = await runDecision(ws, 'pinned-keys', { message: 'k' }, { 'idempotency-key': 'pin-1', 'decision-version': '1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expectError(await runDecision(ws, 'pinned-keys', { message: 'k' }, { 'idempotency-key': 'pin-1', 'decision-version': '2' }), 409, 'IDEMPOTENCY_CONFLICT');
    expectError(await runDecision(ws, 'pinned-keys', { message: 'k' }, { 'idempotency-key': 'pin-1' }), 409, 'IDEMPOTENCY_CONFLICT');
    expect(await executionsOf(ws, 'pinned-keys')).toHaveLength(1);
  });

  it('pins a version through MCP run_decision', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const id = await deployedDecision(ws, 'pinned-mcp', triageSchema(marker));
    await redeploy(ws, id, triageSchema(`${marker} v2`), 1);
    const mcp = (args: Record<string, unknown>) =>
      call('POST', '/mcp', {
        token: ws.apiKey,
        headers: { accept: 'application/json, text/event-stream' },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'run_decision', arguments: { slug: 'pinned-mcp', state: { message: 'm' }, ...args } },
        },
      });
    expect((await mcp({ version: 1 })).body.result.structuredContent.version).toBe(1);
    expect((await mcp({})).body.result.structuredContent.version).toBe(2);
    const unknown = (await mcp({ version: 7 })).body.result;
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent.error).toMatchObject({ code: 'DECISION_NOT_FOUND', message: expect.stringContaining('version 7') });
  });
});

describe('version history and rollback', () => {
  it('keeps a deploy note with its version, trimmed, and refuses one that is not text or too long before deploying', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const { body: created } = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions`, {
      token: ws.session,
      body: { slug: 'noted', name: 'Noted', schema: triageSchema(marker) },
    });
    const deployUrl = `/app/v1/workspaces/${ws.workspaceId}/decisions/${created.id}/deploy`;
    const refusedType = await call('POST', deployUrl, { token: ws.session, body: { note: 42 } });
    expectError(refusedType, 400, 'INVALID_REQUEST');
    expect(refusedType.body.error.details).toEqual([{ path: 'note', message: 'must be text' }]);
    expectError(await call('POST', deployUrl, { token: ws.session, body: { note: 'x'.repeat(501) } }), 400, 'INVALID_REQUEST');
    const first = await call('POST', deployUrl, { token: ws.session, body: { note: '  First version, for the support team.\n' } });
    expect(first.status).toBe(201);
    expect(first.body.version).toBe(1);
    await redeploy(ws, created.id, triageSchema(`${marker} v2`), 1);

    const listed = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${created.id}/versions`, { token: ws.session });
    expect(listed.body.data.map((v: { version: number; note: string | null }) => [v.version, v.note])).toEqual([
      [2, null],
      [1, 'First version, for the support team.'],
    ]);
  });

  it('lists versions with who deployed them and their contract changes, compares two, and rolls back to a copy', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const id = await deployedDecision(ws, 'history', triageSchema(marker));
    const withOption = triageSchema(marker, {
      questions: [
        ...triageSchema(marker).questions.slice(0, 2),
        { key: 'fraud', kind: 'probability', instructions: 'Judge the request.', criterion: 'The request shows signs of fraud' },
        { key: 'vip', kind: 'probability', instructions: 'Is this a VIP?', criterion: 'The customer is a VIP' },
      ],
    });
    await redeploy(ws, id, withOption, 1);
    const base = `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/versions`;

    const listed = await call('GET', base, { token: ws.session });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((v: { version: number; active: boolean }) => [v.version, v.active])).toEqual([
      [2, true],
      [1, false],
    ]);
    const [second, first] = listed.body.data;
    expect(second.deployed_by).toEqual({ user_id: expect.any(String), email: ws.email });
    expect(second.contract_changes).toEqual([expect.objectContaining({ kind: 'added', path: 'questions.vip' })]);
    expect(first.contract_changes.length).toBeGreaterThan(0);
    expect(first.rolled_back_from).toBeNull();

    const compared = await call('GET', `${base}/compare?from=1&to=2`, { token: ws.session });
    expect(compared.status).toBe(200);
    expect(compared.body.schema_changes).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'added', path: 'questions.vip' })]));
    expect(compared.body.contract_changes).toEqual(second.contract_changes);
    expectError(await call('GET', `${base}/compare?from=1&to=9`, { token: ws.session }), 404, 'NOT_FOUND');
    expectError(await call('GET', `${base}/compare?from=x&to=2`, { token: ws.session }), 400, 'INVALID_REQUEST');

    const rolled = await call('POST', `${base}/1/rollback`, { token: ws.session });
    expect({ status: rolled.status, version: rolled.body.version }).toEqual({ status: 201, version: 3 });
    const after = (await call('GET', base, { token: ws.session })).body.data;
    expect(after[0]).toMatchObject({ version: 3, active: true, rolled_back_from: 1 });
    const same = await call('GET', `${base}/compare?from=1&to=3`, { token: ws.session });
    expect(same.body.schema_changes).toEqual([]);
    expect(same.body.to.schema).toEqual(same.body.from.schema);
    const run = await runDecision(ws, 'history', { message: 'r' });
    expect(run.body.version).toBe(3);
    expectError(await call('POST', `${base}/7/rollback`, { token: ws.session }), 404, 'NOT_FOUND');

    // Like deploy: Admin (or decisions:deploy); a member may neither read the history nor roll back.
    const member = await signUp();
    expect(
      (await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: member.email, role: 'member' } })).status,
    ).toBe(201);
    expectError(await call('GET', base, { token: member.session }), 403, 'FORBIDDEN');
    expectError(await call('POST', `${base}/1/rollback`, { token: member.session }), 403, 'FORBIDDEN');
  });
});

describe('deploy and rollback review', () => {
  const rule = (question: string, value: number, action: string) => ({ when: { on: 'answer', question, op: 'gte', value }, action });
  const escalateAngry = {
    when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' },
    and: [{ on: 'score', question: 'urgency', op: 'gte', value: 3 }],
    action: 'escalate',
  };

  it('answers a deploy, a rollback and a promoted shadow with what breaks callers, the list the review showed before', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const { body: created } = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions`, {
      token: ws.session,
      body: { slug: 'breaks', name: 'Breaks', schema: triageSchema(marker) },
    });
    const decisionUrl = `/app/v1/workspaces/${ws.workspaceId}/decisions/${created.id}`;
    const first = await call('POST', `${decisionUrl}/deploy`, { token: ws.session });
    expect({ status: first.status, body: first.body }).toEqual({ status: 201, body: { version: 1, breaking: [] } });

    const stricter = triageSchema(marker, {
      state: {
        type: 'object',
        fields: { message: { type: 'string', required: true }, amount: { type: 'number', required: true }, order: { type: 'string', required: true } },
      },
    });
    expect((await call('PUT', `${decisionUrl}/draft`, { token: ws.session, body: { schema: stricter, revision: 1 } })).status).toBe(200);
    const reviewed = await call('GET', `${decisionUrl}/review`, { token: ws.session });
    expect(reviewed.body.review.breaking).toEqual([
      { kind: 'fieldAdded', subject: 'order' },
      { kind: 'fieldRequired', subject: 'amount' },
    ]);
    const second = await call('POST', `${decisionUrl}/deploy`, { token: ws.session });
    expect({ status: second.status, body: second.body }).toEqual({ status: 201, body: { version: 2, breaking: reviewed.body.review.breaking } });

    // Back to version 1: the field added required is removed, which breaks the callers that now send it.
    const back = await call('GET', `${decisionUrl}/review?version=1`, { token: ws.session });
    expect(back.body.review.breaking).toEqual([{ kind: 'fieldRemoved', subject: 'order' }]);
    const rolled = await call('POST', `${decisionUrl}/versions/1/rollback`, { token: ws.session });
    expect({ status: rolled.status, body: rolled.body }).toEqual({ status: 201, body: { version: 3, breaking: back.body.review.breaking } });

    // A shadow of the stricter draft, promoted: the same changes against the version it replaces.
    expect((await call('POST', `${decisionUrl}/shadow`, { token: ws.session, body: { rate: 50 } })).status).toBe(201);
    const promoted = await call('POST', `${decisionUrl}/shadow/promote`, { token: ws.session });
    expect({ status: promoted.status, body: promoted.body }).toEqual({ status: 201, body: { version: 4, breaking: reviewed.body.review.breaking } });
  });

  it('says in words what a deploy changes: a rule inserted at the top is one change, a missing secret is named, and compare and rollback read the same', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const first = triageSchema(marker, { policies: [rule('fraud', 0.9, 'block'), rule('fraud', 0.7, 'escalate'), rule('fraud', 0.5, 'continue')] });
    const { body: created } = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions`, {
      token: ws.session,
      body: { slug: 'reviewed', name: 'Reviewed', schema: first },
    });
    const reviewUrl = `/app/v1/workspaces/${ws.workspaceId}/decisions/${created.id}/review`;

    // Nothing deployed yet: the first version is described by what it holds.
    const initial = await call('GET', reviewUrl, { token: ws.session });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      from: null,
      to: null,
      review: { first: true, summary: '3 questions (intent, urgency, fraud), 1 composite (risk), 3 rules', changes: 0, areas: [], breaking: [] },
      missing_secrets: [],
    });
    expect(await deploy(ws, created.id)).toBe(1);

    const hook = { key: 'crm_hook', type: 'webhook', url: 'https://crm.example.com/hook', headers: { Authorization: 'Bearer {{secrets.CRM_TOKEN}}' } };
    const draft = { ...first, policies: [escalateAngry, ...first.policies], destinations: [hook] };
    const saved = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${created.id}/draft`, {
      token: ws.session,
      body: { schema: draft, revision: 1 },
    });
    expect(saved.status).toBe(200);

    const reviewed = await call('GET', reviewUrl, { token: ws.session });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body).toEqual({
      from: 1,
      to: null,
      review: {
        first: false,
        summary: '3 questions (intent, urgency, fraud), 1 composite (risk), 4 rules, 1 destination (crm_hook)',
        changes: 2,
        areas: [
          {
            area: 'rules',
            items: [
              {
                area: 'rules',
                kind: 'added',
                subject: 'rule 1',
                text: 'Rule added at position 1: when `intent` = refund and score of `urgency` ≥ 3 → escalate',
                breaking: false,
              },
            ],
          },
          {
            area: 'destinations',
            items: [
              {
                area: 'destinations',
                kind: 'added',
                subject: 'crm_hook',
                text: 'Destination crm_hook added (webhook to https://crm.example.com/hook)',
                breaking: false,
              },
            ],
          },
        ],
        breaking: [],
      },
      missing_secrets: [{ destination: 'crm_hook', header: 'Authorization', secret: 'CRM_TOKEN' }],
    });

    // Once the secret exists the warning is gone; its value is never in a review.
    const value = `tok-${uniqueMarker()}`;
    expect((await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/secrets/CRM_TOKEN`, { token: ws.session, body: { value } })).status).toBe(201);
    const withSecret = await call('GET', reviewUrl, { token: ws.session });
    expect(withSecret.body.missing_secrets).toEqual([]);
    expect(withSecret.text).not.toContain(value);
    expect(await deploy(ws, created.id)).toBe(2);

    // History: compare keeps its fields and adds the same review; the list says what each version changed.
    const base = `/app/v1/workspaces/${ws.workspaceId}/decisions/${created.id}/versions`;
    const compared = await call('GET', `${base}/compare?from=1&to=2`, { token: ws.session });
    expect(compared.status).toBe(200);
    expect(Object.keys(compared.body).sort()).toEqual(['contract_changes', 'from', 'missing_secrets', 'review', 'schema_changes', 'to']);
    expect(compared.body.schema_changes.length).toBeGreaterThan(1);
    expect(compared.body.review).toEqual(reviewed.body.review);
    expect(compared.body.missing_secrets).toEqual([]);
    const listed = (await call('GET', base, { token: ws.session })).body.data;
    expect(listed.map((row: { version: number; review: { first: boolean; changes: number } }) => [row.version, row.review.first, row.review.changes])).toEqual([
      [2, false, 2],
      [1, true, 0],
    ]);
    expect(listed[1].review.summary).toBe('3 questions (intent, urgency, fraud), 1 composite (risk), 3 rules');

    // A rollback reads from the active version to its target; the secret removed since is named again.
    expect((await call('DELETE', `/app/v1/workspaces/${ws.workspaceId}/secrets/CRM_TOKEN`, { token: ws.session })).status).toBe(204);
    const back = await call('GET', `${reviewUrl}?version=1`, { token: ws.session });
    expect(back.status).toBe(200);
    expect({ from: back.body.from, to: back.body.to }).toEqual({ from: 2, to: 1 });
    expect(back.body.review.areas.flatMap((group: { items: Array<{ text: string }> }) => group.items.map((item) => item.text))).toEqual([
      'Rule removed from position 1: when `intent` = refund and score of `urgency` ≥ 3 → escalate',
      'Destination crm_hook removed (webhook to https://crm.example.com/hook)',
    ]);
    expect(back.body.missing_secrets).toEqual([]);
    const forward = await call('GET', `${reviewUrl}?version=2`, { token: ws.session });
    expect(forward.body.missing_secrets).toEqual([{ destination: 'crm_hook', header: 'Authorization', secret: 'CRM_TOKEN' }]);
    expect((await call('GET', `${base}/compare?from=1&to=2`, { token: ws.session })).body.missing_secrets).toHaveLength(1);

    expectError(await call('GET', `${reviewUrl}?version=9`, { token: ws.session }), 404, 'NOT_FOUND');
    const malformed = await call('GET', `${reviewUrl}?version=01`, { token: ws.session });
    expectError(malformed, 400, 'INVALID_REQUEST');
    expect(malformed.body.error.details).toEqual([expect.objectContaining({ path: 'version' })]);
    const member = await signUp();
    expect(
      (await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: member.email, role: 'member' } })).status,
    ).toBe(201);
    expectError(await call('GET', reviewUrl, { token: member.session }), 403, 'FORBIDDEN');
  });
});

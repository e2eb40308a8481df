import {
  call,
  createDecision,
  deployedDecision,
  engineRequests,
  expectError,
  newWorkspace,
  runDecision,
  scriptEngine,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';

/**
 * The run endpoint's ten steps, each against the step after it: the first failing step decides.
 * Step 1: key, 2: window, 3: slug/body/Idempotency-Key format, 4: idempotency, 5: decision,
 * 6: volume and credits, 7: state, 8: engine, 9-10: policies and destinations.
 */
const json = { 'content-type': 'application/json' };
const oversized = `{"state":{"message":"${'x'.repeat(140_000)}"}}`;

async function exhaustDecisions(ws: Workspace): Promise<void> {
  // Cheap decision-window requests: a malformed slug fails at step 3 but still counts.
  await Promise.all(Array.from({ length: 60 }, () => call('POST', '/v1/decisions/NOPE', { token: ws.apiKey, body: { state: {} } })));
}

async function withoutVolume(ws: Workspace): Promise<void> {
  const reply = await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, {
    token: process.env.E2E_ADMIN_TOKEN,
    body: { plan: 'genesis', overrides: { included_decisions: 0 } },
  });
  expect(reply.status).toBe(200);
}

describe('the order of checks on POST /v1/decisions/{slug}', () => {
  it('1 before 2 and 3: a bad key wins over a used-up window, a bad slug and an oversized body', async () => {
    const ws = await newWorkspace();
    await exhaustDecisions(ws);
    const reply = await call('POST', '/v1/decisions/BAD_SLUG', { token: `svc_live_${'z'.repeat(32)}`, rawBody: oversized, headers: json });
    expectError(reply, 401, 'INVALID_API_KEY');
    expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('2 before 3: a used-up window wins over a bad slug and an oversized body', async () => {
    const ws = await newWorkspace();
    await exhaustDecisions(ws);
    for (const reply of [
      await call('POST', '/v1/decisions/BAD_SLUG', { token: ws.apiKey, body: { state: {} } }),
      await call('POST', '/v1/decisions/fine', { token: ws.apiKey, rawBody: oversized, headers: json }),
    ]) {
      expectError(reply, 429, 'RATE_LIMITED');
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // The reads window is another window: it still has room.
    expect((await call('GET', '/v1/decisions', { token: ws.apiKey })).status).toBe(200);
  });

  it('inside 3: slug, then size, then JSON, then Idempotency-Key format', async () => {
    const ws = await newWorkspace();
    expectError(await call('POST', '/v1/decisions/BAD_SLUG', { token: ws.apiKey, rawBody: oversized, headers: json }), 404, 'DECISION_NOT_FOUND');
    expectError(
      await call('POST', '/v1/decisions/fine', { token: ws.apiKey, rawBody: `${oversized.slice(0, -2)}`, headers: { ...json, 'idempotency-key': 'bad key' } }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    const malformed = await call('POST', '/v1/decisions/fine', { token: ws.apiKey, rawBody: '{"state":', headers: { ...json, 'idempotency-key': 'bad key' } });
    expectError(malformed, 400, 'INVALID_REQUEST');
    expect(malformed.body.error.message).toMatch(/JSON/);
    const badKey = await call('POST', '/v1/decisions/missing', { token: ws.apiKey, body: { state: {} }, headers: { 'idempotency-key': 'bad key' } });
    expectError(badKey, 400, 'INVALID_REQUEST');
    expect(badKey.body.error.message).toMatch(/Idempotency-Key/);
  });

  it('4 before 5: a key stored for another request wins over an unknown decision', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'known', triageSchema());
    expect((await runDecision(ws, 'known', { message: 'hi' }, { 'idempotency-key': 'used' })).status).toBe(200);
    expectError(await runDecision(ws, 'unknown', { message: 'hi' }, { 'idempotency-key': 'used' }), 409, 'IDEMPOTENCY_CONFLICT');
  });

  it('5 before 6: an undeployed or disabled decision wins over used-up volume', async () => {
    const ws = await newWorkspace();
    await withoutVolume(ws);
    await createDecision(ws, 'draft', triageSchema());
    expectError(await runDecision(ws, 'draft', { message: 'hi' }), 409, 'DECISION_NOT_DEPLOYED');
    expectError(await runDecision(ws, 'absent', { message: 'hi' }), 404, 'DECISION_NOT_FOUND');
    const id = await deployedDecision(ws, 'off', triageSchema());
    await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/endpoint`, { token: ws.session, body: { enabled: false } });
    expectError(await runDecision(ws, 'off', { message: 'hi' }), 409, 'DECISION_DISABLED');
  });

  it('6 before 7: used-up volume wins over an invalid state, and nothing is recorded', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'paid', triageSchema());
    await withoutVolume(ws);
    const reply = await runDecision(ws, 'paid', { amount: 'not a number' });
    expectError(reply, 402, 'CREDITS_EXHAUSTED');
    expect(reply.body.error.details).toMatchObject({ used: 0, included: 0, availableCents: 0, currency: 'usd' });
    expect((await call('GET', '/v1/executions', { token: ws.apiKey })).body.data).toEqual([]);
  });

  it('7 before 8: an invalid state never reaches the engine, and is recorded as an error', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'checked', triageSchema(marker));
    await scriptEngine(marker, [{ status: 500 }], true);
    const reply = await runDecision(ws, 'checked', { amount: 3 });
    expectError(reply, 422, 'INVALID_STATE');
    expect(reply.body.error.message).toContain('message');
    expect(await engineRequests(marker)).toHaveLength(0);
    const executions = await call('GET', '/v1/executions?status=error', { token: ws.apiKey });
    expect(executions.body.data[0]).toMatchObject({ status: 'error', error: { code: 'INVALID_STATE' } });
  });

  it('a body without state is a state problem naming state', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'stateless', triageSchema());
    const reply = await call('POST', '/v1/decisions/stateless', { token: ws.apiKey, body: { other: 1 } });
    expectError(reply, 422, 'INVALID_STATE');
    expect(reply.body.error.message).toContain('state');
  });

  it('8: an engine failure is recorded as an error and not billed; 9-10 follow a good answer', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'engine-fails', triageSchema(marker));
    await scriptEngine(marker, [{ status: 401 }]);
    expectError(await runDecision(ws, 'engine-fails', { message: 'hi' }), 502, 'ENGINE_AUTH_FAILED');
    const ok = await runDecision(ws, 'engine-fails', { message: 'hi' });
    expect(ok.status).toBe(200);
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.body.usage.used).toBe(1);
    const statuses = (await call('GET', '/v1/executions', { token: ws.apiKey })).body.data.map((e: { status: string }) => e.status);
    expect(statuses).toEqual(['success', 'error']);
  });
});

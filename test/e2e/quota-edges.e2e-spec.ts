import { call, deployedDecision, expectError, newWorkspace, Reply, runDecision, scriptEngine, triageSchema, uniqueMarker, Workspace } from './support/api';

/**
 * At every 402 edge, a run that ended without being billed (an engine-error fallback, an invalid state, an engine
 * failure) frees its decision before it answers: the run right after it, sent at once, still gets the last
 * decision the workspace paid for, and only the one after that is refused.
 */

const admin = (method: string, path: string, body: unknown) => call(method, path, { token: process.env.E2E_ADMIN_TOKEN, body });

interface Edge {
  ws: Workspace;
  /** A decision whose engine is down and that falls back. */
  fallback: () => Promise<Reply>;
  /** A decision that answers, without a fallback. */
  strict: (state?: unknown) => Promise<Reply>;
  /** Makes the strict decision's next engine call fail with a 401 (a 502 for the caller). */
  failNextStrict: () => Promise<void>;
}

async function edgeWorkspace(plan: Record<string, unknown>): Promise<Edge> {
  const ws = await newWorkspace();
  const down = uniqueMarker();
  const once = uniqueMarker();
  await deployedDecision(ws, 'falls-back', triageSchema(down, { settings: { onEngineError: 'fallback' } }));
  await deployedDecision(ws, 'strict', triageSchema(once));
  await scriptEngine(down, [{ status: 401 }], true);
  const planReply = await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, {
    plan: 'genesis',
    overrides: { rate_limit_per_minute: 1_000_000, ...plan },
  });
  expect(planReply.status).toBe(200);
  return {
    ws,
    fallback: () => runDecision(ws, 'falls-back', { message: 'the engine is down' }),
    strict: (state = { message: 'My order arrived broken' }) => runDecision(ws, 'strict', state),
    failNextStrict: () => scriptEngine(once, [{ status: 401 }]),
  };
}

/** Fallback, invalid state, engine failure, back to back: none of them may use up the decision left. */
async function unbilledOutcomes(edge: Edge): Promise<void> {
  await edge.failNextStrict();
  const fellBack = await edge.fallback();
  expect(fellBack.status).toBe(200);
  expect(fellBack.body.action_reason.type).toBe('engine_error');
  expectError(await edge.strict({ amount: 1 }), 422, 'INVALID_STATE');
  expectError(await edge.strict(), 502, 'ENGINE_AUTH_FAILED');
}

const usage = async (ws: Workspace) => (await call('GET', '/v1/me', { token: ws.apiKey })).body.usage;

describe('402 edges after runs that were not billed', () => {
  it('QUOTA_EXCEEDED: the last included decision still succeeds', async () => {
    const edge = await edgeWorkspace({ included_decisions: 1, hard_cap: true });
    await unbilledOutcomes(edge);
    expect((await edge.strict()).status).toBe(200);
    const refused = await edge.strict();
    expectError(refused, 402, 'QUOTA_EXCEEDED');
    expect(refused.body.error.details).toMatchObject({ used: 1, included: 1 });
    expect(await usage(edge.ws)).toMatchObject({ used: 1, reserved: 0 });
  });

  it('CREDITS_EXHAUSTED: the decision the credits pay for still succeeds', async () => {
    // One cent a decision past the included one, and one cent of credits.
    const edge = await edgeWorkspace({ included_decisions: 1, price_per_million_cents: 1_000_000 });
    expect((await admin('POST', `/admin/v1/workspaces/${edge.ws.workspaceId}/credits`, { kind: 'paid', amount_cents: 1, currency: 'usd' })).status).toBe(201);
    expect((await edge.strict({ message: 'the included one' })).status).toBe(200);
    await unbilledOutcomes(edge);
    expect((await edge.strict()).status).toBe(200);
    const refused = await edge.strict();
    expectError(refused, 402, 'CREDITS_EXHAUSTED');
    expect(refused.body.error.details).toMatchObject({ used: 2, included: 1, availableCents: 0 });
    expect(await usage(edge.ws)).toMatchObject({ used: 2, reserved: 0 });
  });

  it('SPEND_CAP_REACHED: the decision the cap still allows succeeds', async () => {
    const edge = await edgeWorkspace({ included_decisions: 1, price_per_million_cents: 1_000_000 });
    expect((await admin('POST', `/admin/v1/workspaces/${edge.ws.workspaceId}/credits`, { kind: 'paid', amount_cents: 100, currency: 'usd' })).status).toBe(201);
    expect((await admin('PUT', `/admin/v1/workspaces/${edge.ws.workspaceId}/spend-cap`, { spend_cap_cents: 1 })).status).toBe(200);
    expect((await edge.strict({ message: 'the included one' })).status).toBe(200);
    await unbilledOutcomes(edge);
    expect((await edge.strict()).status).toBe(200);
    const refused = await edge.strict();
    expectError(refused, 402, 'SPEND_CAP_REACHED');
    expect(refused.body.error.details).toMatchObject({ spendCapCents: 1, spentCents: 1 });
    expect(await usage(edge.ws)).toMatchObject({ used: 2, reserved: 0 });
  });

  it('waves of parallel runs at a hard cap of 20, a third of them falling back, bill exactly 20, and /v1/me agrees', async () => {
    const edge = await edgeWorkspace({ included_decisions: 20, hard_cap: true });
    const WAVE = 9;
    let billed = 0;
    let exhausted = false;
    // A refusal inside a wave may come from a fallback still running beside it. Once the wave has answered, no
    // run is in flight, so a run sent at once must succeed exactly while fewer than 20 were billed.
    for (let wave = 0; wave < 12 && !exhausted; wave++) {
      const replies = await Promise.all(Array.from({ length: WAVE }, (_, index) => (index % 3 === 0 ? edge.fallback() : edge.strict())));
      for (const reply of replies) {
        if (reply.status === 402) expectError(reply, 402, 'QUOTA_EXCEEDED');
        else expect(reply.status).toBe(200);
      }
      billed += replies.filter((reply) => reply.status === 200 && reply.body.action_reason.type !== 'engine_error').length;
      if (replies.some((reply) => reply.status === 402)) {
        const probe = await edge.strict();
        if (billed < 20) {
          expect(probe.status).toBe(200);
          billed++;
        } else {
          expectError(probe, 402, 'QUOTA_EXCEEDED');
          exhausted = true;
        }
      }
    }
    expect(exhausted).toBe(true);
    expect(billed).toBe(20);
    expect(await usage(edge.ws)).toMatchObject({ used: 20, included: 20, reserved: 0 });
  });
});

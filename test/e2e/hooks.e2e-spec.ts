import { createHmac } from 'node:crypto';
import { Client } from 'pg';
import {
  call,
  createDecision,
  deployedDecision,
  expectError,
  newWorkspace,
  Reply,
  roomyWorkspace,
  runDecision,
  scriptEngine,
  signUp,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';
import { GatewayProcess, startGateway } from './support/cluster';

/**
 * The secret-URL trigger end to end: the token in the path is the credential, an optional whsec_ secret is
 * proven by a signature or as the bearer, and the calls run in a window of their own, billed like API runs.
 */

const admin = (method: string, path: string, body: unknown) => call(method, path, { token: process.env.E2E_ADMIN_TOKEN, body });

interface HookCall {
  /** The body as sent; a Uint8Array goes without a Content-Type. */
  body?: string | Uint8Array;
  contentType?: string | null;
  headers?: Record<string, string>;
  query?: string;
}

async function hook(token: string, options: HookCall = {}, base = process.env.E2E_BASE_URL!): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  const response = await fetch(`${base}/v1/hooks/${token}${options.query ?? ''}`, { method: 'POST', headers, body: options.body });
  const text = await response.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

const stateBody = (message = 'My order arrived broken') => JSON.stringify({ state: { message } });

function signature(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

function signed(secret: string, body: string, skewSeconds = 0): Record<string, string> {
  const t = Math.floor(Date.now() / 1000) + skewSeconds;
  return { 'service-signature': `t=${t},v1=${signature(secret, t, body)}` };
}

/**
 * A call signed with `t` = this second + `skewSeconds`, sent again when it crossed a second boundary, so that
 * the gateway (on this machine's clock) read the very second `t` was counted from.
 */
async function signedAtSkew(token: string, secret: string, body: string, skewSeconds: number): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let attempt = 0; attempt < 20; attempt++) {
    const second = Math.floor(Date.now() / 1000);
    const t = second + skewSeconds;
    replies.push(await hook(token, { body, headers: { 'service-signature': `t=${t},v1=${signature(secret, t, body)}` } }));
    if (Math.floor(Date.now() / 1000) === second) break;
  }
  return replies;
}

const decisionPath = (ws: Workspace, decisionId: string) => `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`;

async function turnOn(ws: Workspace, decisionId: string, session = ws.session): Promise<string> {
  const reply = await call('POST', `${decisionPath(ws, decisionId)}/hook`, { token: session });
  expect(reply.status).toBe(201);
  expect(reply.body.token).toMatch(/^whk_[A-Za-z0-9]{32}$/);
  expect(reply.body.url).toMatch(new RegExp(`^https?://[^/]+/v1/hooks/${reply.body.token}$`));
  return reply.body.token;
}

async function newSecret(ws: Workspace, decisionId: string): Promise<string> {
  const reply = await call('POST', `${decisionPath(ws, decisionId)}/hook/secret`, { token: ws.session });
  expect(reply.status).toBe(201);
  expect(reply.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
  return reply.body.secret;
}

/** One row of a service's table as PostgreSQL prints it, every column included. */
async function storedRow(sql: string, id: string): Promise<string> {
  const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
  await db.connect();
  try {
    const { rows } = await db.query<{ row: string }>(sql, [id]);
    expect(rows).toHaveLength(1);
    return rows[0]!.row;
  } finally {
    await db.end();
  }
}

async function executions(ws: Workspace): Promise<any[]> {
  const reply = await call('GET', '/v1/executions?limit=100', { token: ws.apiKey });
  expect(reply.status).toBe(200);
  return reply.body.data;
}

/** A roomy workspace with a deployed triage decision and its secret URL on. */
async function hooked(slug = 'hooked', schema: unknown = triageSchema()): Promise<{ ws: Workspace; decisionId: string; token: string }> {
  const ws = await roomyWorkspace();
  const decisionId = await deployedDecision(ws, slug, schema);
  return { ws, decisionId, token: await turnOn(ws, decisionId) };
}

describe('running through the secret URL', () => {
  it('unwraps a body that is only {state}, takes any other body as the state, and reads text/plain as a text state', async () => {
    const { ws, decisionId, token } = await hooked();

    const wrapped = await hook(token, { body: stateBody() });
    expect(wrapped.status).toBe(200);
    expect(wrapped.body).toMatchObject({ decision_id: decisionId, schema: 'hooked', version: 1, action: expect.any(String) });
    expect(wrapped.body.execution_id).toMatch(/^exec_/);
    expect(wrapped.headers.get('x-ratelimit-limit')).toBe('1000000');

    // The whole body is the state when it is not {state} alone.
    expect((await hook(token, { body: JSON.stringify({ message: 'Broken screen' }) })).status).toBe(200);
    expectError(await hook(token, { body: JSON.stringify({ state: { message: 'x' }, note: 'extra' }) }), 422, 'INVALID_STATE');
    expectError(await hook(token, { body: JSON.stringify([{ message: 'x' }]) }), 422, 'INVALID_STATE');

    // Without a Content-Type, or with another one, the body is read as JSON.
    expect((await hook(token, { body: new TextEncoder().encode(stateBody()), contentType: null })).status).toBe(200);
    expect((await hook(token, { body: stateBody(), contentType: 'application/x-www-form-urlencoded' })).status).toBe(200);
    // text/plain is a text state as it is, which this object-state decision refuses.
    expectError(await hook(token, { body: stateBody(), contentType: 'text/plain' }), 422, 'INVALID_STATE');

    const textDecision = await deployedDecision(ws, 'texty', triageSchema(undefined, { state: { type: 'text' } }));
    const textToken = await turnOn(ws, textDecision);
    const text = await hook(textToken, { body: 'My order arrived broken, I want my money back', contentType: 'text/plain; charset=utf-8' });
    expect(text.status).toBe(200);
    expect(text.body.schema).toBe('texty');

    const probabilities = await hook(token, { body: stateBody(), query: '?include=probabilities' });
    expect(probabilities.status).toBe(200);
    expect(Object.keys(probabilities.body.probabilities)).toEqual(['intent', 'urgency', 'fraud']);
    expect(wrapped.body.probabilities).toBeUndefined();
  });

  it('has no idempotency: the same Idempotency-Key runs again', async () => {
    const { token } = await hooked();
    const first = await hook(token, { body: stateBody(), headers: { 'idempotency-key': 'same-key' } });
    const second = await hook(token, { body: stateBody(), headers: { 'idempotency-key': 'same-key' } });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.execution_id).not.toBe(first.body.execution_id);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
  });

  it('records its runs with source webhook and livemode true, bills them, and refused calls leave nothing', async () => {
    const ws = await newWorkspace('test');
    const decisionId = await deployedDecision(ws, 'billed-hook', triageSchema());
    const token = await turnOn(ws, decisionId);
    expect((await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { plan: 'genesis', overrides: { included_decisions: 2 } })).status).toBe(200);

    expectError(await hook(token, { body: '' }), 400, 'INVALID_REQUEST');
    expectError(await hook(token, { body: '{"state":' }), 400, 'INVALID_REQUEST');
    expect(await executions(ws)).toEqual([]);

    expect((await hook(token, { body: stateBody() })).status).toBe(200);
    // A test key's run is not live; the secret URL's always is.
    expect((await runDecision(ws, 'billed-hook', { message: 'through the API' })).status).toBe(200);
    const recorded = await executions(ws);
    expect(recorded.map((execution) => [execution.source, execution.livemode]).sort()).toEqual([
      ['api', false],
      ['webhook', true],
    ]);

    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.body.usage).toMatchObject({ used: 2, included: 2, reserved: 0 });
    const exhausted = await hook(token, { body: stateBody() });
    expectError(exhausted, 402, 'CREDITS_EXHAUSTED');
    expect(exhausted.body.error.details).toMatchObject({ used: 2, included: 2 });
    expect(await executions(ws)).toHaveLength(2);
  });
});

describe('the errors of the secret URL', () => {
  it('answers every row of its error table', async () => {
    const { ws, decisionId, token } = await hooked('errors');

    expectError(await hook(`whk_${'A'.repeat(32)}`, { body: stateBody() }), 404, 'NOT_FOUND');
    expectError(await hook('whk_short', { body: stateBody() }), 404, 'NOT_FOUND');
    expectError(await hook('not-a-token', { body: stateBody() }), 404, 'NOT_FOUND');

    expectError(await hook(token, { body: '' }), 400, 'INVALID_REQUEST');
    expectError(await hook(token, { body: '   ' }), 400, 'INVALID_REQUEST');
    expectError(await hook(token, { body: '{not json' }), 400, 'INVALID_REQUEST');
    expectError(await hook(token, { body: '{"__proto__":{"x":1}}' }), 400, 'INVALID_REQUEST');
    expectError(await hook(token, { body: JSON.stringify({ state: { message: 'x'.repeat(140_000) } }) }), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await hook(token, { body: JSON.stringify({ state: { amount: 'lots' } }) }), 422, 'INVALID_STATE');

    const draft = await createDecision(ws, 'never-deployed', triageSchema());
    expectError(await hook(await turnOn(ws, draft.id), { body: stateBody() }), 409, 'DECISION_NOT_DEPLOYED');

    expect((await call('PUT', `${decisionPath(ws, decisionId)}/endpoint`, { token: ws.session, body: { enabled: false } })).status).toBe(200);
    expectError(await hook(token, { body: stateBody() }), 409, 'DECISION_DISABLED');
    expect((await call('PUT', `${decisionPath(ws, decisionId)}/endpoint`, { token: ws.session, body: { enabled: true } })).status).toBe(200);

    const marker = uniqueMarker();
    const failing = await deployedDecision(ws, 'engine-fails', triageSchema(marker));
    await scriptEngine(marker, [{ status: 401 }], true);
    expectError(await hook(await turnOn(ws, failing), { body: stateBody() }), 502, 'ENGINE_AUTH_FAILED');

    // 401 and 429 have tests of their own below; 402 is in the billing test above.
    const recorded = await executions(ws);
    expect(recorded.map((execution) => execution.status).sort()).toEqual(['error', 'error']);
    expect(recorded.every((execution) => execution.source === 'webhook')).toBe(true);
  });
});

describe('proving the secret', () => {
  it('accepts a signature or the bearer secret, and says which proof failed', async () => {
    const { ws, decisionId, token } = await hooked('proven');
    const secret = await newSecret(ws, decisionId);
    const body = stateBody();

    const none = await hook(token, { body });
    expectError(none, 401, 'UNAUTHORIZED');
    expect(none.body.error.message).toMatch(/Service-Signature/);
    expect(none.headers.get('x-ratelimit-limit')).toBeNull();

    expect((await hook(token, { body, headers: signed(secret, body) })).status).toBe(200);
    expect((await hook(token, { body, headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    // A valid signature passes whatever else Authorization carries.
    expect((await hook(token, { body, headers: { ...signed(secret, body), authorization: `Bearer ${ws.apiKey}` } })).status).toBe(200);
    // Several v1 entries: one valid is enough.
    const t = Math.floor(Date.now() / 1000);
    expect((await hook(token, { body, headers: { 'service-signature': `t=${t},v1=${'0'.repeat(64)},v1=${signature(secret, t, body)}` } })).status).toBe(200);

    const refusals: Array<[Record<string, string>, RegExp]> = [
      [{ authorization: `Bearer ${secret}x` }, /bearer secret is wrong/],
      [{ 'service-signature': 'v1=abc' }, /malformed/],
      [{ 'service-signature': `t=${t},v1=${signature(secret, t, 'another body')}` }, /does not match/],
      [{ 'service-signature': `t=${t},v1=${signature('whsec_other', t, body)}` }, /does not match/],
      [{ ...signed(secret, body, -400), authorization: 'Bearer whsec_wrong' }, /300 seconds.*bearer secret is wrong/],
    ];
    for (const [headers, message] of refusals) {
      const refused = await hook(token, { body, headers });
      expectError(refused, 401, 'UNAUTHORIZED');
      expect(refused.body.error.message).toMatch(message);
    }
    // 299 seconds either side of the service's clock pass, 301 do not.
    let ran = 4;
    for (const skew of [-301, 301]) {
      const replies = await signedAtSkew(token, secret, body, skew);
      // signedAtSkew always sends at least once.
      const last = replies[replies.length - 1]!;
      expectError(last, 401, 'UNAUTHORIZED');
      expect(last.body.error.message).toMatch(/more than 300 seconds/);
      ran += replies.filter((reply) => reply.status === 200).length;
    }
    for (const skew of [-299, 299]) {
      const replies = await signedAtSkew(token, secret, body, skew);
      expect(replies[replies.length - 1]!.status).toBe(200);
      ran += replies.filter((reply) => reply.status === 200).length;
    }

    expect(await executions(ws)).toHaveLength(ran);

    // At rest the secret is sealed under RUNNER_SECRETS_KEY: neither it nor its random part is in the runner's row.
    const stored = await storedRow(`SELECT h::text AS row FROM decision_runner.decision_hooks h WHERE decision_id = $1`, decisionId);
    expect(stored).not.toContain('whsec_');
    expect(stored).not.toContain(secret.slice('whsec_'.length));

    // Without the secret, unsigned calls are accepted again; a removed secret no longer proves anything.
    expect((await call('DELETE', `${decisionPath(ws, decisionId)}/hook/secret`, { token: ws.session })).status).toBe(204);
    expect((await hook(token, { body })).status).toBe(200);
    expectError(await call('DELETE', `${decisionPath(ws, decisionId)}/hook/secret`, { token: ws.session }), 404, 'NOT_FOUND');
    // A new secret replaces the old one at once.
    const second = await newSecret(ws, decisionId);
    const third = await newSecret(ws, decisionId);
    expect(third).not.toBe(second);
    expectError(await hook(token, { body, headers: { authorization: `Bearer ${second}` } }), 401, 'UNAUTHORIZED');
    expect((await hook(token, { body, headers: { authorization: `Bearer ${third}` } })).status).toBe(200);
  });

  it('answers 429 with Retry-After: 60 once more than 30 wrong proofs reached the URL in a minute', async () => {
    const { ws, decisionId, token } = await hooked('guarded');
    const secret = await newSecret(ws, decisionId);
    const other = await deployedDecision(ws, 'neighbour', triageSchema());
    const otherToken = await turnOn(ws, other);
    const otherSecret = await newSecret(ws, other);
    const body = stateBody();

    for (let i = 0; i < 30; i++) expectError(await hook(token, { body, headers: { authorization: `Bearer whsec_guess${i}` } }), 401, 'UNAUTHORIZED');
    const limited = await hook(token, { body, headers: { authorization: 'Bearer whsec_guess30' } });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toBe('60');
    // During the block even the right proof is refused, so a refusal tells nothing about a guess.
    const right = await hook(token, { body, headers: signed(secret, body) });
    expectError(right, 429, 'RATE_LIMITED');
    expect(right.headers.get('retry-after')).toBe('60');

    // The budget is the URL's own: the workspace's other URL and its API keys go on.
    expectError(await hook(otherToken, { body, headers: { authorization: 'Bearer whsec_guess' } }), 401, 'UNAUTHORIZED');
    expect((await hook(otherToken, { body, headers: signed(otherSecret, body) })).status).toBe(200);
    expect((await runDecision(ws, 'guarded', { message: 'via the API' })).status).toBe(200);
    expect((await executions(ws)).map((execution) => execution.source).sort()).toEqual(['api', 'webhook']);
  });
});

describe('the secret URL state machine', () => {
  let second: GatewayProcess;

  beforeAll(async () => {
    second = await startGateway();
  });

  afterAll(async () => {
    await second?.stop();
  });

  it('rotates, turns off and on again; an old URL answers 404 at once on every gateway', async () => {
    const { ws, decisionId, token } = await hooked('rotating');
    const body = stateBody();
    // Both gateways have resolved (and cached) the token.
    expect((await hook(token, { body })).status).toBe(200);
    expect((await hook(token, { body }, second.baseUrl)).status).toBe(200);
    expectError(await call('POST', `${decisionPath(ws, decisionId)}/hook`, { token: ws.session }), 409, 'CONFLICT');

    const rotated = await call('POST', `${decisionPath(ws, decisionId)}/hook/rotate`, { token: ws.session });
    expect(rotated.status).toBe(200);
    expect(rotated.body.token).toMatch(/^whk_[A-Za-z0-9]{32}$/);
    expect(rotated.body.token).not.toBe(token);
    expectError(await hook(token, { body }, second.baseUrl), 404, 'NOT_FOUND');
    expectError(await hook(token, { body }), 404, 'NOT_FOUND');
    expect((await hook(rotated.body.token, { body }, second.baseUrl)).status).toBe(200);

    // A secret set through one gateway is required at once by the other.
    const secret = await newSecret(ws, decisionId);
    expectError(await hook(rotated.body.token, { body }, second.baseUrl), 401, 'UNAUTHORIZED');
    // Rotation keeps the secret.
    const again = await call('POST', `${decisionPath(ws, decisionId)}/hook/rotate`, { token: ws.session });
    expectError(await hook(again.body.token, { body }), 401, 'UNAUTHORIZED');
    expect((await hook(again.body.token, { body, headers: { authorization: `Bearer ${secret}` } }, second.baseUrl)).status).toBe(200);

    expect((await call('DELETE', `${decisionPath(ws, decisionId)}/hook`, { token: ws.session })).status).toBe(204);
    expectError(await hook(again.body.token, { body, headers: { authorization: `Bearer ${secret}` } }, second.baseUrl), 404, 'NOT_FOUND');
    expectError(await hook(again.body.token, { body }), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `${decisionPath(ws, decisionId)}/hook`, { token: ws.session }), 404, 'NOT_FOUND');
    expectError(await call('POST', `${decisionPath(ws, decisionId)}/hook/rotate`, { token: ws.session }), 409, 'CONFLICT');
    expectError(await call('POST', `${decisionPath(ws, decisionId)}/hook/secret`, { token: ws.session }), 409, 'CONFLICT');

    // On again: a new URL, without a secret.
    const fresh = await turnOn(ws, decisionId);
    expect([token, rotated.body.token, again.body.token]).not.toContain(fresh);
    expect((await hook(fresh, { body }, second.baseUrl)).status).toBe(200);
  });

  it('blocks a URL on every gateway once one of them counted the 31st wrong proof', async () => {
    const { ws, decisionId, token } = await hooked('blocked-everywhere');
    const secret = await newSecret(ws, decisionId);
    const body = stateBody();
    // The other gateway has resolved the URL (with its secret) before the block.
    expect((await hook(token, { body, headers: signed(secret, body) }, second.baseUrl)).status).toBe(200);
    for (let i = 0; i < 30; i++) expectError(await hook(token, { body, headers: { authorization: `Bearer whsec_guess${i}` } }), 401, 'UNAUTHORIZED');
    expectError(await hook(token, { body, headers: { authorization: 'Bearer whsec_guess30' } }), 429, 'RATE_LIMITED');
    const elsewhere = await hook(token, { body, headers: signed(secret, body) }, second.baseUrl);
    expectError(elsewhere, 429, 'RATE_LIMITED');
    expect(elsewhere.headers.get('retry-after')).toBe('60');
  });

  it('lets a Member turn the URL on and off, and keeps rotation and secrets to Admins', async () => {
    const { ws, decisionId } = await hooked('roles');
    const member = await signUp();
    expect(
      (await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: member.email, role: 'member' } })).status,
    ).toBe(201);
    const viewer = await signUp();
    expect(
      (await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: viewer.email, role: 'viewer' } })).status,
    ).toBe(201);

    expect((await call('DELETE', `${decisionPath(ws, decisionId)}/hook`, { token: member.session })).status).toBe(204);
    await turnOn(ws, decisionId, member.session);
    expectError(await call('POST', `${decisionPath(ws, decisionId)}/hook/rotate`, { token: member.session }), 403, 'FORBIDDEN');
    expectError(await call('POST', `${decisionPath(ws, decisionId)}/hook/secret`, { token: member.session }), 403, 'FORBIDDEN');
    expectError(await call('DELETE', `${decisionPath(ws, decisionId)}/hook/secret`, { token: member.session }), 403, 'FORBIDDEN');
    expectError(await call('DELETE', `${decisionPath(ws, decisionId)}/hook`, { token: viewer.session }), 403, 'FORBIDDEN');
    expectError(await call('POST', `${decisionPath(ws, decisionId)}/hook`, { token: ws.apiKey }), 403, 'FORBIDDEN');

    // Another workspace's decision id is not found.
    const stranger = await newWorkspace();
    expectError(await call('POST', `/app/v1/workspaces/${stranger.workspaceId}/decisions/${decisionId}/hook`, { token: stranger.session }), 404, 'NOT_FOUND');
  });
});

describe('the webhooks window', () => {
  async function limitedWorkspace(): Promise<{ ws: Workspace; tokens: [string, string] }> {
    const ws = await newWorkspace();
    expect((await admin('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { plan: 'enterprise', overrides: { rate_limit_per_minute: 3 } })).status).toBe(
      200,
    );
    const first = await deployedDecision(ws, 'first', triageSchema());
    const second = await deployedDecision(ws, 'second', triageSchema());
    return { ws, tokens: [await turnOn(ws, first), await turnOn(ws, second)] };
  }

  it('is shared by the workspace’s URLs and apart from the API keys’ windows', async () => {
    const { ws, tokens } = await limitedWorkspace();
    const body = stateBody();
    const remaining: Array<string | null> = [];
    for (const token of [tokens[0], tokens[1], tokens[0]]) {
      const reply = await hook(token, { body });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('x-ratelimit-limit')).toBe('3');
      remaining.push(reply.headers.get('x-ratelimit-remaining'));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await hook(tokens[1], { body });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Refused calls do not run.
    expect(await executions(ws)).toHaveLength(3);

    // The API key's windows are untouched.
    const run = await runDecision(ws, 'first', { message: 'via the API' });
    expect(run.status).toBe(200);
    expect(run.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('is not used up by API runs', async () => {
    const { ws, tokens } = await limitedWorkspace();
    for (let i = 0; i < 3; i++) expect((await runDecision(ws, 'first', { message: `run ${i}` })).status).toBe(200);
    expectError(await runDecision(ws, 'first', { message: 'one too many' }), 429, 'RATE_LIMITED');
    const reply = await hook(tokens[0], { body: stateBody() });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-ratelimit-remaining')).toBe('2');
  });
});

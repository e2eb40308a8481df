import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { call, createDecision, deployedDecision, expectError, newWorkspace, Reply, runDecision, triageSchema, uniqueMarker, Workspace } from './support/api';
import { ROOT } from './support/cluster';

/**
 * Input built to break the service rather than use it: each is refused at the edge with 400 INVALID_REQUEST
 * in the one error shape, nothing is recorded, and the gateway keeps answering.
 */
const json = { 'content-type': 'application/json' };
const NESTING_MAX = 64;

function nested(levels: number): unknown {
  let value: unknown = 'core';
  for (let i = 1; i < levels; i++) value = { inner: value };
  return value;
}

async function executionsOf(ws: Workspace): Promise<unknown[]> {
  const reply = await call('GET', '/v1/executions', { token: ws.apiKey });
  expect(reply.status).toBe(200);
  return reply.body.data;
}

async function expectHealthy(): Promise<void> {
  const health = await call('GET', '/health');
  expect({ status: health.status, body: health.body }).toEqual({ status: 200, body: { status: 'ok' } });
}

interface RawExchange {
  closedByServer: boolean;
  received: string;
}

/** Sends `text` on a raw connection, then stalls; answers what the server sent before it closed, or after `patienceMs`. */
function sendAndStall(text: string, patienceMs: number): Promise<RawExchange> {
  const port = Number(new URL(process.env.E2E_BASE_URL!).port);
  return new Promise((resolveExchange) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const gaveUp = setTimeout(() => {
      socket.destroy();
      resolveExchange({ closedByServer: false, received });
    }, patienceMs);
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(gaveUp);
      resolveExchange({ closedByServer: true, received });
    });
    socket.write(text);
  });
}

function errorBodyOf(response: string): { status: number; requestIdHeader: string | undefined; body: any } {
  const [head = '', body] = response.split('\r\n\r\n', 2);
  if (body === undefined) throw new Error(`no blank line ends the head of ${JSON.stringify(response)}`);
  return {
    status: Number(head.split(' ')[1]),
    requestIdHeader: /^x-request-id: (.+)$/im.exec(head)?.[1],
    body: JSON.parse(body),
  };
}

describe('hostile input at the HTTP edge', () => {
  let ws: Workspace;

  beforeAll(async () => {
    ws = await newWorkspace();
    await deployedDecision(ws, 'hostile', triageSchema());
  });

  it('a state holding a lone UTF-16 surrogate is 400 INVALID_REQUEST, and no execution is recorded', async () => {
    const reply = await runDecision(ws, 'hostile', { message: 'broken \ud800 text' });
    expectError(reply, 400, 'INVALID_REQUEST');
    expect(reply.body.error.details).toEqual([{ path: 'state.message', message: 'is a string that is not well-formed Unicode (a lone UTF-16 surrogate)' }]);
    const asKey = await call('POST', '/v1/decisions/hostile', { token: ws.apiKey, rawBody: '{"state":{"message":"ok","\\udc00":1}}', headers: json });
    expectError(asKey, 400, 'INVALID_REQUEST');
    expectError(await runDecision(ws, 'hostile', { message: 'nul \u0000 byte' }), 400, 'INVALID_REQUEST');
    expect(await executionsOf(ws)).toEqual([]);
  });

  it('the same in an application endpoint body: 400, and nothing is created', async () => {
    const workspace = await call('POST', '/app/v1/workspaces', { token: ws.session, body: { name: 'lone \udfff' } });
    expectError(workspace, 400, 'INVALID_REQUEST');
    expect(workspace.body.error.details).toEqual([{ path: 'name', message: 'is a string that is not well-formed Unicode (a lone UTF-16 surrogate)' }]);
    const schema = triageSchema() as Record<string, any>;
    const decision = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions`, {
      token: ws.session,
      body: { slug: 'surrogate', name: 'Decision \ud83d', schema },
    });
    expectError(decision, 400, 'INVALID_REQUEST');
    // The slug is still free: the refused request created nothing.
    const clean = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions`, {
      token: ws.session,
      body: { slug: 'surrogate', name: 'Decision', schema },
    });
    expect(clean.status).toBe(201);
  });

  it('U+0000 in a query parameter is 400 INVALID_REQUEST on public and application routes, after the credential check', async () => {
    const filter = await call('GET', '/v1/executions?decision=%00', { token: ws.apiKey });
    expectError(filter, 400, 'INVALID_REQUEST');
    expect(filter.body.error.details).toEqual([{ path: 'decision', message: 'contains U+0000' }]);
    const name = await call('GET', '/v1/executions?dec%00ision=triage', { token: ws.apiKey });
    expect(name.body.error.details).toEqual([{ path: 'dec\ufffdision', message: 'contains U+0000' }]);
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions?decision=x%00`, { token: ws.session }), 400, 'INVALID_REQUEST');
    expectError(await call('GET', '/v1/executions?decision=%00'), 401, 'INVALID_API_KEY');
    const run = await call('POST', '/v1/decisions/hostile?include=%00', { token: ws.apiKey, body: { state: { message: 'hi' } } });
    expectError(run, 400, 'INVALID_REQUEST');
    expect(await executionsOf(ws)).toEqual([]);
    await expectHealthy();
  });

  it(`nesting deeper than ${NESTING_MAX} levels is 400 INVALID_REQUEST on every route, within it the run goes on`, async () => {
    const deep = await runDecision(ws, 'hostile', { message: 'hi', extra: nested(NESTING_MAX) }, { 'idempotency-key': 'deep-1' });
    expectError(deep, 400, 'INVALID_REQUEST');
    expect(deep.body.error.message).toMatch(/nested deeper than 64/);
    expectError(
      await call('POST', '/app/v1/workspaces', { token: ws.session, rawBody: '['.repeat(60_000) + ']'.repeat(60_000), headers: json }),
      400,
      'INVALID_REQUEST',
    );
    expectError(
      await call('POST', '/app/v1/auth/sign-in', { rawBody: JSON.stringify({ email: nested(200), password: 'x' }), headers: json }),
      400,
      'INVALID_REQUEST',
    );
    // The body, state and 62 levels under it: 64, the deepest a body may go.
    const deepest = await runDecision(ws, 'hostile', { message: 'hi', extra: nested(NESTING_MAX - 1) }, { 'idempotency-key': 'deep-2' });
    expect(deepest.status).toBe(200);
    expect(await executionsOf(ws)).toHaveLength(1);
  });

  it('__proto__ and constructor.prototype anywhere are 400 INVALID_REQUEST', async () => {
    for (const rawBody of [
      '{"state":{"message":"hi","__proto__":{"isAdmin":true}}}',
      '{"__proto__":{"plan":"enterprise"},"state":{"message":"hi"}}',
      '{"state":{"message":"hi","list":[{"constructor":{"prototype":{"polluted":true}}}]}}',
    ]) {
      const reply = await call('POST', '/v1/decisions/hostile', { token: ws.apiKey, rawBody, headers: json });
      expectError(reply, 400, 'INVALID_REQUEST');
      expect(reply.body.error.message).toBe('The request body uses a property name that is not allowed.');
    }
    expectError(
      await call('POST', '/app/v1/auth/sign-up', { rawBody: '{"email":"a@b.co","password":"longenough1","__proto__":{}}', headers: json }),
      400,
      'INVALID_REQUEST',
    );
    // constructor as a plain property name is an ordinary key.
    expect((await runDecision(ws, 'hostile', { message: 'hi', constructor: 'fine' })).status).toBe(200);
  });

  it('a header block over 16 KB is answered in the one error shape, and the connection closed', async () => {
    const reply = await call('GET', '/health', { headers: { 'x-padding': 'x'.repeat(20_000) } });
    expectError(reply, 400, 'INVALID_REQUEST');
    expect(reply.body.error.message).toMatch(/headers are larger than 16 KB/);
    expect(reply.headers.get('connection')).toBe('close');
    await expectHealthy();
  });

  it('a request that is not HTTP is answered in the one error shape', async () => {
    const exchange = await sendAndStall('HELLO / WORLD\r\n\r\n', 20_000);
    expect(exchange.closedByServer).toBe(true);
    const answer = errorBodyOf(exchange.received);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toEqual({ code: 'INVALID_REQUEST', message: 'The request is not valid HTTP/1.1.', request_id: answer.requestIdHeader });
  });

  it('a long slug reaches the run route: 401 without a key, 404 DECISION_NOT_FOUND with one', async () => {
    const slug = 'a'.repeat(500);
    expectError(await call('POST', `/v1/decisions/${slug}`, { body: { state: {} } }), 401, 'INVALID_API_KEY');
    expectError(await call('POST', `/v1/decisions/${slug}`, { token: ws.apiKey, body: { state: {} } }), 404, 'DECISION_NOT_FOUND');
    expectError(await call('GET', `/v1/decisions/${slug}`, { token: ws.apiKey }), 404, 'DECISION_NOT_FOUND');
  });

  it('a path that cannot be percent-decoded is 400 INVALID_REQUEST in the one error shape', async () => {
    expectError(await call('GET', '/v1/decisions/%zz', { token: ws.apiKey }), 400, 'INVALID_REQUEST');
    expectError(await call('GET', '/app/v1/workspaces/%E0%A4%A', { token: ws.session }), 400, 'INVALID_REQUEST');
  });

  it('slow headers and a slow body are cut off by the server, with an error, and the gateway still answers', async () => {
    const slowBody = sendAndStall(
      [
        'POST /v1/decisions/hostile HTTP/1.1',
        'Host: gateway',
        `Authorization: Bearer ${ws.apiKey}`,
        'Content-Type: application/json',
        'Content-Length: 200',
        '',
        '{"state":{"message":"a slow',
      ].join('\r\n'),
      20_000,
    );
    const slowHeaders = sendAndStall('GET /health HTTP/1.1\r\nHost: gateway\r\nX-Slow: still typi', 20_000);
    for (const exchange of await Promise.all([slowBody, slowHeaders])) {
      expect(exchange.closedByServer).toBe(true);
      const answer = errorBodyOf(exchange.received);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toEqual({
        code: 'INVALID_REQUEST',
        message: 'The request was not received within 4 seconds.',
        request_id: answer.requestIdHeader,
      });
    }
    await expectHealthy();
  });
});

/** What no answer may name: the bus between the services, its limit, the database, byte counts of internal messages. */
const INTERNALS = /NATS|max.?payload|1048576|1,048,576|PostgreSQL|TypeORM|QueryFailed|\d+ bytes; at most/i;

/** A refusal of `total` issues as the caller gets it: 50 of them, the rest counted, a few kilobytes, nothing internal. */
function expectSmallRefusal(reply: Reply, status: number, code: string, total: number): void {
  expectError(reply, status, code);
  expect(Buffer.byteLength(reply.text)).toBeLessThan(16 * 1024);
  expect(reply.text).not.toMatch(INTERNALS);
  expect(Object.keys(reply.body.error).sort()).toEqual(['code', 'details', 'message', 'request_id']);
  expect(reply.body.error.details).toHaveLength(50);
  for (const issue of reply.body.error.details) expect(Object.keys(issue).sort()).toEqual(['message', 'path']);
  expect(reply.body.error.message).toMatch(new RegExp(`The first 50 issues are listed in details; ${(total - 50).toLocaleString('en-US')} more are not\\.$`));
}

/** The shared cluster's log lines (JSON, warn and above) of one request. */
function logLinesOf(requestId: string): Array<{ level: string; msg: string; issues?: number }> {
  return readFileSync(join(ROOT, '.data', 'e2e', 'shared.log'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes(requestId))
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.request_id === requestId);
}

describe('errors that stay small whatever the input', () => {
  let ws: Workspace;

  beforeAll(async () => {
    ws = await newWorkspace();
    await deployedDecision(ws, 'small-errors', triageSchema());
  });

  it('an outcome naming 14,000 unknown questions is 400 with 50 issues and the count of the rest, logged as a warning', async () => {
    const run = await runDecision(ws, 'small-errors', { message: 'hi' });
    expect(run.status).toBe(200);
    // About 110 KB; listed whole, the issues would be 1.3 MB, more than the services pass between them.
    const answers = Object.fromEntries(Array.from({ length: 14_000 }, (_, i) => [i.toString(36), 0]));
    const requestId = `small-errors.${uniqueMarker()}`;
    const reply = await call('POST', `/v1/executions/${run.body.execution_id}/outcome`, {
      token: ws.apiKey,
      body: { answers },
      headers: { 'x-request-id': requestId },
    });
    expectSmallRefusal(reply, 400, 'INVALID_REQUEST', 14_000);
    expect(reply.body.error.details[0]).toEqual({ path: 'answers.0', message: 'is not a question of the version that answered this execution' });
    // The log is written as the answer goes out; give it a moment to reach the file.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lines = logLinesOf(requestId);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'refused a request with more issues than an error lists', issues: 14_000 }));
    expect(lines.filter((line) => line.level === 'error' || line.level === 'fatal')).toEqual([]);
  });

  it('a key of 100 KB is not echoed whole: its path is cut to 200 characters', async () => {
    const run = await runDecision(ws, 'small-errors', { message: 'hi' });
    const reply = await call('POST', `/v1/executions/${run.body.execution_id}/outcome`, {
      token: ws.apiKey,
      body: { answers: { ['k'.repeat(100_000)]: 'x' } },
    });
    expectError(reply, 400, 'INVALID_REQUEST');
    expect(reply.body.error.details).toHaveLength(1);
    expect(reply.body.error.details[0].path).toHaveLength(200);
    expect(reply.body.error.details[0].path).toMatch(/^answers\.k+…$/);
    expect(Buffer.byteLength(reply.text)).toBeLessThan(2 * 1024);
  });

  it('a draft of 40,000 empty questions is 422 INVALID_SCHEMA with 50 issues and the count of the rest, and the draft is unchanged', async () => {
    const { id } = await createDecision(ws, 'many-questions', triageSchema());
    const draft = `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/draft`;
    const reply = await call('PUT', draft, { token: ws.session, body: { revision: 1, schema: { questions: Array.from({ length: 40_000 }, () => ({})) } } });
    expectSmallRefusal(reply, 422, 'INVALID_SCHEMA', 120_003);
    const saved = await call('PUT', draft, { token: ws.session, body: { revision: 1, schema: triageSchema() } });
    expect(saved.status).toBe(200);
    expect(saved.body.revision).toBe(2);
  });
});

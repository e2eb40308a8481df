import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { call, deployedDecision, expectError, newWorkspace, runDecision, signUp, triageSchema, uniqueMarker, Workspace } from './support/api';
import { eventually, Receiver, startReceiver } from './support/deliveries';

/**
 * Workspace secrets: Admin-only names and dates, never a value in any reply, and `{{secrets.NAME}}` filled into
 * destination headers as calls leave: deliveries to a real receiver, and sync agent calls.
 */
let receiver: Receiver;
let agentServer: Server;
let agentUrl: string;
const agentHeaders: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  agentServer = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      agentHeaders.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reply: 'Done.' }));
    });
  });
  await new Promise<void>((resolve) => agentServer.listen(0, '127.0.0.1', resolve));
  agentUrl = `http://127.0.0.1:${(agentServer.address() as AddressInfo).port}/agent`;
});

afterAll(async () => {
  await receiver?.close();
  agentServer?.closeAllConnections();
  await new Promise<void>((resolve) => agentServer?.close(() => resolve()));
});

const secretPath = (ws: Workspace, name = '') => `/app/v1/workspaces/${ws.workspaceId}/secrets${name ? `/${name}` : ''}`;
const put = (ws: Workspace, name: string, value: unknown, session = ws.session) => call('PUT', secretPath(ws, name), { token: session, body: { value } });

async function joined(ws: Workspace, role: 'admin' | 'member' | 'viewer'): Promise<string> {
  const user = await signUp();
  expect((await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: user.email, role } })).status).toBe(201);
  return user.session;
}

describe('the secrets API', () => {
  it('is for Admins: members and viewers are refused every route', async () => {
    const ws = await newWorkspace();
    const admin = await joined(ws, 'admin');
    for (const role of ['member', 'viewer'] as const) {
      const session = await joined(ws, role);
      expectError(await call('GET', secretPath(ws), { token: session }), 403, 'FORBIDDEN');
      expectError(await put(ws, 'TOKEN', 'v', session), 403, 'FORBIDDEN');
      expectError(await call('DELETE', secretPath(ws, 'TOKEN'), { token: session }), 403, 'FORBIDDEN');
    }
    expect((await put(ws, 'TOKEN', 'by-admin', admin)).status).toBe(201);
    expect((await call('GET', secretPath(ws), { token: admin })).body.data.map((secret: { name: string }) => secret.name)).toEqual(['TOKEN']);
  });

  it('creates (201), replaces (200), lists names and dates only, and deletes (204, then 404)', async () => {
    const ws = await newWorkspace();
    const created = await put(ws, 'CRM_TOKEN', 'crm-value-one');
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'CRM_TOKEN', created_at: expect.any(String), updated_at: expect.any(String) });
    const replaced = await put(ws, 'CRM_TOKEN', 'crm-value-two');
    expect(replaced.status).toBe(200);
    expect(replaced.body.created_at).toBe(created.body.created_at);
    const listed = await call('GET', secretPath(ws), { token: ws.session });
    expect(listed.body).toEqual({ data: [{ name: 'CRM_TOKEN', created_at: created.body.created_at, updated_at: replaced.body.updated_at }] });
    expect(listed.text).not.toContain('crm-value');
    expect((await call('DELETE', secretPath(ws, 'CRM_TOKEN'), { token: ws.session })).status).toBe(204);
    expectError(await call('DELETE', secretPath(ws, 'CRM_TOKEN'), { token: ws.session }), 404, 'NOT_FOUND');
    expect((await call('GET', secretPath(ws), { token: ws.session })).body).toEqual({ data: [] });
  });

  it('names the field of a bad name or value', async () => {
    const ws = await newWorkspace();
    const badName = await put(ws, 'lower-case', 'v');
    expectError(badName, 400, 'INVALID_REQUEST');
    expect(badName.body.error.details).toEqual([{ path: 'name', message: expect.any(String) }]);
    for (const value of ['', 'x'.repeat(4_097), 'a\r\nX-Injected: 1', 42, undefined]) {
      const refused = await put(ws, 'OK', value);
      expectError(refused, 400, 'INVALID_REQUEST');
      expect(refused.body.error.details).toEqual([{ path: 'value', message: expect.any(String) }]);
    }
    expect((await put(ws, 'OK', 'x'.repeat(4_096))).status).toBe(201);
  });

  it('holds 50 per workspace: the 51st is 409, replacing one of the 50 is not', async () => {
    const ws = await newWorkspace();
    for (let i = 0; i < 50; i++) expect((await put(ws, `S_${i}`, `v${i}`)).status).toBe(201);
    const refused = await put(ws, 'S_50', 'v');
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details).toEqual({ limit: 50 });
    expect((await put(ws, 'S_7', 'again')).status).toBe(200);
  });
});

describe('secrets in destination headers', () => {
  it('a delivery carries the value, is retried while the secret is not set, and the value never reaches a record', async () => {
    const ws = await newWorkspace();
    const token = `hook-token-${uniqueMarker()}`;
    await deployedDecision(
      ws,
      'secret-hook',
      triageSchema(uniqueMarker(), {
        destinations: [{ key: 'crm', type: 'webhook', url: receiver.url, headers: { Authorization: 'Bearer {{secrets.HOOK_TOKEN}}', 'X-Plain': 'as is' } }],
      }),
    );
    const run = await runDecision(ws, 'secret-hook', { message: 'hello' });
    expect(run.status).toBe(200);
    const deliveryId = run.body.destinations[0].delivery_id as string;
    const deliveryPath = `/app/v1/workspaces/${ws.workspaceId}/deliveries/${deliveryId}`;

    // Not set yet: the attempt does not leave, and says which secret is missing.
    const unsent = await eventually(
      async () => {
        const view = (await call('GET', deliveryPath, { token: ws.session })).body;
        // An attempt is recorded as it starts (as interrupted, until it finishes): wait for the first to finish.
        return view.attempts?.[0] && view.attempts[0].outcome !== 'interrupted' ? view : null;
      },
      10_000,
      'a first attempt',
    );
    expect(unsent.attempts[0]).toMatchObject({
      outcome: 'failed',
      response_status: null,
      error: 'Not sent: the secret HOOK_TOKEN is not set in this workspace.',
    });
    expect(receiver.received.filter((request) => request.body.includes(run.body.execution_id))).toEqual([]);

    expect((await put(ws, 'HOOK_TOKEN', token)).status).toBe(201);
    const delivered = await eventually(
      async () => {
        const view = (await call('GET', deliveryPath, { token: ws.session })).body;
        // The quick test schedule may have used every attempt before the secret was set.
        if (view.status === 'failed') await call('POST', `${deliveryPath}/resend`, { token: ws.session });
        return receiver.received.find((request) => request.body.includes(run.body.execution_id));
      },
      20_000,
      'the delivery with its secret',
    );
    expect(delivered.headers.authorization).toBe(`Bearer ${token}`);
    expect(delivered.headers['x-plain']).toBe('as is');

    const records = [
      (await call('GET', deliveryPath, { token: ws.session })).text,
      (await call('GET', `/v1/executions/${run.body.execution_id}`, { token: ws.apiKey })).text,
      (await call('GET', `/app/v1/workspaces/${ws.workspaceId}/deliveries`, { token: ws.session })).text,
    ];
    for (const record of records) expect(record).not.toContain(token);
  });

  it('a sync agent call carries the value; without it the agent is not called and the entry says why', async () => {
    const ws = await newWorkspace();
    const token = `agent-token-${uniqueMarker()}`;
    await deployedDecision(
      ws,
      'secret-agent',
      triageSchema(uniqueMarker(), {
        destinations: [{ key: 'helper', type: 'agent', mode: 'sync', url: agentUrl, headers: { 'X-Agent-Key': '{{secrets.AGENT_KEY}}' } }],
      }),
    );
    const before = agentHeaders.length;
    const missing = await runDecision(ws, 'secret-agent', { message: 'hello' });
    expect(missing.status).toBe(200);
    expect(missing.body.destinations).toEqual([
      { key: 'helper', type: 'agent', status: 'failed', error: 'The agent was not called: the secret AGENT_KEY is not set in this workspace.' },
    ]);
    expect(agentHeaders.length).toBe(before);

    expect((await put(ws, 'AGENT_KEY', token)).status).toBe(201);
    const answered = await runDecision(ws, 'secret-agent', { message: 'hello again' });
    expect(answered.body.destinations[0]).toMatchObject({ key: 'helper', status: 'completed', reply: 'Done.' });
    expect(agentHeaders.at(-1)!['x-agent-key']).toBe(token);
    expect(JSON.stringify(answered.body)).not.toContain(token);
  });

  it('refuses a schema that puts a secret anywhere but a header value', async () => {
    const ws = await newWorkspace();
    const created = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions`, {
      token: ws.session,
      body: {
        slug: 'secret-in-url',
        name: 'Secret in URL',
        schema: triageSchema(uniqueMarker(), { destinations: [{ key: 'leak', type: 'webhook', url: `${receiver.url}?key={{secrets.HOOK_TOKEN}}` }] }),
      },
    });
    expectError(created, 422, 'INVALID_SCHEMA');
    expect(created.body.error.details).toEqual([{ path: 'destinations.0.url', message: '{{secrets.NAME}} is filled in header values only' }]);
  });
});

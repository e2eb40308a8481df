import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type NatsConnection } from 'nats';
import { DELIVERY_STREAM, type DeliveryMessage } from '@ds/contracts';
import {
  call,
  defined,
  deployedDecision,
  engineRequests,
  newWorkspace,
  runDecision,
  scriptEngine,
  triageSchema,
  uniqueMarker,
  type Workspace,
} from './support/api';

/** A loopback agent whose answer each test chooses by path; it records what it was sent. */
interface Agent {
  url: string;
  received: Array<{ path: string; headers: IncomingMessage['headers']; body: any }>;
}

let agentServer: Server;
let agent: Agent;
let nats: NatsConnection;
/** A port nothing listens on: a server bound it, then let it go. */
let closedPort: number;

beforeAll(async () => {
  agent = { url: '', received: [] };
  agentServer = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      agent.received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(raw) });
      const reply = (status: number, body: string, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(body);
      };
      switch (req.url) {
        case '/reply':
          return reply(200, JSON.stringify({ reply: 'Refund issued.', ticket: 42 }));
        case '/no-reply':
          return reply(200, JSON.stringify({ answer: 'done' }));
        case '/huge':
          return reply(200, JSON.stringify({ reply: 'Long story.', log: 'x'.repeat(20_000) }));
        case '/broken':
          return reply(500, JSON.stringify({ error: 'boom' }));
        case '/moved':
          return reply(302, '', { location: '/reply' });
        case '/slow':
          return void setTimeout(() => reply(200, '{"reply":"late"}'), 3_000);
        default:
          return reply(404, '{}');
      }
    });
  });
  await new Promise<void>((resolve) => agentServer.listen(0, '127.0.0.1', resolve));
  agent.url = `http://127.0.0.1:${(agentServer.address() as AddressInfo).port}`;
  const released = createServer();
  await new Promise<void>((resolve) => released.listen(0, '127.0.0.1', resolve));
  closedPort = (released.address() as AddressInfo).port;
  await new Promise<void>((resolve) => released.close(() => resolve()));
  nats = await connect({ servers: process.env.E2E_NATS_URL! });
});

afterAll(async () => {
  agentServer.closeAllConnections();
  await new Promise<void>((resolve) => agentServer.close(() => resolve()));
  await nats.close();
});

/** Every delivery of a workspace stored in the DELIVERIES stream, read with an ordered consumer of its subject. */
async function storedDeliveries(workspaceId: string, expected: number): Promise<Array<{ msgId: string | undefined; message: DeliveryMessage }>> {
  // One subject as a string: the NATS server of the tests (2.9) knows no list of filters.
  const consumer = await nats.jetstream().consumers.get(DELIVERY_STREAM.name, { filterSubjects: DELIVERY_STREAM.subjectFor(workspaceId) });
  const found: Array<{ msgId: string | undefined; message: DeliveryMessage }> = [];
  // One more than expected, so that a duplicate would be seen too.
  for (let i = 0; i <= expected; i++) {
    const msg = await consumer.next({ expires: 1_000 });
    if (msg === null) break;
    found.push({ msgId: msg.headers?.get('Nats-Msg-Id'), message: msg.json<DeliveryMessage>() });
  }
  return found;
}

function withDestinations(marker: string, destinations: unknown[]) {
  return triageSchema(marker, { destinations });
}

describe('llm destinations', () => {
  it('complete through the engine with the rendered prompt and input, outside metrics.latency_ms', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const llmMarker = uniqueMarker();
    const otherMarker = uniqueMarker();
    await deployedDecision(
      ws,
      'llm-done',
      withDestinations(marker, [
        {
          key: 'summary',
          type: 'llm',
          prompt: `Summarise ${llmMarker} for {{params.name}}.`,
          input: 'Message: {{params.message}}',
          maxTokens: 100,
          temperature: 0.7,
          params: { name: { value: 'ops' }, message: { from: 'state.message' } },
        },
        { key: 'default_input', type: 'llm', prompt: `Classify ${otherMarker}.`, model: 'sim-large' },
      ]),
    );
    await scriptEngine(llmMarker, [{ text: 'Customer wants a refund.', delayMs: 2_000 }]);
    const reply = await runDecision(ws, 'llm-done', { message: 'My phone broke' });
    expect(reply.status).toBe(200);
    expect(reply.body.destinations[0]).toEqual({
      key: 'summary',
      type: 'llm',
      status: 'completed',
      text: 'Customer wants a refund.',
      model: 'sim-standard-2026-11-01',
      usage: { input_tokens: expect.any(Number), output_tokens: Math.ceil('Customer wants a refund.'.length / 4) },
    });
    expect(reply.body.destinations[1]).toMatchObject({
      key: 'default_input',
      type: 'llm',
      status: 'completed',
      model: 'sim-large-2026-11-01',
      text: expect.stringMatching(/^Simulated answer /),
    });
    // The destination held the answer for 2 s; the service's own latency does not count it.
    expect(reply.body.metrics.latency_ms).toBeLessThan(2_000);

    const sent = defined((await engineRequests(`Summarise ${llmMarker}`))[0]);
    expect(sent.body).toEqual({
      model: 'sim-standard',
      temperature: 0.7,
      max_tokens: 100,
      messages: [
        { role: 'system', content: `Summarise ${llmMarker} for ops.` },
        { role: 'user', content: 'Message: My phone broke' },
      ],
    });
    const defaulted = defined((await engineRequests(`Classify ${otherMarker}.`))[0]);
    expect(defaulted.body).toMatchObject({ model: 'sim-large', temperature: 0.3, max_tokens: 512 });
    expect(JSON.parse(defaulted.body.messages[1].content)).toMatchObject({
      state: { message: 'My phone broke' },
      result: reply.body.result,
      action: reply.body.action,
    });
  });

  it('fail with the engine error on the entry, and the run still answers 200', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const rejected = uniqueMarker();
    const slow = uniqueMarker();
    await deployedDecision(
      ws,
      'llm-failed',
      withDestinations(marker, [
        { key: 'rejected', type: 'llm', prompt: rejected },
        { key: 'slow', type: 'llm', prompt: slow, timeoutMs: 1_000 },
      ]),
    );
    await scriptEngine(rejected, [{ status: 400, errorMessage: 'prompt refused' }]);
    await scriptEngine(slow, [{ delayMs: 3_000 }]);
    const reply = await runDecision(ws, 'llm-failed', { message: 'hello' });
    expect(reply.status).toBe(200);
    expect(reply.body.destinations).toEqual([
      { key: 'rejected', type: 'llm', status: 'failed', error: expect.stringMatching(/^ENGINE_INVALID_REQUEST: .*prompt refused/) },
      { key: 'slow', type: 'llm', status: 'failed', error: expect.stringMatching(/^ENGINE_TIMEOUT: /) },
    ]);
  });
});

describe('sync agent destinations', () => {
  it('POST the instructions, tools, params and run data, and return the reply and the whole answer', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(
      ws,
      'agent-sync',
      withDestinations(marker, [
        {
          key: 'helper',
          type: 'agent',
          mode: 'sync',
          url: `${agent.url}/reply`,
          instructions: 'Help {{params.name}} with {{params.intent}}.',
          tools: ['refund', 'lookup'],
          headers: { 'X-Team': 'support' },
          params: { name: { from: 'state.customer' }, intent: { from: 'result.intent' } },
        },
        { key: 'quiet', type: 'agent', mode: 'sync', url: `${agent.url}/no-reply` },
        { key: 'chatty', type: 'agent', mode: 'sync', url: `${agent.url}/huge` },
      ]),
    );
    const reply = await runDecision(ws, 'agent-sync', { message: 'refund please', customer: 'Ana' });
    expect(reply.status).toBe(200);
    expect(reply.body.destinations).toEqual([
      { key: 'helper', type: 'agent', status: 'completed', reply: 'Refund issued.', response: { reply: 'Refund issued.', ticket: 42 } },
      { key: 'quiet', type: 'agent', status: 'completed', reply: null, response: { answer: 'done' } },
      { key: 'chatty', type: 'agent', status: 'completed', reply: 'Long story.', response: null },
    ]);
    const sent = agent.received.find((r) => r.path === '/reply' && r.body.data?.execution_id === reply.body.execution_id)!;
    expect(sent.headers['x-team']).toBe('support');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body).toEqual({
      destination: 'helper',
      livemode: true,
      instructions: `Help Ana with ${reply.body.result.intent}.`,
      tools: ['refund', 'lookup'],
      params: { name: 'Ana', intent: reply.body.result.intent },
      data: {
        decision_id: reply.body.decision_id,
        execution_id: reply.body.execution_id,
        schema: 'agent-sync',
        version: 1,
        result: reply.body.result,
        confidence: reply.body.confidence,
        scores: reply.body.scores,
        composites: reply.body.composites,
        action: reply.body.action,
        action_reason: reply.body.action_reason,
        metrics: reply.body.metrics,
      },
    });
  });

  it('fail on an error status, a redirect and a timeout', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(
      ws,
      'agent-failures',
      withDestinations(marker, [
        { key: 'broken', type: 'agent', mode: 'sync', url: `${agent.url}/broken` },
        { key: 'moved', type: 'agent', mode: 'sync', url: `${agent.url}/moved` },
        { key: 'slow', type: 'agent', mode: 'sync', url: `${agent.url}/slow`, timeoutMs: 1_000 },
      ]),
    );
    const reply = await runDecision(ws, 'agent-failures', { message: 'hello' });
    expect(reply.status).toBe(200);
    expect(reply.body.destinations).toEqual([
      { key: 'broken', type: 'agent', status: 'failed', error: 'The agent answered 500.' },
      { key: 'moved', type: 'agent', status: 'failed', error: 'The agent answered 302; redirects are not followed.' },
      { key: 'slow', type: 'agent', status: 'failed', error: 'The agent did not answer within 1000 ms.' },
    ]);
    // The redirect was not followed.
    expect(agent.received.filter((r) => r.path === '/reply' && r.body.data?.execution_id === reply.body.execution_id)).toEqual([]);
  });
});

describe('an agent that cannot be reached', () => {
  it('fails its entry without naming the URL or the address, which API keys and MCP clients never see', async () => {
    const ws = await newWorkspace();
    await deployedDecision(
      ws,
      'agent-gone',
      withDestinations(uniqueMarker(), [{ key: 'gone', type: 'agent', mode: 'sync', url: `http://127.0.0.1:${closedPort}/reply` }]),
    );
    const reply = await runDecision(ws, 'agent-gone', { message: 'hello' });
    expect(reply.status).toBe(200);
    expect(reply.body.destinations).toEqual([{ key: 'gone', type: 'agent', status: 'failed', error: 'The agent could not be reached.' }]);
    const logged = await call('GET', '/v1/executions?limit=1', { token: ws.apiKey });
    expect(logged.body.data[0].destinations).toEqual(reply.body.destinations);
    expect(logged.text).not.toContain(String(closedPort));
  });
});

describe('limits and skips', () => {
  it('fire at most 10 destinations and 3 waiting ones, in schema order; a missing required param skips without using a slot', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const llmMarker = uniqueMarker();
    await deployedDecision(
      ws,
      'limits',
      withDestinations(marker, [
        { key: 'needs_phone', type: 'reply', text: 'Call {{params.phone}}', params: { phone: { from: 'state.phone', required: true } } },
        ...[1, 2, 3, 4].map((i) => ({ key: `llm_${i}`, type: 'llm', prompt: `${llmMarker} ${i}` })),
        ...Array.from({ length: 8 }, (_, i) => ({ key: `reply_${i}`, type: 'reply', text: `r${i}` })),
      ]),
    );
    const reply = await runDecision(ws, 'limits', { message: 'hello' });
    expect(reply.status).toBe(200);
    expect(reply.body.destinations.map((d: any) => [d.key, d.status ?? 'fired', d.reason ?? null])).toEqual([
      ['needs_phone', 'skipped', 'missing_param'],
      ['llm_1', 'completed', null],
      ['llm_2', 'completed', null],
      ['llm_3', 'completed', null],
      ['llm_4', 'skipped', 'limit'],
      ...Array.from({ length: 7 }, (_, i) => [`reply_${i}`, 'fired', null]),
      ['reply_7', 'skipped', 'limit'],
    ]);
    expect(reply.body.destinations[0].param).toBe('phone');
    expect(await engineRequests(`${llmMarker} 4`)).toEqual([]);
  });
});

describe('deliveries', () => {
  async function deliveringDecision(ws: Workspace, slug: string, marker: string) {
    await deployedDecision(
      ws,
      slug,
      withDestinations(marker, [
        { key: 'ops', type: 'webhook', url: 'https://hooks.example.com/decisions', headers: { 'X-Team': 'ops' } },
        {
          key: 'crm',
          type: 'http',
          url: 'https://crm.example.com/tickets',
          method: 'PUT',
          body: '{"customer": "{{params.name}}", "action": "{{params.action}}"}',
          headers: { Authorization: 'Token abc' },
          params: { name: { from: 'state.customer' }, action: { from: 'action' } },
        },
        { key: 'flow', type: 'workflow', url: 'https://flows.example.com/run', params: { amount: { from: 'state.amount' } } },
        {
          key: 'handoff',
          type: 'agent',
          mode: 'async',
          url: 'https://agents.example.com/inbox',
          instructions: 'Follow up with {{params.name}}.',
          tools: ['email'],
          params: { name: { from: 'state.customer' } },
        },
      ]),
    );
  }

  it('are stored in JetStream under their dlv_ id before the run answers queued, with the bodies rendered once', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deliveringDecision(ws, 'deliveries', marker);
    const reply = await runDecision(ws, 'deliveries', { message: 'refund', amount: 30, customer: 'Ana "the boss"' });
    expect(reply.status).toBe(200);
    const entries = reply.body.destinations;
    expect(entries.map((e: any) => [e.key, e.type, e.status])).toEqual([
      ['ops', 'webhook', 'queued'],
      ['crm', 'http', 'queued'],
      ['flow', 'workflow', 'queued'],
      ['handoff', 'agent', 'queued'],
    ]);
    for (const entry of entries) expect(entry.delivery_id).toMatch(/^dlv_[A-Za-z0-9]{20}$/);
    expect(new Set(entries.map((e: any) => e.delivery_id)).size).toBe(4);

    const stored = await storedDeliveries(ws.workspaceId, 4);
    expect(stored.map((s) => s.msgId)).toEqual(entries.map((e: any) => e.delivery_id));
    // Four, as the ids just compared show.
    const [webhook, http, workflow, handoff] = stored.map((s) => s.message) as [DeliveryMessage, DeliveryMessage, DeliveryMessage, DeliveryMessage];
    const common = {
      workspaceId: ws.workspaceId,
      decisionId: reply.body.decision_id,
      decisionSlug: 'deliveries',
      executionId: reply.body.execution_id,
      livemode: true,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    };
    expect(webhook).toEqual({
      ...common,
      deliveryId: entries[0].delivery_id,
      destinationKey: 'ops',
      kind: 'webhook',
      url: 'https://hooks.example.com/decisions',
      method: 'POST',
      headers: { 'X-Team': 'ops', 'content-type': 'application/json' },
      body: expect.any(String),
    });
    const event = JSON.parse(webhook.body);
    expect(Object.keys(event)).toEqual(['id', 'type', 'created', 'livemode', 'data']);
    expect(event).toMatchObject({ id: entries[0].delivery_id, type: 'decision.completed', livemode: true });
    expect(Math.abs(event.created - Date.now() / 1000)).toBeLessThan(60);
    // The event's data is the run response, byte for byte.
    expect(webhook.body.endsWith(`"data":${reply.text}}`)).toBe(true);

    expect(http).toMatchObject({
      kind: 'http',
      method: 'PUT',
      url: 'https://crm.example.com/tickets',
      headers: { Authorization: 'Token abc', 'content-type': 'application/json' },
    });
    expect(JSON.parse(http.body)).toEqual({ customer: 'Ana "the boss"', action: reply.body.action });

    expect(workflow).toMatchObject({ kind: 'workflow', method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(workflow.body)).toEqual({
      id: entries[2].delivery_id,
      created: event.created,
      livemode: true,
      type: 'workflow.run',
      destination: 'flow',
      params: { amount: 30 },
      data: reply.body,
    });

    expect(handoff).toMatchObject({ kind: 'agent', method: 'POST', url: 'https://agents.example.com/inbox' });
    expect(JSON.parse(handoff.body)).toMatchObject({
      id: entries[3].delivery_id,
      type: 'agent.handoff',
      instructions: 'Follow up with Ana "the boss".',
      tools: ['email'],
      data: reply.body,
    });

    const executions = await call('GET', '/v1/executions', { token: ws.apiKey });
    expect(executions.body.data[0].destinations).toEqual(entries);
  });

  it('carry livemode false for test keys', async () => {
    const ws = await newWorkspace('test');
    const marker = uniqueMarker();
    await deployedDecision(ws, 'test-mode', withDestinations(marker, [{ key: 'ops', type: 'webhook', url: 'https://hooks.example.com/decisions' }]));
    const reply = await runDecision(ws, 'test-mode', { message: 'hello' });
    const stored = defined((await storedDeliveries(ws.workspaceId, 1))[0]);
    expect(stored.message.livemode).toBe(false);
    expect(JSON.parse(stored.message.body)).toMatchObject({ id: reply.body.destinations[0].delivery_id, livemode: false });
  });

  it('are queued once for an idempotent replay, which returns the same bytes', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'replayed', withDestinations(marker, [{ key: 'ops', type: 'webhook', url: 'https://hooks.example.com/decisions' }]));
    const first = await runDecision(ws, 'replayed', { message: 'hello' }, { 'Idempotency-Key': 'once-only' });
    const second = await runDecision(ws, 'replayed', { message: 'hello' }, { 'Idempotency-Key': 'once-only' });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    const stored = await storedDeliveries(ws.workspaceId, 1);
    expect(stored.map((s) => s.msgId)).toEqual([first.body.destinations[0].delivery_id]);
  });
});

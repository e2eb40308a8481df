import {
  agentAnsweredEntry,
  deliveryBody,
  deliveryRequest,
  failedEntry,
  httpBodyFormat,
  llmCompletedEntry,
  planDestinations,
  queuedEntry,
  unavailableEntry,
  type RunData,
} from './destination-entries';
import type { DestinationMatch } from './destinations';
import type { NormalizedDestination } from './schema-types';

const common = { description: null, when: [], params: {}, headers: {} };
const match = (
  destination: Partial<NormalizedDestination> & { key: string; type: NormalizedDestination['type'] },
  params: Record<string, unknown> = {},
  skipped?: DestinationMatch['skipped'],
): DestinationMatch => ({ destination: { ...common, ...destination } as NormalizedDestination, params, ...(skipped ? { skipped } : {}) });

const response = {
  decision_id: 'dec_1',
  execution_id: 'exec_1',
  result: { intent: 'refund' },
  confidence: { intent: 0.9 },
  action: 'continue',
  metrics: { latency_ms: 3 },
};
const run: RunData = { state: { message: 'hi' }, livemode: true, response: () => response };
const entriesOf = (matches: DestinationMatch[]) => planDestinations(matches, run).entries;

const llm = (overrides: Record<string, unknown> = {}) =>
  ({
    key: 'summary',
    type: 'llm',
    prompt: 'Summarise for {{params.name}}.',
    input: null,
    model: null,
    maxTokens: 512,
    temperature: 0.3,
    timeoutMs: 20_000,
    ...overrides,
  }) as never;
const agent = (overrides: Record<string, unknown> = {}) =>
  ({
    key: 'helper',
    type: 'agent',
    url: 'https://agent.example/',
    mode: 'sync',
    instructions: 'Help {{params.name}}.',
    tools: ['lookup'],
    timeoutMs: 20_000,
    ...overrides,
  }) as never;

describe('planDestinations', () => {
  it('renders replies with their params and buttons, without a status', () => {
    expect(entriesOf([match({ key: 'sorry', type: 'reply', text: 'Sorry, {{params.name}}.', buttons: ['Track'] } as never, { name: 'Ana' })])).toEqual([
      { key: 'sorry', type: 'reply', text: 'Sorry, Ana.', buttons: ['Track'] },
    ]);
    expect(entriesOf([match({ key: 'plain', type: 'reply', text: 'Hi', buttons: [] } as never)])).toEqual([{ key: 'plain', type: 'reply', text: 'Hi' }]);
  });

  it('returns functions with their handler name and params', () => {
    expect(entriesOf([match({ key: 'refund', type: 'function', function: 'issueRefund' } as never, { amount: 12 })])).toEqual([
      { key: 'refund', type: 'function', function: 'issueRefund', params: { amount: 12 } },
    ]);
  });

  it('keeps the skip reason and the missing param, and makes no call for a skipped destination', () => {
    const plan = planDestinations(
      [
        match({ key: 'r', type: 'reply', text: 'x', buttons: [] } as never, {}, { reason: 'missing_param', param: 'name' }),
        match(llm(), {}, { reason: 'limit' }),
        match({ key: 'w', type: 'webhook', url: 'https://x.example/' } as never, {}, { reason: 'limit' }),
      ],
      run,
    );
    expect(plan.entries).toEqual([
      { key: 'r', type: 'reply', status: 'skipped', reason: 'missing_param', param: 'name' },
      { key: 'summary', type: 'llm', status: 'skipped', reason: 'limit' },
      { key: 'w', type: 'webhook', status: 'skipped', reason: 'limit' },
    ]);
    expect(plan.waiting).toEqual([]);
    expect(plan.deliveries).toEqual([]);
  });

  it('skips with reason limit a reply whose rendered text passes 4,000 characters, and keeps one at the limit', () => {
    const reply = { key: 'echo', type: 'reply', text: '{{params.big}}'.repeat(200), buttons: [] } as never;
    expect(entriesOf([match(reply, { big: 'x'.repeat(1_000) })])).toEqual([{ key: 'echo', type: 'reply', status: 'skipped', reason: 'limit' }]);
    expect(entriesOf([match(reply, { big: 'x'.repeat(20) })])).toEqual([{ key: 'echo', type: 'reply', text: 'x'.repeat(4_000) }]);
  });

  it('skips with reason limit a function whose params serialize past 16,000 characters, and keeps one at the limit', () => {
    const fn = { key: 'sync', type: 'function', function: 'sync' } as never;
    const atLimit = { a: 'x'.repeat(16_000 - '{"a":""}'.length) };
    expect(JSON.stringify(atLimit)).toHaveLength(16_000);
    expect(entriesOf([match(fn, atLimit)])).toEqual([{ key: 'sync', type: 'function', function: 'sync', params: atLimit }]);
    expect(entriesOf([match(fn, { a: `${atLimit.a}x` })])).toEqual([{ key: 'sync', type: 'function', status: 'skipped', reason: 'limit' }]);
    expect(entriesOf([match(fn, { a: 'x'.repeat(9_000), b: 'y'.repeat(9_000) })])).toEqual([
      { key: 'sync', type: 'function', status: 'skipped', reason: 'limit' },
    ]);
  });

  it('keeps schema order, with calls pointing at their entries', () => {
    const plan = planDestinations(
      [
        match({ key: 'b', type: 'function', function: 'b' } as never),
        match({ key: 'hook', type: 'webhook', url: 'https://x.example/' } as never),
        match(llm(), { name: 'Ana' }),
        match({ key: 'a', type: 'function', function: 'a' } as never),
      ],
      run,
    );
    expect(plan.entries.map((e) => e.key)).toEqual(['b', 'hook', 'summary', 'a']);
    expect(plan.entries[1]).toEqual({ key: 'hook', type: 'webhook' });
    expect(plan.entries[2]).toEqual({ key: 'summary', type: 'llm' });
    expect(plan.deliveries.map((d) => d.index)).toEqual([1]);
    expect(plan.waiting.map((w) => w.index)).toEqual([2]);
  });

  describe('llm', () => {
    it('renders the prompt and the input from the params', () => {
      const plan = planDestinations([match(llm({ input: 'Customer {{params.name}} said {{params.message}}' }), { name: 'Ana', message: 'hello' })], run);
      expect(plan.waiting).toEqual([
        { kind: 'llm', index: 0, destination: expect.objectContaining({ key: 'summary' }), prompt: 'Summarise for Ana.', input: 'Customer Ana said hello' },
      ]);
    });

    it('reads the run as JSON when it has no input', () => {
      const [call] = planDestinations([match(llm(), { name: 'Ana' })], run).waiting;
      expect(call?.kind === 'llm' && JSON.parse(call.input)).toEqual({
        state: { message: 'hi' },
        result: { intent: 'refund' },
        confidence: { intent: 0.9 },
        action: 'continue',
      });
    });

    it('skips with reason limit a prompt or an input that renders past 8,000 characters', () => {
      const big = { name: 'x'.repeat(8_000) };
      expect(planDestinations([match(llm(), big)], run)).toEqual({
        entries: [{ key: 'summary', type: 'llm', status: 'skipped', reason: 'limit' }],
        waiting: [],
        deliveries: [],
      });
      expect(planDestinations([match(llm({ prompt: 'p', input: '{{params.name}}!' }), big)], run).entries[0]).toMatchObject({ reason: 'limit' });
      expect(planDestinations([match(llm({ prompt: 'p', input: '{{params.name}}' }), big)], run).waiting).toHaveLength(1);
    });
  });

  describe('agent', () => {
    it('POSTs a sync agent its instructions, tools, params and the run data', () => {
      const [call] = planDestinations([match(agent(), { name: 'Ana' })], run).waiting;
      expect(call?.kind).toBe('agent');
      expect(JSON.parse((call as { body: string }).body)).toEqual({
        destination: 'helper',
        livemode: true,
        instructions: 'Help Ana.',
        tools: ['lookup'],
        params: { name: 'Ana' },
        data: response,
      });
    });

    it('delivers an async agent instead of waiting for it', () => {
      const plan = planDestinations([match(agent({ mode: 'async', instructions: null }), { name: 'Ana' })], run);
      expect(plan.waiting).toEqual([]);
      expect(plan.deliveries).toEqual([
        { index: 0, destination: expect.objectContaining({ mode: 'async' }), params: { name: 'Ana' }, instructions: null, httpBody: null },
      ]);
    });

    it('skips with reason limit instructions that render past 8,000 characters', () => {
      expect(entriesOf([match(agent(), { name: 'x'.repeat(8_000) })])).toEqual([{ key: 'helper', type: 'agent', status: 'skipped', reason: 'limit' }]);
      expect(entriesOf([match(agent({ mode: 'async' }), { name: 'x'.repeat(8_000) })])).toEqual([
        { key: 'helper', type: 'agent', status: 'skipped', reason: 'limit' },
      ]);
    });
  });

  describe('http', () => {
    const http = (body: string | null) => ({ key: 'crm', type: 'http', url: 'https://crm.example/', method: 'PUT', body }) as never;

    it('renders a JSON body template with escaped text values', () => {
      const [planned] = planDestinations([match(http('{"name": "{{params.name}}", "n": {{params.n}}}'), { name: 'A "b"', n: 2 })], run).deliveries;
      expect(planned?.httpBody && JSON.parse(planned.httpBody)).toEqual({ name: 'A "b"', n: 2 });
    });

    it('renders a text template as is, and no body as null', () => {
      expect(planDestinations([match(http('name={{params.name}}'), { name: 'A "b"' })], run).deliveries[0]?.httpBody).toBe('name=A "b"');
      expect(planDestinations([match(http(null))], run).deliveries[0]?.httpBody).toBeNull();
    });

    it('skips with reason limit a body that renders past 10,000 characters, and keeps one at the limit', () => {
      expect(entriesOf([match(http('{{params.big}}'), { big: 'x'.repeat(10_001) })])).toEqual([
        { key: 'crm', type: 'http', status: 'skipped', reason: 'limit' },
      ]);
      expect(planDestinations([match(http('{{params.big}}'), { big: 'x'.repeat(10_000) })], run).deliveries[0]?.httpBody).toHaveLength(10_000);
    });

    it.each([
      ['{"a":1}', 'json'],
      ['  [1]', 'json'],
      ['a=1', 'text'],
      ['', 'text'],
    ])('reads %j as a %s template', (template, format) => {
      expect(httpBodyFormat(template)).toBe(format);
    });
  });
});

describe('settled entries', () => {
  const entry = { key: 'k', type: 'llm' };

  it('llm completed and failed', () => {
    expect(llmCompletedEntry(entry, { text: 'Hi', model: 'm-1', inputTokens: 10, outputTokens: 2 })).toEqual({
      key: 'k',
      type: 'llm',
      status: 'completed',
      text: 'Hi',
      model: 'm-1',
      usage: { input_tokens: 10, output_tokens: 2 },
    });
    expect(failedEntry(entry, 'timeout')).toEqual({ key: 'k', type: 'llm', status: 'failed', error: 'timeout' });
  });

  it('an agent answer: reply from its reply field, response the whole answer', () => {
    const agentEntry = { key: 'a', type: 'agent' };
    expect(agentAnsweredEntry(agentEntry, '{"reply":"Done","steps":2}')).toEqual({
      key: 'a',
      type: 'agent',
      status: 'completed',
      reply: 'Done',
      response: { reply: 'Done', steps: 2 },
    });
    expect(agentAnsweredEntry(agentEntry, '{"answer":"Done"}')).toMatchObject({ reply: null, response: { answer: 'Done' } });
    expect(agentAnsweredEntry(agentEntry, '{"reply":42}')).toMatchObject({ reply: null, response: { reply: 42 } });
    expect(agentAnsweredEntry(agentEntry, '["reply"]')).toMatchObject({ reply: null, response: ['reply'] });
    expect(agentAnsweredEntry(agentEntry, 'plain words')).toMatchObject({ reply: null, response: 'plain words' });
    expect(agentAnsweredEntry(agentEntry, '')).toMatchObject({ reply: null, response: '' });
  });

  it('an agent answer over 16,000 characters keeps its reply and drops its response', () => {
    const atLimit = JSON.stringify({ reply: 'ok', pad: 'x'.repeat(16_000 - '{"reply":"ok","pad":""}'.length) });
    expect(atLimit).toHaveLength(16_000);
    expect(agentAnsweredEntry({ key: 'a', type: 'agent' }, atLimit).response).toEqual(JSON.parse(atLimit));
    const over = JSON.stringify({ reply: 'ok', pad: 'x'.repeat(16_000) });
    expect(agentAnsweredEntry({ key: 'a', type: 'agent' }, over)).toEqual({ key: 'a', type: 'agent', status: 'completed', reply: 'ok', response: null });
  });

  it('queued and unavailable deliveries', () => {
    expect(queuedEntry({ key: 'w', type: 'webhook' }, 'dlv_1')).toEqual({ key: 'w', type: 'webhook', status: 'queued', delivery_id: 'dlv_1' });
    expect(unavailableEntry({ key: 'w', type: 'webhook', status: 'queued', delivery_id: 'dlv_1' })).toEqual({
      key: 'w',
      type: 'webhook',
      status: 'skipped',
      reason: 'unavailable',
    });
  });
});

describe('delivery bodies and requests', () => {
  const envelope = { deliveryId: 'dlv_abc', created: 1_800_000_000, livemode: false, responseJson: JSON.stringify(response) };
  const planned = (destination: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    ({ index: 0, destination: { ...common, ...destination }, params: { name: 'Ana' }, instructions: null, httpBody: null, ...extra }) as never;

  it('a webhook gets the decision.completed event with the response as data, spliced byte for byte', () => {
    const body = deliveryBody(planned({ key: 'hook', type: 'webhook', url: 'https://x.example/' }), envelope);
    expect(JSON.parse(body)).toEqual({ id: 'dlv_abc', type: 'decision.completed', created: 1_800_000_000, livemode: false, data: response });
    expect(body.endsWith(`"data":${envelope.responseJson}}`)).toBe(true);
  });

  it('a workflow gets the envelope with its key and params', () => {
    expect(JSON.parse(deliveryBody(planned({ key: 'flow', type: 'workflow', url: 'https://x.example/' }), envelope))).toEqual({
      id: 'dlv_abc',
      created: 1_800_000_000,
      livemode: false,
      type: 'workflow.run',
      destination: 'flow',
      params: { name: 'Ana' },
      data: response,
    });
  });

  it('an async agent gets its hand-off', () => {
    const body = deliveryBody(
      planned({ key: 'agent', type: 'agent', url: 'https://x.example/', mode: 'async', tools: ['t'] }, { instructions: 'Do it.' }),
      envelope,
    );
    expect(JSON.parse(body)).toEqual({
      id: 'dlv_abc',
      created: 1_800_000_000,
      livemode: false,
      type: 'agent.handoff',
      destination: 'agent',
      instructions: 'Do it.',
      tools: ['t'],
      params: { name: 'Ana' },
      data: response,
    });
  });

  it('http sends its rendered body, or nothing', () => {
    expect(deliveryBody(planned({ key: 'h', type: 'http', method: 'PUT', body: 'x' }, { httpBody: 'rendered' }), envelope)).toBe('rendered');
    expect(deliveryBody(planned({ key: 'h', type: 'http', method: 'GET', body: null }), envelope)).toBe('');
  });

  it('webhooks, workflows and agents POST JSON with the destination’s headers', () => {
    expect(deliveryRequest(planned({ key: 'w', type: 'webhook', headers: { 'X-Team': 'ops' } }))).toEqual({
      method: 'POST',
      headers: { 'X-Team': 'ops', 'content-type': 'application/json' },
    });
    expect(deliveryRequest(planned({ key: 'w', type: 'workflow', headers: { 'Content-Type': 'application/vnd.flow+json' } }))).toEqual({
      method: 'POST',
      headers: { 'Content-Type': 'application/vnd.flow+json' },
    });
  });

  it('http uses its method and a content type that fits its template unless it declares one', () => {
    expect(deliveryRequest(planned({ key: 'h', type: 'http', method: 'PUT', body: '{"a":1}' }, { httpBody: '{"a":1}' }))).toEqual({
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
    });
    expect(deliveryRequest(planned({ key: 'h', type: 'http', method: 'POST', body: 'a=1' }, { httpBody: 'a=1' }))).toEqual({
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    expect(
      deliveryRequest(
        planned({ key: 'h', type: 'http', method: 'POST', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, { httpBody: 'a=1' }),
      ),
    ).toEqual({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(deliveryRequest(planned({ key: 'h', type: 'http', method: 'GET', body: null }))).toEqual({ method: 'GET', headers: {} });
  });
});

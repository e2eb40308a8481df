import { startEngineSimulator, type EngineSimulator, type ScriptInput } from './index';

const ANSWER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['intent', 'fraud'],
  properties: {
    intent: {
      type: 'object',
      additionalProperties: false,
      required: ['refund', 'exchange', 'other'],
      properties: { refund: { type: 'number' }, exchange: { type: 'number' }, other: { type: 'number' } },
    },
    fraud: {
      type: 'object',
      additionalProperties: false,
      required: ['yes', 'no'],
      properties: { yes: { type: 'number' }, no: { type: 'number' } },
    },
  },
};
const OUTCOMES: Record<'intent' | 'fraud', string[]> = { intent: ['refund', 'exchange', 'other'], fraud: ['yes', 'no'] };
const SYSTEM = 'Answer every question with a probability for each outcome.';

type Json = any;

let sim: EngineSimulator;
let markers = 0;

beforeAll(async () => {
  sim = await startEngineSimulator();
});
afterAll(() => sim.close());

/** Every test works under its own marker, so its scripts and recorded requests never meet another's. */
function newMarker(): string {
  return `marker-${++markers}-${Date.now()}`;
}

function userContent(marker: string): string {
  return JSON.stringify({ decision_context: `Support ticket triage ${marker}`, state: { message: 'I want my money back' }, questions: ['intent', 'fraud'] });
}

function openAiBody(marker: string, overrides: Json = {}): Json {
  return {
    model: 'sim-standard',
    temperature: 0,
    max_tokens: 1024,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: userContent(marker) },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'decision_answers', strict: true, schema: ANSWER_SCHEMA } },
    ...overrides,
  };
}

function anthropicBody(marker: string, overrides: Json = {}): Json {
  return {
    model: 'sim-standard',
    max_tokens: 1024,
    system: SYSTEM,
    messages: [{ role: 'user', content: userContent(marker) }],
    tools: [{ name: 'record_answers', description: 'Record the answers.', input_schema: ANSWER_SCHEMA }],
    tool_choice: { type: 'tool', name: 'record_answers' },
    ...overrides,
  };
}

function post(path: string, body: unknown, headers: Record<string, string> = {}, base = sim.url): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function chat(body: unknown, headers: Record<string, string> = { authorization: 'Bearer sk-test' }, base = sim.url) {
  return post('/v1/chat/completions', body, headers, base);
}

function messages(body: unknown, headers: Record<string, string> = { 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' }, base = sim.url) {
  return post('/v1/messages', body, headers, base);
}

async function chatAnswers(res: Response): Promise<Json> {
  expect(res.status).toBe(200);
  const body = (await res.json()) as Json;
  return JSON.parse(body.choices[0].message.content as string) as Json;
}

async function script(input: ScriptInput): Promise<string> {
  const res = await post('/_sim/scripts', input);
  expect(res.status).toBe(201);
  return ((await res.json()) as Json).id as string;
}

function expectDistributions(answers: Json, keys: Array<keyof typeof OUTCOMES> = ['intent', 'fraud']): void {
  expect(Object.keys(answers)).toEqual(keys);
  for (const key of keys) {
    expect(Object.keys(answers[key])).toEqual(OUTCOMES[key]);
    const values = Object.values(answers[key] as Record<string, number>);
    for (const p of values) expect(p).toBeGreaterThanOrEqual(0);
    expect(values.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  }
}

describe('OpenAI-compatible chat completions', () => {
  it('answers a chat.completion with a distribution over every outcome of every question', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await chat(openAiBody(newMarker()));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'sim-standard-2026-11-01',
      choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }],
    });
    expect(body.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(body.created).toBeGreaterThanOrEqual(before);
    expectDistributions(JSON.parse(body.choices[0].message.content as string) as Json);
  });

  it('answers the same request with the same content, byte for byte', async () => {
    const request = openAiBody(newMarker());
    const [a, b] = (await Promise.all([chat(request), chat(request)]).then((rs) => Promise.all(rs.map((r) => r.json())))) as Json[];
    expect(a.choices[0].message.content).toBe(b.choices[0].message.content);
    expect(a.usage).toEqual(b.usage);
    expect(a.id).not.toBe(b.id);
  });

  it('answers differently when the user content differs', async () => {
    const contents = await Promise.all(Array.from({ length: 8 }, async () => JSON.stringify(await chatAnswers(await chat(openAiBody(newMarker()))))));
    expect(new Set(contents).size).toBeGreaterThan(1);
  });

  it('reports the exact version: a dated alias for an undated name, a dated name as asked', async () => {
    const alias = (await (await chat(openAiBody(newMarker(), { model: 'gpt-sim' }))).json()) as Json;
    const dated = (await (await chat(openAiBody(newMarker(), { model: 'gpt-sim-2025-03-04' }))).json()) as Json;
    expect(alias.model).toBe('gpt-sim-2026-11-01');
    expect(dated.model).toBe('gpt-sim-2025-03-04');
  });

  it('counts tokens as a quarter of the characters, rounded up', async () => {
    const marker = newMarker();
    const body = (await (await chat(openAiBody(marker))).json()) as Json;
    const prompt = Math.ceil((SYSTEM.length + userContent(marker).length) / 4);
    const completion = Math.ceil((body.choices[0].message.content as string).length / 4);
    expect(body.usage).toEqual({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
  });

  it('reads content given as an array of text parts', async () => {
    const marker = newMarker();
    const parts = openAiBody(marker, {
      messages: [
        { role: 'system', content: [{ type: 'text', text: SYSTEM }] },
        { role: 'user', content: [{ type: 'text', text: userContent(marker) }] },
      ],
    });
    expect(await chatAnswers(await chat(parts))).toEqual(await chatAnswers(await chat(openAiBody(marker))));
  });

  it.each([
    ['a json_object response_format', { response_format: { type: 'json_object' } }, /response_format/],
    [
      'a question without outcomes',
      { response_format: { type: 'json_schema', json_schema: { schema: { properties: { q: { type: 'number' } } } } } },
      /properties\.q/,
    ],
    ['no messages', { messages: [] }, /messages/],
    ['no model', { model: undefined }, /model/],
    ['stream: true', { stream: true }, /stream/],
  ])('refuses a request with %s with a 400 in OpenAI format', async (_name, overrides, message) => {
    const res = await chat(openAiBody(newMarker(), overrides));
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: null });
    expect(body.error.message).toMatch(message);
  });

  it('answers a request without response_format with free text, the same for the same turns, or the scripted text', async () => {
    const marker = newMarker();
    const free = openAiBody(marker, { response_format: undefined });
    const first = (await (await chat(free)).json()) as Json;
    expect(first.model).toBe('sim-standard-2026-11-01');
    expect(first.choices[0].message.content).toMatch(/^Simulated answer [0-9a-f]{12}\.$/);
    expect(first.usage.completion_tokens).toBe(Math.ceil(first.choices[0].message.content.length / 4));
    const second = (await (await chat(free)).json()) as Json;
    expect(second.choices[0].message.content).toBe(first.choices[0].message.content);

    await post('/_sim/scripts', { match: marker, steps: [{ text: 'Refund approved.' }] });
    const scripted = (await (await chat(free)).json()) as Json;
    expect(scripted.choices[0].message.content).toBe('Refund approved.');
  });

  it('refuses a body that is not JSON with a 400 in OpenAI format', async () => {
    const res = await chat('{"model": ');
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toBe('the body is not valid JSON');
  });
});

describe('Anthropic messages', () => {
  it('answers through the forced tool call with the exact model version', async () => {
    const marker = newMarker();
    const res = await messages(anthropicBody(marker));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'sim-standard-2026-11-01',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', name: 'record_answers' }],
    });
    expect(body.id).toMatch(/^msg_01[A-Za-z0-9]{22}$/);
    expect(body.content[0].id).toMatch(/^toolu_01[A-Za-z0-9]{22}$/);
    expectDistributions(body.content[0].input as Json);

    const input = body.content[0].input as Json;
    expect(body.usage).toEqual({
      input_tokens: Math.ceil((SYSTEM.length + userContent(marker).length) / 4),
      output_tokens: Math.ceil(JSON.stringify(input).length / 4),
    });
  });

  it('gives the same answers as the OpenAI protocol for the same user content, every time', async () => {
    const marker = newMarker();
    const first = (await (await messages(anthropicBody(marker))).json()) as Json;
    const second = (await (await messages(anthropicBody(marker))).json()) as Json;
    expect(JSON.stringify(second.content[0].input)).toBe(JSON.stringify(first.content[0].input));
    expect(first.content[0].input).toEqual(await chatAnswers(await chat(openAiBody(marker))));
  });

  it('echoes a dated model and reads a system given as text blocks', async () => {
    const marker = newMarker();
    const body = (await (await messages(anthropicBody(marker, { model: 'claude-sim-2025-10-01', system: [{ type: 'text', text: SYSTEM }] }))).json()) as Json;
    expect(body.model).toBe('claude-sim-2025-10-01');
    expect(body.usage.input_tokens).toBe(Math.ceil((SYSTEM.length + userContent(marker).length) / 4));
  });

  it.each([
    ['empty tools', { tools: [] }, /tools/],
    ['a tool_choice naming a missing tool', { tool_choice: { type: 'tool', name: 'other' } }, /tool_choice names other/],
    ['a tool without input_schema', { tools: [{ name: 'record_answers' }] }, /input_schema/],
    ['no max_tokens', { max_tokens: undefined }, /max_tokens/],
  ])('refuses a request with %s with a 400 in Anthropic format', async (_name, overrides, message) => {
    const res = await messages(anthropicBody(newMarker(), overrides));
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(body.error.message).toMatch(message);
  });

  it('answers a request without tools with a text block', async () => {
    const marker = newMarker();
    const body = (await (await messages(anthropicBody(marker, { tools: undefined, tool_choice: undefined }))).json()) as Json;
    expect(body).toMatchObject({ type: 'message', stop_reason: 'end_turn', content: [{ type: 'text' }] });
    expect(body.content[0].text).toMatch(/^Simulated answer [0-9a-f]{12}\.$/);
  });

  it('refuses a request without anthropic-version, as the real API does', async () => {
    const res = await messages(anthropicBody(newMarker()), { 'x-api-key': 'sk-test' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toMatch(/anthropic-version/);
  });

  it.each([
    [529, 'overloaded_error'],
    [429, 'rate_limit_error'],
    [401, 'authentication_error'],
    [400, 'invalid_request_error'],
    [500, 'api_error'],
  ])('answers a scripted %i with %s', async (status, type) => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ status, retryAfter: 7 }] });
    const res = await messages(anthropicBody(marker));
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(((await res.json()) as Json).error.type).toBe(type);
  });

  it('answers a malformed step with prose instead of the tool call', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ malformed: true }] });
    const body = (await (await messages(anthropicBody(marker))).json()) as Json;
    expect(body.stop_reason).toBe('end_turn');
    expect(body.content).toEqual([{ type: 'text', text: expect.any(String) }]);
    expect(() => JSON.parse(body.content[0].text as string)).toThrow();
  });
});

describe('scripted faults', () => {
  it.each([
    [429, 'requests', 'rate_limit_exceeded'],
    [401, 'invalid_request_error', 'invalid_api_key'],
    [503, 'server_error', null],
  ])('answers a scripted %i in OpenAI format with Retry-After', async (status, type, code) => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ status, retryAfter: 2 }] });
    const res = await chat(openAiBody(marker));
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(((await res.json()) as Json).error).toMatchObject({ type, code });
  });

  it('uses errorMessage and extra headers', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ status: 400, errorMessage: 'context too long', headers: { 'x-request-id': 'req_sim' } }] });
    const res = await chat(openAiBody(marker));
    expect(res.status).toBe(400);
    expect(res.headers.get('x-request-id')).toBe('req_sim');
    expect(res.headers.get('retry-after')).toBeNull();
    expect(((await res.json()) as Json).error.message).toBe('context too long');
  });

  it('waits delayMs before answering', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ delayMs: 300 }] });
    const started = Date.now();
    expectDistributions(await chatAnswers(await chat(openAiBody(marker))));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('drops the connection without answering', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ drop: true }] });
    await expect(chat(openAiBody(marker))).rejects.toThrow();
  });

  it('answers malformed content that is not JSON', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ malformed: true }] });
    const res = await chat(openAiBody(marker));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(() => JSON.parse(body.choices[0].message.content as string)).toThrow();
  });

  it('leaves out the first question when incomplete', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ incomplete: true }] });
    expectDistributions(await chatAnswers(await chat(openAiBody(marker))), ['fraud']);
  });

  it('adds an outcome the schema does not list, keeping the total at 1', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ unknownOutcome: true }] });
    const { intent } = await chatAnswers(await chat(openAiBody(marker)));
    const unknown = Object.keys(intent as Json).filter((outcome) => !OUTCOMES.intent.includes(outcome));
    expect(unknown).toHaveLength(1);
    expect(intent[unknown[0]!]).toBeGreaterThan(0);
    expect(Object.values(intent as Record<string, number>).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  });

  it('forces the given distributions and answers the other questions as usual', async () => {
    const marker = newMarker();
    const plain = await chatAnswers(await chat(openAiBody(marker)));
    const forced = { refund: 0.4, exchange: 0.35, other: 0.25 };
    await script({ match: marker, steps: [{ answers: { intent: forced } }] });
    expect(await chatAnswers(await chat(openAiBody(marker)))).toEqual({ intent: forced, fraud: plain.fraud });
  });

  it('reports the model a step names, exactly', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ model: 'sim-other' }] });
    expect(((await (await chat(openAiBody(marker))).json()) as Json).model).toBe('sim-other');
  });

  it('uses the steps in order, then answers normally', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ status: 503 }, { status: 429 }] });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await chat(openAiBody(marker))).status);
    expect(statuses).toEqual([503, 429, 200]);
  });

  it('repeats the last step forever when repeat is set', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ status: 500 }, { status: 529 }], repeat: true });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await chat(openAiBody(marker))).status);
    expect(statuses).toEqual([500, 529, 529, 529]);
  });

  it('keeps scripts with different matches apart', async () => {
    const [a, b] = [newMarker(), newMarker()];
    await script({ match: a, steps: [{ status: 500 }] });
    await script({ match: b, steps: [{ status: 429 }] });
    expect((await chat(openAiBody(b))).status).toBe(429);
    expect((await chat(openAiBody(newMarker()))).status).toBe(200);
    expect((await chat(openAiBody(a))).status).toBe(500);
  });

  it('lets the most recently added matching script win', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ status: 500 }], repeat: true });
    await script({ match: marker, steps: [{ status: 429 }] });
    expect((await chat(openAiBody(marker))).status).toBe(429);
    expect((await chat(openAiBody(marker))).status).toBe(500);
  });

  it('removes scripts by match', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ status: 500 }], repeat: true });
    const res = await fetch(`${sim.url}/_sim/scripts?match=${marker}`, { method: 'DELETE' });
    expect(await res.json()).toEqual({ deleted: 1 });
    expect((await chat(openAiBody(marker))).status).toBe(200);
  });

  it('refuses an invalid script with a 400 naming the problem', async () => {
    const res = await post('/_sim/scripts', { match: 'x', steps: [{ retry_after: 1 }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { type: 'invalid_request', message: 'steps[0] has an unknown field retry_after' } });
    expect((await post('/_sim/scripts', 'not json')).status).toBe(400);
  });
});

describe('recorded requests', () => {
  it('records provider requests in arrival order with their time, path, headers and body', async () => {
    const marker = newMarker();
    const before = Date.now();
    const first = openAiBody(marker);
    const second = anthropicBody(marker);
    await chat(first);
    await messages(second);
    await chat(openAiBody(newMarker()));
    const after = Date.now();

    const { data } = (await (await fetch(`${sim.url}/_sim/requests?match=${marker}`)).json()) as Json;
    expect(data).toHaveLength(2);
    expect(data.map((r: Json) => r.path)).toEqual(['/v1/chat/completions', '/v1/messages']);
    expect(data.map((r: Json) => r.body)).toEqual([first, second]);
    expect(data[0].headers.authorization).toBe('Bearer sk-test');
    expect(data[1].headers['anthropic-version']).toBe('2023-06-01');
    expect(data[0].at).toBeGreaterThanOrEqual(before);
    expect(data[1].at).toBeGreaterThanOrEqual(data[0].at);
    expect(data[1].at).toBeLessThanOrEqual(after);
  });

  it('records refused and faulted requests too, and keeps a body that is not JSON as text', async () => {
    const marker = newMarker();
    await script({ match: marker, steps: [{ drop: true }] });
    await chat(openAiBody(marker)).catch(() => undefined);
    await chat(`not json ${marker}`);
    const { data } = (await (await fetch(`${sim.url}/_sim/requests?match=${marker}`)).json()) as Json;
    expect(data.map((r: Json) => r.body)).toEqual([openAiBody(marker), `not json ${marker}`]);
  });

  it('lists every request without match, and clears by match', async () => {
    const [a, b] = [newMarker(), newMarker()];
    await chat(openAiBody(a));
    await chat(openAiBody(a));
    await chat(openAiBody(b));
    const all = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as Json;
    expect(all.data.length).toBeGreaterThanOrEqual(3);

    const cleared = await fetch(`${sim.url}/_sim/requests?match=${a}`, { method: 'DELETE' });
    expect(await cleared.json()).toEqual({ deleted: 2 });
    expect(((await (await fetch(`${sim.url}/_sim/requests?match=${a}`)).json()) as Json).data).toEqual([]);
    expect(((await (await fetch(`${sim.url}/_sim/requests?match=${b}`)).json()) as Json).data).toHaveLength(1);
  });
});

describe('routes', () => {
  it('answers health', async () => {
    const res = await fetch(`${sim.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it.each([
    ['GET', '/v1/models'],
    ['GET', '/v1/chat/completions'],
    ['POST', '/health'],
  ])('answers 404 JSON for %s %s', async (method, path) => {
    const res = await fetch(`${sim.url}${path}`, { method });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { type: 'not_found', message: `no route for ${method} ${path}` } });
  });

  it('gives a url without a trailing slash on the port it listens on', () => {
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
  });
});

describe('with an apiKey', () => {
  let keyed: EngineSimulator;
  beforeAll(async () => {
    keyed = await startEngineSimulator({ apiKey: 'sk-sim' });
  });
  afterAll(() => keyed.close());

  it.each([
    ['a wrong key', { authorization: 'Bearer sk-wrong' }],
    ['no key', {}],
    ["Anthropic's header", { 'x-api-key': 'sk-sim' }],
  ])('answers OpenAI requests with %s 401 invalid_api_key', async (_name, headers) => {
    const res = await chat(openAiBody(newMarker()), headers, keyed.url);
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
  });

  it.each([
    ['a wrong key', { 'x-api-key': 'sk-wrong', 'anthropic-version': '2023-06-01' }],
    ['no key', { 'anthropic-version': '2023-06-01' }],
  ])('answers Anthropic requests with %s 401 authentication_error', async (_name, headers) => {
    const res = await messages(anthropicBody(newMarker()), headers, keyed.url);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
  });

  it('answers requests with the right key', async () => {
    expect((await chat(openAiBody(newMarker()), { authorization: 'Bearer sk-sim' }, keyed.url)).status).toBe(200);
    const res = await messages(anthropicBody(newMarker()), { 'x-api-key': 'sk-sim', 'anthropic-version': '2023-06-01' }, keyed.url);
    expect(res.status).toBe(200);
  });

  it('checks the key before using a script step', async () => {
    const marker = newMarker();
    await post('/_sim/scripts', { match: marker, steps: [{ status: 529 }] }, {}, keyed.url);
    expect((await chat(openAiBody(marker), { authorization: 'Bearer sk-wrong' }, keyed.url)).status).toBe(401);
    expect((await chat(openAiBody(marker), { authorization: 'Bearer sk-sim' }, keyed.url)).status).toBe(529);
  });
});

describe('a set delay', () => {
  it('answers every provider request after the delay, many at once, and the control API at once', async () => {
    const slow = await startEngineSimulator({ delayMs: 300 });
    try {
      const started = Date.now();
      const replies = await Promise.all([0, 1, 2, 3].map(() => chat(openAiBody(newMarker()), undefined, slow.url)));
      const took = Date.now() - started;
      for (const reply of replies) expectDistributions(await chatAnswers(reply));
      // Waiting side by side, not one after another: four answers in about one delay.
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(1_200);
      const health = Date.now();
      expect((await fetch(`${slow.url}/health`)).status).toBe(200);
      expect(Date.now() - health).toBeLessThan(250);
    } finally {
      await slow.close();
    }
  });

  it('refuses a delay that is not a whole number of milliseconds', async () => {
    await expect(startEngineSimulator({ delayMs: -1 })).rejects.toThrow(/delayMs/);
    await expect(startEngineSimulator({ delayMs: 1.5 })).rejects.toThrow(/delayMs/);
  });
});

describe('close', () => {
  it('cuts scripted delays short, drops open connections and can be called twice', async () => {
    const own = await startEngineSimulator();
    const marker = newMarker();
    await post('/_sim/scripts', { match: marker, steps: [{ delayMs: 60_000 }] }, {}, own.url);
    const pending = chat(openAiBody(marker), undefined, own.url);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await Promise.all([own.close(), own.close()]);
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(pending).rejects.toThrow();
  });

  it('refuses to start on a port already in use', async () => {
    await expect(startEngineSimulator({ port: sim.port })).rejects.toThrow(/EADDRINUSE/);
  });
});

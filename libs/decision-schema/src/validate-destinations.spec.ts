import { fullSchema, issuesOf, normalized, text } from './__fixtures__/schemas';

type Json = Record<string, unknown>;

const withDestinations = (destinations: unknown) => issuesOf({ ...fullSchema(), destinations });
const one = (destination: Json) => withDestinations([destination]);
const normalizedOne = (destination: Json) => normalized({ ...fullSchema(), destinations: [destination] }).destinations[0];

const webhook = (extra: Json = {}): Json => ({ key: 'hook', type: 'webhook', url: 'https://hooks.example.com/x', ...extra });
const reply = (extra: Json = {}): Json => ({ key: 'say', type: 'reply', text: 'Hello', ...extra });
const llm = (extra: Json = {}): Json => ({ key: 'draft', type: 'llm', prompt: 'Write a reply', ...extra });
const agent = (extra: Json = {}): Json => ({ key: 'hand_off', type: 'agent', url: 'https://agents.example.com/a', ...extra });
const http = (extra: Json = {}): Json => ({ key: 'call', type: 'http', url: 'https://api.example.com/x', ...extra });
const fn = (extra: Json = {}): Json => ({ key: 'handler', type: 'function', function: 'notify_team', ...extra });
const workflow = (extra: Json = {}): Json => ({ key: 'flow', type: 'workflow', url: 'https://flows.example.com/x', ...extra });

const common = { description: null, when: [], params: {}, headers: {} };

describe('validateSchema: destinations', () => {
  it('are optional and normalize to []', () => {
    expect(withDestinations(undefined)).toEqual([]);
    expect(normalized({ ...fullSchema(), destinations: undefined }).destinations).toEqual([]);
    expect(withDestinations('x')).toEqual([{ path: 'destinations', message: 'must be an array' }]);
    expect(withDestinations([1])).toEqual([{ path: 'destinations.0', message: 'must be an object' }]);
  });

  it.each([
    [20, []],
    [21, [{ path: 'destinations', message: 'must have at most 20 destinations (has 21)' }]],
  ])('%i destinations', (count, expected) => {
    expect(withDestinations(Array.from({ length: count }, (_, i) => webhook({ key: `d${i}` })))).toEqual(expected);
  });

  it('need a known type and a unique snake_case key', () => {
    expect(
      withDestinations([{ key: 'a', url: 'https://x.example' }, webhook({ type: 'email', key: 'mail' }), webhook({ key: 'Hook' }), webhook(), webhook()]),
    ).toEqual([
      { path: 'destinations.0.type', message: 'is required' },
      { path: 'destinations.1.type', message: 'must be one of reply, function, llm, agent, workflow, webhook, http' },
      { path: 'destinations.2.key', message: 'must be snake_case: a lowercase letter, then lowercase letters, digits or _' },
      { path: 'destinations.4.key', message: 'duplicates "hook"' },
    ]);
  });

  it('flag properties of other types', () => {
    expect(one(webhook({ text: 'hi', method: 'POST' }))).toEqual([
      { path: 'destinations.0.text', message: 'unknown property' },
      { path: 'destinations.0.method', message: 'unknown property' },
    ]);
  });

  it.each([
    [2000, []],
    [2001, [{ path: 'destinations.0.description', message: 'must be at most 2,000 characters (is 2,001)' }]],
  ])('description of %i characters', (length, expected) => {
    expect(one(webhook({ description: text(length) }))).toEqual(expected);
  });

  describe('normalization per type', () => {
    it('reply', () => {
      expect(normalizedOne(reply())).toEqual({ key: 'say', type: 'reply', ...common, text: 'Hello', buttons: [] });
    });
    it('function', () => {
      expect(normalizedOne(fn())).toEqual({ key: 'handler', type: 'function', ...common, function: 'notify_team' });
    });
    it('llm', () => {
      expect(normalizedOne(llm())).toEqual({
        key: 'draft',
        type: 'llm',
        ...common,
        prompt: 'Write a reply',
        input: null,
        model: null,
        maxTokens: 512,
        temperature: 0.3,
        timeoutMs: 20000,
      });
    });
    it('agent', () => {
      expect(normalizedOne(agent())).toEqual({
        key: 'hand_off',
        type: 'agent',
        ...common,
        url: 'https://agents.example.com/a',
        mode: 'async',
        instructions: null,
        tools: [],
        timeoutMs: 20000,
      });
    });
    it('workflow and webhook', () => {
      expect(normalizedOne(workflow())).toEqual({ key: 'flow', type: 'workflow', ...common, url: 'https://flows.example.com/x' });
      expect(normalizedOne(webhook())).toEqual({ key: 'hook', type: 'webhook', ...common, url: 'https://hooks.example.com/x' });
    });
    it('http', () => {
      expect(normalizedOne(http())).toEqual({ key: 'call', type: 'http', ...common, url: 'https://api.example.com/x', method: 'POST', body: null });
    });
    it('params and their required flag', () => {
      const destination = normalizedOne(fn({ params: { a: { from: 'action' }, b: { from: 'state.message', required: true }, c: { value: 3 } } }));
      expect(destination?.params).toEqual({ a: { from: 'action', required: false }, b: { from: 'state.message', required: true }, c: { value: 3 } });
    });
  });

  describe('when', () => {
    const condition = { on: 'action', op: 'eq', value: 'block' };

    it.each([
      [5, []],
      [6, [{ path: 'destinations.0.when', message: 'must have at most 5 conditions (has 6)' }]],
    ])('%i conditions', (count, expected) => {
      expect(one(webhook({ when: Array.from({ length: count }, () => condition) }))).toEqual(expected);
    });

    it.each(['continue', 'block', 'escalate', 'fallback'])('tests the action %s with eq and neq', (value) => {
      expect(
        one(
          webhook({
            when: [
              { on: 'action', op: 'eq', value },
              { on: 'action', op: 'neq', value },
            ],
          }),
        ),
      ).toEqual([]);
    });

    it('refuses other operators, unknown actions and extra properties on action conditions', () => {
      expect(
        one(
          webhook({
            when: [
              { on: 'action', op: 'gt', value: 'block' },
              { on: 'action', op: 'eq', value: 'approve' },
              { ...condition, question: 'fraud' },
            ],
          }),
        ),
      ).toEqual([
        { path: 'destinations.0.when.0.op', message: 'must be one of eq, neq' },
        { path: 'destinations.0.when.1.value', message: 'must be one of continue, block, escalate, fallback' },
        { path: 'destinations.0.when.2.question', message: 'unknown property' },
      ]);
    });

    it('checks policy-style conditions the same way', () => {
      expect(one(webhook({ when: [{ on: 'answer', question: 'intent', op: 'eq', value: 'cancel' }] }))).toEqual([
        { path: 'destinations.0.when.0.value', message: 'is not an option of "intent"' },
      ]);
    });

    it('may name the threshold of a probability question that has one', () => {
      expect(one(webhook({ when: [{ on: 'answer', question: 'fraud', op: 'gte', value: 'threshold' }] }))).toEqual([]);
      const schema = fullSchema();
      // fullSchema's third question is fraud.
      delete (schema.questions as Json[])[2]!.threshold;
      expect(issuesOf({ ...schema, destinations: [webhook({ when: [{ on: 'answer', question: 'fraud', op: 'gte', value: 'threshold' }] })] })).toEqual([
        { path: 'destinations.0.when.0.value', message: '"fraud" has no threshold to name' },
      ]);
    });
  });

  describe('params', () => {
    const withParams = (params: unknown) => one(fn({ params }));

    it.each([
      [30, []],
      [31, [{ path: 'destinations.0.params', message: 'must have at most 30 params (has 31)' }]],
    ])('%i params', (count, expected) => {
      expect(withParams(Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { from: 'action' }])))).toEqual(expected);
    });

    it.each([
      'state',
      'state.customer.name',
      'state.tags.0',
      'result',
      'result.intent',
      'confidence.fraud',
      'scores.urgency',
      'composites.risk',
      'action',
      'decision_id',
      'execution_id',
    ])('accepts from %s', (from) => {
      expect(withParams({ p: { from } })).toEqual([]);
    });

    it.each([
      ['input.message', 'must start with one of state, result, confidence, scores, composites, action, decision_id, execution_id'],
      ['states.x', 'must start with one of state, result, confidence, scores, composites, action, decision_id, execution_id'],
      ['state..x', 'must not have empty path segments'],
      ['result.', 'must not have empty path segments'],
      ['action.type', '"action" is a single value: nothing lies below it'],
      ['decision_id.x', '"decision_id" is a single value: nothing lies below it'],
      ['result.intent.value', '"result.intent" is a single value: nothing lies below it'],
      ['result.mood', 'refers to an unknown question "mood"'],
      ['confidence.Mood', 'refers to an unknown question "Mood"'],
      ['scores.fraud', '"fraud" is not a score question'],
      ['composites.danger', 'refers to an unknown composite "danger"'],
      ['', 'must not be empty'],
    ])('refuses from %p', (from, message) => {
      expect(withParams({ p: { from } })).toEqual([{ path: 'destinations.0.params.p.from', message }]);
    });

    it('limits from to 255 characters', () => {
      expect(withParams({ p: { from: `state.${text(249)}` } })).toEqual([]);
      expect(withParams({ p: { from: `state.${text(250)}` } })).toEqual([
        { path: 'destinations.0.params.p.from', message: 'must be 1 to 255 characters (is 256)' },
      ]);
    });

    it.each([
      [text(500), []],
      [text(501), [{ path: 'destinations.0.params.p.value', message: 'must be at most 500 characters (is 501)' }]],
      [{ k: text(492) }, []],
      [{ k: text(493) }, [{ path: 'destinations.0.params.p.value', message: 'must be at most 500 characters (is 501)' }]],
      [42, []],
      [false, []],
    ])('fixed value %#', (value, expected) => {
      expect(withParams({ p: { value } })).toEqual(expected);
    });

    it('checks names and shapes', () => {
      expect(
        withParams({
          Name: { from: 'action' },
          a: 'state.message',
          b: {},
          c: { value: null },
          d: { from: 'action', required: 'yes' },
          e: { from: 'action', value: 1 },
          f: { value: 1, required: true },
        }),
      ).toEqual([
        { path: 'destinations.0.params.Name', message: 'must be snake_case: a lowercase letter, then lowercase letters, digits or _' },
        { path: 'destinations.0.params.a', message: 'must be { from, required? } or { value }' },
        { path: 'destinations.0.params.b', message: 'must be { from, required? } or { value }' },
        { path: 'destinations.0.params.c', message: 'must be { from, required? } or { value }' },
        { path: 'destinations.0.params.d.required', message: 'must be true or false' },
        { path: 'destinations.0.params.e.value', message: 'unknown property' },
        { path: 'destinations.0.params.f.required', message: 'unknown property' },
      ]);
      expect(withParams([])).toEqual([{ path: 'destinations.0.params', message: 'must be an object' }]);
    });

    it('must declare every {{params.NAME}} a text refers to', () => {
      expect(one(reply({ text: 'Hi {{params.name}} {{ params.name }}, {{params.plan}}', params: { name: { from: 'state.customer.name' } } }))).toEqual([
        { path: 'destinations.0.text', message: '{{params.plan}} is not a declared param' },
      ]);
      expect(one(llm({ prompt: '{{params.a}}', input: '{{params.b}}' }))).toEqual([
        { path: 'destinations.0.prompt', message: '{{params.a}} is not a declared param' },
        { path: 'destinations.0.input', message: '{{params.b}} is not a declared param' },
      ]);
      expect(one(agent({ instructions: '{{params.a}}' }))).toEqual([{ path: 'destinations.0.instructions', message: '{{params.a}} is not a declared param' }]);
      expect(one(http({ body: '{"x":"{{params.a}}"}' }))).toEqual([{ path: 'destinations.0.body', message: '{{params.a}} is not a declared param' }]);
    });
  });

  describe('headers', () => {
    const withHeaders = (headers: unknown) => one(webhook({ headers }));

    it.each([
      [20, []],
      [21, [{ path: 'destinations.0.headers', message: 'must have at most 20 headers (has 21)' }]],
    ])('%i headers', (count, expected) => {
      expect(withHeaders(Object.fromEntries(Array.from({ length: count }, (_, i) => [`X-H${i}`, 'v'])))).toEqual(expected);
    });

    it.each([
      [2048, []],
      [2049, [{ path: 'destinations.0.headers.X-Token', message: 'must be at most 2,048 characters (is 2,049)' }]],
    ])('value of %i characters', (length, expected) => {
      expect(withHeaders({ 'X-Token': text(length) })).toEqual(expected);
    });

    it('take names of up to 255 characters', () => {
      expect(withHeaders({ [text(255)]: 'v' })).toEqual([]);
    });

    it('checks names and values', () => {
      expect(
        withHeaders({
          'Bad Name': 'v',
          [text(256)]: 'v',
          Host: 'evil.example',
          'Service-Signature': 'forged',
          'X-Dup': 'a',
          'x-dup': 'b',
          'X-Split': 'a\r\nInjected: 1',
          'X-Number': 1,
        }),
      ).toEqual([
        { path: 'destinations.0.headers.Bad Name', message: 'must be a header name of at most 255 characters' },
        { path: `destinations.0.headers.${text(256)}`, message: 'must be a header name of at most 255 characters' },
        { path: 'destinations.0.headers.Host', message: 'is set by the delivery itself' },
        { path: 'destinations.0.headers.Service-Signature', message: 'is set by the delivery itself' },
        { path: 'destinations.0.headers.x-dup', message: 'duplicates "x-dup"' },
        { path: 'destinations.0.headers.X-Split', message: 'must not contain line breaks' },
        { path: 'destinations.0.headers.X-Number', message: 'must be a string' },
      ]);
    });
  });

  describe('urls', () => {
    const urlOfLength = (length: number) => `https://example.com/${text(length - 20)}`;

    it.each([
      [urlOfLength(2048), []],
      [urlOfLength(2049), [{ path: 'destinations.0.url', message: 'must be 1 to 2,048 characters (is 2,049)' }]],
      ['http://localhost:8080/hook', []],
      ['ftp://example.com/x', [{ path: 'destinations.0.url', message: 'must be an http or https URL' }]],
      ['example.com/hook', [{ path: 'destinations.0.url', message: 'must be an http or https URL' }]],
      ['', [{ path: 'destinations.0.url', message: 'must not be empty' }]],
    ])('%p', (url, expected) => {
      expect(one(webhook({ url }))).toEqual(expected);
    });

    it.each([webhook, workflow, agent, http])('are required by %p', (make) => {
      expect(one(make({ url: undefined }))).toEqual([{ path: 'destinations.0.url', message: 'is required' }]);
    });
  });

  describe('reply', () => {
    it.each([
      [1, []],
      [4000, []],
      [0, [{ path: 'destinations.0.text', message: 'must not be empty' }]],
      [4001, [{ path: 'destinations.0.text', message: 'must be 1 to 4,000 characters (is 4,001)' }]],
    ])('text of %i characters', (length, expected) => {
      expect(one(reply({ text: text(length) }))).toEqual(expected);
    });

    it('requires a text', () => {
      expect(one(reply({ text: undefined }))).toEqual([{ path: 'destinations.0.text', message: 'is required' }]);
    });

    it.each([
      [['a'], []],
      [Array.from({ length: 10 }, (_, i) => `b${i}`), []],
      [Array.from({ length: 11 }, (_, i) => `b${i}`), [{ path: 'destinations.0.buttons', message: 'must have at most 10 buttons (has 11)' }]],
      [[text(80)], []],
      [[text(81)], [{ path: 'destinations.0.buttons.0', message: 'must be 1 to 80 characters (is 81)' }]],
      [[''], [{ path: 'destinations.0.buttons.0', message: 'must not be empty' }]],
      [['a', 'a'], [{ path: 'destinations.0.buttons.1', message: 'duplicates "a"' }]],
    ])('buttons %#', (buttons, expected) => {
      expect(one(reply({ buttons }))).toEqual(expected);
    });
  });

  describe('function', () => {
    it.each(['notify_team', 'billing.refund', 'crm:createLead', '$handler', text(255)])('accepts handler %p', (name) => {
      expect(one(fn({ function: name }))).toEqual([]);
    });

    it.each([
      ['1st', 'must be a handler name: letters, digits and _ $ . : -, not starting with a digit'],
      ['with space', 'must be a handler name: letters, digits and _ $ . : -, not starting with a digit'],
      ['', 'must not be empty'],
      [text(256), 'must be 1 to 255 characters (is 256)'],
    ])('refuses handler %p', (name, message) => {
      expect(one(fn({ function: name }))).toEqual([{ path: 'destinations.0.function', message }]);
    });
  });

  describe('llm', () => {
    it.each([
      [{ prompt: text(8000) }, []],
      [{ prompt: text(8001) }, [{ path: 'destinations.0.prompt', message: 'must be 1 to 8,000 characters (is 8,001)' }]],
      [{ prompt: undefined }, [{ path: 'destinations.0.prompt', message: 'is required' }]],
      [{ input: text(8000) }, []],
      [{ input: text(8001) }, [{ path: 'destinations.0.input', message: 'must be at most 8,000 characters (is 8,001)' }]],
      [{ model: 'gpt-4o-mini' }, []],
      [{ model: '' }, [{ path: 'destinations.0.model', message: 'must not be empty' }]],
      [{ model: text(255) }, []],
      [{ model: text(256) }, [{ path: 'destinations.0.model', message: 'must be 1 to 255 characters (is 256)' }]],
      [{ maxTokens: 16 }, []],
      [{ maxTokens: 2048 }, []],
      [{ maxTokens: 15 }, [{ path: 'destinations.0.maxTokens', message: 'must be between 16 and 2,048' }]],
      [{ maxTokens: 2049 }, [{ path: 'destinations.0.maxTokens', message: 'must be between 16 and 2,048' }]],
      [{ maxTokens: 100.5 }, [{ path: 'destinations.0.maxTokens', message: 'must be an integer' }]],
      [{ temperature: 0 }, []],
      [{ temperature: 2 }, []],
      [{ temperature: -0.1 }, [{ path: 'destinations.0.temperature', message: 'must be between 0 and 2' }]],
      [{ temperature: 2.1 }, [{ path: 'destinations.0.temperature', message: 'must be between 0 and 2' }]],
      [{ timeoutMs: 1000 }, []],
      [{ timeoutMs: 25000 }, []],
      [{ timeoutMs: 999 }, [{ path: 'destinations.0.timeoutMs', message: 'must be between 1,000 and 25,000' }]],
      [{ timeoutMs: 25001 }, [{ path: 'destinations.0.timeoutMs', message: 'must be between 1,000 and 25,000' }]],
    ])('%p', (extra, expected) => {
      expect(one(llm(extra))).toEqual(expected);
    });
  });

  describe('agent', () => {
    it.each([
      [{ mode: 'sync' }, []],
      [{ mode: 'async' }, []],
      [{ mode: 'batch' }, [{ path: 'destinations.0.mode', message: 'must be one of sync, async' }]],
      [{ instructions: text(8000) }, []],
      [{ instructions: text(8001) }, [{ path: 'destinations.0.instructions', message: 'must be at most 8,000 characters (is 8,001)' }]],
      [{ tools: Array.from({ length: 50 }, (_, i) => `t${i}`) }, []],
      [{ tools: Array.from({ length: 51 }, (_, i) => `t${i}`) }, [{ path: 'destinations.0.tools', message: 'must have at most 50 tools (has 51)' }]],
      [{ tools: [''] }, [{ path: 'destinations.0.tools.0', message: 'must not be empty' }]],
      [{ tools: [text(255)] }, []],
      [{ tools: [text(256)] }, [{ path: 'destinations.0.tools.0', message: 'must be 1 to 255 characters (is 256)' }]],
      [{ tools: ['a', 'a'] }, [{ path: 'destinations.0.tools.1', message: 'duplicates "a"' }]],
      [{ timeoutMs: 1000 }, []],
      [{ timeoutMs: 25001 }, [{ path: 'destinations.0.timeoutMs', message: 'must be between 1,000 and 25,000' }]],
    ])('%p', (extra, expected) => {
      expect(one(agent(extra))).toEqual(expected);
    });
  });

  describe('http', () => {
    it.each([
      [{ method: 'GET' }, []],
      [{ method: 'PUT' }, []],
      [{ method: 'PATCH' }, []],
      [{ method: 'DELETE' }, []],
      [{ method: 'post' }, [{ path: 'destinations.0.method', message: 'must be one of GET, POST, PUT, PATCH, DELETE' }]],
      [{ body: text(10000) }, []],
      [{ body: text(10001) }, [{ path: 'destinations.0.body', message: 'must be at most 10,000 characters (is 10,001)' }]],
      [{ body: { a: 1 } }, [{ path: 'destinations.0.body', message: 'must be a string' }]],
    ])('%p', (extra, expected) => {
      expect(one(http(extra))).toEqual(expected);
    });
  });
});

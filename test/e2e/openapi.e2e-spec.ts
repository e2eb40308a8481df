import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { checkAgainstSchema, pathShape, typeScriptClient, undocumentedRoutes, type OpenApiDocument } from '@ds/openapi';
import { validateOpenApi } from '../support/openapi-validator';
import {
  call,
  createDecision,
  defined,
  deployedDecision,
  expectError,
  newWorkspace,
  opsPort,
  Reply,
  roomyWorkspace,
  runDecision,
  scriptEngine,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';

/**
 * GET /openapi.json and GET /v1/decisions/{slug}/openapi.json against the running gateway: the documents
 * validate as OpenAPI 3.1, every public route the gateway registered is described, and real answers of the
 * API (successes and errors, bodies and headers) match what the document says of them.
 */

interface RouteEntry {
  method: string;
  url: string;
  access: { kind: string; window?: string };
}

/** Operations this document describes ahead of the routes that serve them (the secret URL, MCP, partner mode). */
const DESCRIBED_AHEAD = new Set([
  'POST /v1/hooks/{}',
  'POST /mcp',
  'GET /mcp',
  'DELETE /mcp',
  'POST /v1/workspaces',
  'GET /v1/workspaces',
  'GET /v1/workspaces/{}',
  'PATCH /v1/workspaces/{}',
  'DELETE /v1/workspaces/{}',
  'POST /v1/embed/sessions',
  'DELETE /v1/embed/sessions/{}',
  'POST /v1/embed/sessions/revoke',
]);

/** Headers a response declares that only some answers of that status carry. */
const OCCASIONAL_HEADERS = new Set(['idempotent-replayed', 'retry-after', 'www-authenticate', 'allow']);

let document: OpenApiDocument;

beforeAll(async () => {
  const reply = await call('GET', '/openapi.json');
  expect(reply.status).toBe(200);
  document = reply.body;
});

/**
 * Holds one real answer against the document: its status must be documented for the operation, its body must
 * match the response schema with every field described (objects closed), and the headers must be the declared ones.
 */
function expectDescribed(doc: OpenApiDocument, method: string, path: string, reply: Reply): void {
  const operation = doc.paths[path]?.[method.toLowerCase()];
  expect({ operation: `${method} ${path}`, documented: operation !== undefined }).toEqual({ operation: `${method} ${path}`, documented: true });
  const response = operation.responses[String(reply.status)];
  expect({ operation: `${method} ${path}`, status: reply.status, documented: response !== undefined }).toEqual({
    operation: `${method} ${path}`,
    status: reply.status,
    documented: true,
  });
  const schema = response.content?.['application/json']?.schema;
  if (schema) {
    const problems = checkAgainstSchema(schema, reply.body, doc, { closedObjects: true });
    expect({ operation: `${method} ${path} ${reply.status}`, problems }).toEqual({ operation: `${method} ${path} ${reply.status}`, problems: [] });
  } else {
    expect(reply.text).toBe('');
  }
  const declared = new Set(Object.keys(response.headers ?? {}).map((name) => name.toLowerCase()));
  for (const name of declared) {
    if (!OCCASIONAL_HEADERS.has(name)) expect({ header: name, present: reply.headers.has(name) }).toEqual({ header: name, present: true });
  }
  for (const name of ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'idempotent-replayed']) {
    if (reply.headers.has(name)) expect({ header: name, declared: declared.has(name) }).toEqual({ header: name, declared: true });
  }
}

describe('GET /openapi.json', () => {
  it('answers the OpenAPI 3.1 document without authentication, valid for the standard validator', async () => {
    const reply = await call('GET', '/openapi.json');
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('x-request-id')).toMatch(/^req_/);
    expect(reply.body.openapi).toMatch(/^3\.1\./);
    expect(reply.body.servers).toEqual([{ url: expect.stringMatching(/^https?:\/\//) }]);
    expect(reply.body.webhooks['decision.completed']).toBeDefined();
    expect(validateOpenApi(reply.body)).toEqual({ valid: true });
    expectDescribed(document, 'GET', '/openapi.json', reply);
  });

  it('describes every public route the gateway registered, and each described route it serves exists', async () => {
    const table = await fetch(`http://127.0.0.1:${opsPort(0)}/routes`);
    const routes = ((await table.json()) as { routes: RouteEntry[] }).routes;
    expect(routes.length).toBeGreaterThan(10);
    expect(undocumentedRoutes(document, routes)).toEqual([]);

    const served = new Set(routes.map((route) => `${route.method} ${pathShape(route.url)}`));
    const described = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${pathShape(path)}`));
    expect(described.filter((operation) => !served.has(operation) && !DESCRIBED_AHEAD.has(operation))).toEqual([]);
    // The security and window the document gives each served operation are the access its route declares.
    for (const route of routes.filter((entry) => entry.method !== 'HEAD' && (entry.access.kind === 'api-key' || entry.access.kind === 'public'))) {
      const path = Object.keys(document.paths).find((candidate) => pathShape(candidate) === pathShape(route.url));
      if (!path) continue;
      const operation = document.paths[path]![route.method.toLowerCase()];
      const expected = route.access.kind === 'api-key' ? { security: [{ ApiKey: [] }], windows: [route.access.window] } : { security: [], windows: undefined };
      expect({ route: `${route.method} ${route.url}`, security: operation.security, windows: operation['x-rate-limit-windows'] }).toEqual({
        route: `${route.method} ${route.url}`,
        ...expected,
      });
    }
    // The application and operator APIs are not public: they are left out.
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/app/') || path.startsWith('/admin/'))).toEqual([]);
  });

  it('a route the document does not describe is found', async () => {
    const routes = [{ method: 'POST', url: '/v1/decisions/:slug/replay' }];
    expect(undocumentedRoutes(document, routes)).toEqual(['POST /v1/decisions/{}/replay']);
  });
});

describe('real answers of the API match the document', () => {
  let ws: Workspace;
  const schema = triageSchema('OpenAPI checks', {
    destinations: [
      { key: 'ack', type: 'reply', text: 'Thanks, we read it.', buttons: ['Track'] },
      { key: 'notify', type: 'function', function: 'notifyTeam', params: { message: { from: 'state.message' } } },
    ],
  });

  beforeAll(async () => {
    ws = await roomyWorkspace();
    await deployedDecision(ws, 'described', schema);
  });

  it('runs: fresh, with probabilities, replayed, and every refusal of the order of checks', async () => {
    const path = '/v1/decisions/{slug}';
    expectDescribed(document, 'POST', path, await runDecision(ws, 'described', { message: 'Refund please', amount: 12 }));
    expectDescribed(document, 'POST', path, await runDecision(ws, 'described', { message: 'Refund please' }, {}, '?include=probabilities'));
    const first = await runDecision(ws, 'described', { message: 'once' }, { 'idempotency-key': 'openapi-replay-1' });
    const replay = await runDecision(ws, 'described', { message: 'once' }, { 'idempotency-key': 'openapi-replay-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expectDescribed(document, 'POST', path, first);
    expectDescribed(document, 'POST', path, replay);

    const conflict = await runDecision(ws, 'described', { message: 'another' }, { 'idempotency-key': 'openapi-replay-1' });
    expectError(conflict, 409, 'IDEMPOTENCY_CONFLICT');
    expectDescribed(document, 'POST', path, conflict);

    const refusals: Array<[Reply, number, string]> = [
      [await call('POST', '/v1/decisions/described', { body: { state: {} } }), 401, 'INVALID_API_KEY'],
      [await runDecision(ws, 'no-such-decision', { message: 'x' }), 404, 'DECISION_NOT_FOUND'],
      [await runDecision(ws, 'Bad_Slug', { message: 'x' }), 404, 'DECISION_NOT_FOUND'],
      [
        await call('POST', '/v1/decisions/described', { token: ws.apiKey, rawBody: '{"state":', headers: { 'content-type': 'application/json' } }),
        400,
        'INVALID_REQUEST',
      ],
      [await runDecision(ws, 'described', { message: 'x' }, { 'idempotency-key': 'not valid!' }), 400, 'INVALID_REQUEST'],
      [await call('POST', '/v1/decisions/described', { token: ws.apiKey, body: { state: { message: 'x'.repeat(140_000) } } }), 413, 'PAYLOAD_TOO_LARGE'],
      [await runDecision(ws, 'described', { amount: 3 }), 422, 'INVALID_STATE'],
    ];
    await createDecision(ws, 'never-deployed', triageSchema());
    refusals.push([await runDecision(ws, 'never-deployed', { message: 'x' }), 409, 'DECISION_NOT_DEPLOYED']);
    for (const [reply, status, code] of refusals) {
      expectError(reply, status, code);
      expectDescribed(document, 'POST', path, reply);
    }
  });

  it('engine failures: an error, and a fallback with its empty answers', async () => {
    const marker = uniqueMarker();
    await deployedDecision(ws, 'engine-fails', triageSchema(marker));
    await deployedDecision(ws, 'engine-falls-back', triageSchema(`${marker} fallback`, { settings: { onEngineError: 'fallback' } }));
    await scriptEngine(marker, [{ status: 401 }], true);
    const failed = await runDecision(ws, 'engine-fails', { message: 'x' });
    expectError(failed, 502, 'ENGINE_AUTH_FAILED');
    expectDescribed(document, 'POST', '/v1/decisions/{slug}', failed);
    const fallback = await runDecision(ws, 'engine-falls-back', { message: 'x' });
    expect(fallback.body).toMatchObject({ result: {}, action_reason: { type: 'engine_error', code: 'ENGINE_AUTH_FAILED' } });
    expectDescribed(document, 'POST', '/v1/decisions/{slug}', fallback);
    const narrowed = (await call('GET', '/v1/decisions/engine-falls-back/openapi.json', { token: ws.apiKey })).body;
    expectDescribed(narrowed, 'POST', '/v1/decisions/engine-falls-back', fallback);
  });

  it('reads: decisions, a contract, the account and executions with successes and errors, and their refusals', async () => {
    await runDecision(ws, 'described', { message: 'for the log' });
    await runDecision(ws, 'described', { amount: 1 });
    const reads: Array<[string, string, Reply]> = [
      ['/v1/decisions', '/v1/decisions', await call('GET', '/v1/decisions', { token: ws.apiKey })],
      ['/v1/decisions/{slug}', '/v1/decisions/described', await call('GET', '/v1/decisions/described', { token: ws.apiKey })],
      ['/v1/me', '/v1/me', await call('GET', '/v1/me', { token: ws.apiKey })],
      ['/v1/executions', '/v1/executions', await call('GET', '/v1/executions?limit=50', { token: ws.apiKey })],
      ['/v1/executions', '/v1/executions?status=error', await call('GET', '/v1/executions?status=error&decision=described', { token: ws.apiKey })],
      ['/health', '/health', await call('GET', '/health')],
    ];
    for (const [path, , reply] of reads) {
      expect({ path, status: reply.status }).toEqual({ path, status: 200 });
      expectDescribed(document, 'GET', path, reply);
    }
    const executions = reads[3]![2].body.data as Array<{ status: string }>;
    expect(new Set(executions.map((execution) => execution.status))).toEqual(new Set(['success', 'error']));

    const refusals: Array<[string, Reply, number, string]> = [
      ['/v1/executions', await call('GET', '/v1/executions?limit=101', { token: ws.apiKey }), 400, 'INVALID_REQUEST'],
      ['/v1/me', await call('GET', '/v1/me', { token: `svc_live_${'Q'.repeat(32)}` }), 401, 'INVALID_API_KEY'],
      ['/v1/decisions/{slug}', await call('GET', '/v1/decisions/never-deployed', { token: ws.apiKey }), 409, 'DECISION_NOT_DEPLOYED'],
      ['/v1/decisions/{slug}', await call('GET', '/v1/decisions/missing', { token: ws.apiKey }), 404, 'DECISION_NOT_FOUND'],
    ];
    for (const [path, reply, status, code] of refusals) {
      expectError(reply, status, code);
      expectDescribed(document, 'GET', path, reply);
    }
  });

  it('the 429 of a used-up window, with Retry-After and the rate-limit headers', async () => {
    const small = await newWorkspace();
    const limit = Number((await call('GET', '/v1/me', { token: small.apiKey })).headers.get('x-ratelimit-limit'));
    let last: Reply | null = null;
    for (let i = 0; i < limit; i++) last = await call('GET', '/v1/me', { token: small.apiKey });
    expectError(last!, 429, 'RATE_LIMITED');
    expectDescribed(document, 'GET', '/v1/me', last!);
  });
});

describe('GET /v1/decisions/{slug}/openapi.json', () => {
  let ws: Workspace;
  let narrowed: Reply<OpenApiDocument>;

  beforeAll(async () => {
    ws = await roomyWorkspace();
    await deployedDecision(ws, 'typed', triageSchema('typed decision'));
    narrowed = await call('GET', '/v1/decisions/typed/openapi.json', { token: ws.apiKey });
  });

  it('answers a valid OpenAPI 3.1 document for the decision, in the read window', async () => {
    expect(narrowed.status).toBe(200);
    expect(validateOpenApi(narrowed.body)).toEqual({ valid: true });
    expect(Object.keys(narrowed.body.paths)).toContain('/v1/decisions/typed');
    expect(narrowed.body.info.version).toBe('typed.v1');
    expect(narrowed.headers.get('ratelimit')).toMatch(/^"reads";/);
    expectDescribed(document, 'GET', '/v1/decisions/{slug}/openapi.json', narrowed);
  });

  it("types the state and the answers from the decision's active version", async () => {
    const schemas = narrowed.body.components.schemas;
    expect(schemas.State).toMatchObject({
      type: 'object',
      required: ['message'],
      properties: { message: { type: 'string' }, amount: { type: ['number', 'null'] } },
    });
    const result = defined(schemas.Result?.anyOf?.[0]);
    expect(result.properties).toEqual({
      intent: expect.objectContaining({ enum: ['refund', 'exchange', 'other'] }),
      urgency: expect.objectContaining({ enum: ['calm', 'annoyed', 'furious'] }),
      fraud: expect.objectContaining({ type: 'number', minimum: 0, maximum: 1 }),
    });

    const contract = await call('GET', '/v1/decisions/typed', { token: ws.apiKey });
    expect(checkAgainstSchema(schemas.State!, contract.body.example_state, narrowed.body)).toEqual([]);
    expect(checkAgainstSchema(schemas.State!, { amount: 'ten' }, narrowed.body).map((p) => p.path)).toEqual(['message', 'amount']);
  });

  it("holds the decision's real answers, probabilities included, to its typed schemas", async () => {
    const doc = narrowed.body;
    for (const query of ['', '?include=probabilities']) {
      const run = await runDecision(ws, 'typed', { message: 'It broke, refund me' }, {}, query);
      expect(run.status).toBe(200);
      expectDescribed(doc, 'POST', '/v1/decisions/typed', run);
    }
    const contract = await call('GET', '/v1/decisions/typed', { token: ws.apiKey });
    expectDescribed(doc, 'GET', '/v1/decisions/typed', contract);
    // The typed schema is strict: an answer outside the decision's options is refused.
    const run = await runDecision(ws, 'typed', { message: 'again' });
    const forged = { ...run.body, result: { ...run.body.result, intent: 'upgrade' } };
    expect(checkAgainstSchema(defined(doc.components.schemas.RunResponse), forged, doc).length).toBeGreaterThan(0);
  });

  it('refuses a missing key, an unknown or malformed slug and a decision never deployed', async () => {
    const path = '/v1/decisions/{slug}/openapi.json';
    const cases: Array<[Reply, number, string]> = [
      [await call('GET', '/v1/decisions/typed/openapi.json'), 401, 'INVALID_API_KEY'],
      [await call('GET', '/v1/decisions/unknown/openapi.json', { token: ws.apiKey }), 404, 'DECISION_NOT_FOUND'],
      [await call('GET', '/v1/decisions/Not_A_Slug/openapi.json', { token: ws.apiKey }), 404, 'DECISION_NOT_FOUND'],
    ];
    await createDecision(ws, 'draft-only', triageSchema());
    cases.push([await call('GET', '/v1/decisions/draft-only/openapi.json', { token: ws.apiKey }), 409, 'DECISION_NOT_DEPLOYED']);
    const other = await newWorkspace();
    cases.push([await call('GET', '/v1/decisions/typed/openapi.json', { token: other.apiKey }), 404, 'DECISION_NOT_FOUND']);
    for (const [reply, status, code] of cases) {
      expectError(reply, status, code);
      expectDescribed(document, 'GET', path, reply);
    }
  });

  it('generates a typed client from the document that runs the real decision', async () => {
    const client = typeScriptClient(narrowed.body);
    // The program a user of the generated client would write: it type-checks against the decision's own types.
    const usage = `
      import { createClient, type RunResponse } from './client';
      export async function run(baseUrl: string, token: string): Promise<RunResponse> {
        const api = createClient({ baseUrl, token });
        const answer = await api.runDecision({ body: { state: { message: 'Broken on arrival, refund me', amount: 20 } } });
        if ('intent' in answer.result) {
          const intent: 'refund' | 'exchange' | 'other' = answer.result.intent;
          const urgency: 'calm' | 'annoyed' | 'furious' = answer.result.urgency;
          const fraud: number = answer.result.fraud;
          void [intent, urgency, fraud];
        }
        return answer;
      }`;
    const dir = mkdtempSync(join(tmpdir(), 'generated-client-'));
    try {
      writeFileSync(join(dir, 'client.ts'), client);
      writeFileSync(join(dir, 'usage.ts'), usage);
      const options = {
        strict: true,
        skipLibCheck: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.CommonJS,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: [],
        outDir: dir,
      };
      const program = ts.createProgram([join(dir, 'usage.ts')], options);
      expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '))).toEqual([]);
      expect(program.emit().emitSkipped).toBe(false);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const generated = require(join(dir, 'usage.js')) as { run(baseUrl: string, token: string): Promise<any> };
      const answer = await generated.run(process.env.E2E_BASE_URL!, ws.apiKey);
      expect(answer.schema).toBe('typed');
      expect(checkAgainstSchema(defined(narrowed.body.components.schemas.RunResponse), answer, narrowed.body, { closedObjects: true })).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

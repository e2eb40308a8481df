import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { ERROR_STATUS } from '@ds/contracts';
import { baseUrl, call, deployedDecision, newWorkspace, opsPort, signUp, triageSchema, Workspace } from './support/api';

/**
 * Property-based fuzzing of the whole HTTP edge: generated methods, paths, query strings, headers and bodies
 * thrown at every route the gateway lists on its ops port (so a new route is fuzzed without anyone adding it),
 * with and without valid credentials. Whatever arrives, the answer is never a 5xx, never carries a stack
 * trace, and every error is the one error shape with the request id of its X-Request-ID header.
 *
 * The seed is fixed so a failure is reproducible; fast-check prints it with the shrunk counterexample.
 */
const SEED = 20_261_123;
const RUNS_WITHOUT_CREDENTIALS = 200;
const RUNS_WITH_CREDENTIALS = 250;
const SLUG = 'fuzz-triage';

interface RouteEntry {
  method: string;
  url: string;
  access: { kind: 'public' | 'application-entry' | 'session' | 'embed' | 'api-key' | 'operator' | 'hook' };
}

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Uint8Array | null;
}

let routes: RouteEntry[];
let ws: Workspace;
let spareSession: string;
/** A live secret URL of the decision, without a secret, so that generated bodies reach its handler. */
let hookToken: string;

/**
 * Node's client sends the path exactly as given (no resolution of `..`, no re-encoding), unlike fetch, whose
 * URL parser would normalise the very spellings being tried. One connection per request: a reply that closes
 * its connection must not take the next request down with it.
 */
function send(request: FuzzRequest): Promise<RawReply> {
  const url = new URL(baseUrl());
  return new Promise((resolveReply, reject) => {
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers: request.headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolveReply({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body ?? undefined);
  });
}

const STACK_TRACE = /\bat .+\.(js|ts):\d+|node_modules|\/dist\/|\.ts:\d+/;
const INTERNAL_SUBJECT = /v1\.(gateway|decision-runner|engine-proxy|billing-ledger|delivery|partner)\./;

function describeRequest(request: FuzzRequest): string {
  const body = request.body === null ? '' : typeof request.body === 'string' ? request.body.slice(0, 300) : `<${request.body.length} bytes>`;
  return `${request.method} ${request.path}\n${JSON.stringify(request.headers)}\n${body}`;
}

/** The properties every answer must have, whatever was sent. */
function checkReply(request: FuzzRequest, reply: RawReply): void {
  const context = `${describeRequest(request)}\n-> ${reply.status} ${reply.text.slice(0, 500)}`;
  if (reply.status >= 500) throw new Error(`5xx answer:\n${context}`);
  if (STACK_TRACE.test(reply.text) || INTERNAL_SUBJECT.test(reply.text)) throw new Error(`internals in the answer:\n${context}`);
  const requestId = reply.headers['x-request-id'];
  if (typeof requestId !== 'string' || requestId.length === 0) throw new Error(`no X-Request-ID:\n${context}`);
  if (reply.status < 400 || request.method === 'HEAD') return;
  // The embed launch (and /embed/ended) shows a page inside the partner's iframe, never an error body (docs/partner.md).
  if (reply.status === 410 && String(reply.headers['content-type']).startsWith('text/html') && reply.text.includes('Reopen the editor from your app')) return;
  let body: any;
  try {
    body = JSON.parse(reply.text);
  } catch {
    throw new Error(`an error that is not JSON:\n${context}`);
  }
  // The tool server's transport refusals (405, 406, a batch) are JSON-RPC errors, as the spec's MCP table has them.
  if (isMcpTransportRefusal(request, reply, body)) return;
  const error = body?.error;
  const shapeProblems = [
    Object.keys(body ?? {}).join(',') !== 'error' && 'the body has more than `error`',
    typeof error?.code !== 'string' && 'no code',
    typeof error?.message !== 'string' && 'no message',
    error?.request_id !== requestId && 'request_id is not the X-Request-ID header',
    Object.keys(error ?? {}).some((key) => !['code', 'message', 'request_id', 'details'].includes(key)) && 'unknown fields in error',
    (ERROR_STATUS as Record<string, number>)[error?.code] !== reply.status && `status ${reply.status} is not the status of ${error?.code}`,
  ].filter(Boolean);
  if (shapeProblems.length > 0) throw new Error(`not the one error shape (${shapeProblems.join('; ')}):\n${context}`);
}

function isMcpTransportRefusal(request: FuzzRequest, reply: RawReply, body: any): boolean {
  return (
    // The router matches the decoded path, so `/%6Dcp` reaches the tool server as `/mcp` does.
    decodedPathname(request.path) === '/mcp' &&
    [400, 405, 406].includes(reply.status) &&
    body?.jsonrpc === '2.0' &&
    typeof body?.error?.code === 'number' &&
    typeof body?.error?.message === 'string'
  );
}

function decodedPathname(path: string): string | null {
  try {
    return decodeURIComponent(new URL(path, 'http://x').pathname);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Generators

const hexByte = (byte: number) => `%${byte.toString(16).padStart(2, '0')}`;

/** Any bytes, percent-encoded: includes %00, invalid UTF-8 and the UTF-8 bytes of surrogates (%ED%A0%80). */
const encodedBytes = fc.uint8Array({ maxLength: 12 }).map((bytes) => [...bytes].map(hexByte).join(''));

/** Well-formed Unicode text, percent-encoded as UTF-8. */
const encodedText = fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent);

/** Characters a raw request line may carry without encoding. */
const rawSegmentText = fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@-]{0,16}$/);

const hostileSegment = fc.oneof(
  rawSegmentText,
  encodedBytes,
  encodedText,
  fc.constantFrom('..', '.', '%2e%2e', '%2E', '%2f', '%2F', '%5c', '%00', '%ED%A0%80', '%C0%AF', '%', '%zz', '%e0%a4%a', '__proto__', 'constructor', ''),
  fc.integer({ min: 1, max: 3000 }).map((length) => 'a'.repeat(length)),
);

/** One spelling of a value the router may decode and a handler may receive. */
function paramValue(name: string): fc.Arbitrary<string> {
  const real = name === 'ws' ? ws.workspaceId : name === 'slug' ? SLUG : name === 'token' ? hookToken : null;
  return real === null ? hostileSegment : fc.oneof({ weight: 4, arbitrary: fc.constant(real) }, { weight: 1, arbitrary: hostileSegment });
}

/** The route's template filled with generated parameters, then perhaps spelled oddly. */
function pathFor(route: RouteEntry): fc.Arbitrary<string> {
  const segments = route.url.split('/').slice(1);
  const filled = fc.tuple(...segments.map((segment) => (segment.startsWith(':') ? paramValue(segment.slice(1)) : fc.constant(segment))));
  const spelling = fc.oneof(
    { weight: 6, arbitrary: fc.constant('plain') },
    { weight: 4, arbitrary: fc.constantFrom('trailing-slash', 'double-slash', 'dot-segment', 'dot-dot', 'encoded-letter', 'extra-segment') },
  );
  return fc.tuple(filled, spelling, fc.nat(), hostileSegment).map(([parts, how, pick, extra]) => {
    const at = parts.length === 0 ? 0 : pick % parts.length;
    const letterEncoded = parts.map((part, i) => (i === at && /^[a-z]/.test(part) ? `${hexByte(part.charCodeAt(0))}${part.slice(1)}` : part));
    switch (how) {
      case 'trailing-slash':
        return `/${parts.join('/')}/`;
      case 'double-slash':
        return `/${parts.join('//')}`;
      case 'dot-segment':
        return `/${[...parts.slice(0, at), '.', ...parts.slice(at)].join('/')}`;
      case 'dot-dot':
        return `/${[...parts.slice(0, at), extra || 'x', '..', ...parts.slice(at)].join('/')}`;
      case 'encoded-letter':
        return `/${letterEncoded.join('/')}`;
      case 'extra-segment':
        return `/${[...parts, extra].join('/')}`;
      default:
        return `/${parts.join('/')}`;
    }
  });
}

const queryKey = fc.oneof(
  fc.constantFrom('limit', 'cursor', 'decision', 'status', 'include', 'next', '__proto__', 'constructor', 'toString', 'limit[]', 'a[b]'),
  rawSegmentText,
  encodedBytes,
);
const queryValue = fc.oneof(
  fc.constantFrom('1', '0', '-1', '100', '101', '1e3', 'NaN', 'success', 'error', 'probabilities', 'true', ''),
  rawSegmentText,
  encodedBytes,
  encodedText,
);
const queryString = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: fc.array(fc.tuple(queryKey, queryValue), { maxLength: 5 }).map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`) },
  { weight: 1, arbitrary: fc.constantFrom('?', '??', '?&&', '?=', '?a', '?a=1&a=2&a=3', '?%', '?limit=%00', '?decision=%ED%A0%80') },
);

/** Printable ASCII: what Node's client (and any HTTP/1.1 client) lets through in a header value. */
const headerText = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);

const contentType = fc.oneof(
  { weight: 3, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'Application/JSON',
      'application/json, text/plain',
      'application/problem+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      '*/*',
      ';',
      '',
    ),
  },
);

/** Strings a handler may choke on: wrong types in JSON's clothing, hostile text, sizes at the limits. */
const hostileString = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    'a\udfffb',
    '😀',
    '__proto__',
    'constructor',
    'genesis',
    'enterprise',
    'live',
    'test',
    'owner',
    'admin',
    'x'.repeat(5000),
  ),
);

const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e308, -0, 2 ** 53 + 1)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        hostileString,
        fc.constantFrom('state', 'name', 'schema', 'slug', 'email', 'password', 'mode', 'plan', 'overrides', 'amount_cents', 'role', 'constructor', 'toString'),
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

/** Bodies that look like what a route expects, with one part generated. */
const plausibleBody = fc.oneof(
  hostileJson.map((state) => ({ state })),
  fc.record({ message: hostileString, extra: hostileJson }, { requiredKeys: ['message'] }).map((state) => ({ state })),
  fc.record({ name: hostileJson, mode: hostileJson }, { requiredKeys: [] }),
  fc.record({ email: hostileJson, password: hostileJson, name: hostileJson }, { requiredKeys: [] }),
  fc.record({ plan: hostileJson, overrides: hostileJson }, { requiredKeys: [] }),
  fc.record({ slug: hostileJson, name: hostileJson, schema: hostileJson }, { requiredKeys: [] }),
  fc.constant({ state: { message: 'My order arrived broken' } }),
);

function nestedText(levels: number): string {
  return '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

const bodyText: fc.Arbitrary<string | Uint8Array | null> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 6, arbitrary: plausibleBody.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: hostileJson.map((value) => JSON.stringify(value) ?? 'null') },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      '{',
      '{"state":',
      '[]',
      '"x"',
      '\ufeff{"state":{}}',
      '{"__proto__":{"admin":true}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"state":"\\ud800"}',
      '{"state":{"message":"\\u0000"}}',
      nestedText(65),
      nestedText(2000),
      '[' + '1,'.repeat(20_000) + '1]',
    ),
  },
);

function headersArbitrary(tokens: fc.Arbitrary<string | null>): fc.Arbitrary<Record<string, string>> {
  return fc
    .record(
      {
        authorization: tokens,
        contentType,
        idempotencyKey: fc.oneof(
          { weight: 4, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{1,20}$/) },
          { weight: 1, arbitrary: headerText },
        ),
        requestId: fc.oneof(fc.constant(null), headerText, fc.constantFrom('req_fuzz', 'a'.repeat(128), 'a'.repeat(129))),
        extraName: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
        extraValue: headerText,
      },
      { requiredKeys: ['authorization', 'contentType', 'idempotencyKey', 'requestId'] },
    )
    .map(({ authorization, contentType: type, idempotencyKey, requestId, extraName, extraValue }) => {
      const headers: Record<string, string> = {};
      if (extraName !== undefined && extraValue !== undefined && !['host', 'content-length', 'transfer-encoding', 'connection'].includes(extraName)) {
        headers[extraName] = extraValue;
      }
      if (authorization !== null) headers.authorization = authorization;
      if (type !== '') headers['content-type'] = type;
      if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
      if (requestId !== null) headers['x-request-id'] = requestId;
      return headers;
    });
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

function requestArbitrary(tokens: (route: RouteEntry) => fc.Arbitrary<string | null>): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...routes).chain((route) =>
    fc
      .record({
        method: fc.oneof({ weight: 5, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        path: pathFor(route),
        query: queryString,
        headers: headersArbitrary(tokens(route)),
        body: bodyText,
      })
      .map(({ method, path, query, headers, body }) => ({
        method,
        path: `${path}${query}`,
        headers,
        body: method === 'GET' || method === 'HEAD' ? null : body,
      })),
  );
}

const garbageToken = fc.oneof(
  fc.constant(null),
  headerText,
  fc.constantFrom('Bearer', 'Bearer ', 'Basic YWRtaW46YWRtaW4=', `Bearer svc_live_${'Z'.repeat(32)}`, 'Bearer ses_unknown', 'bearer x y'),
  headerText.map((text) => `Bearer ${text}`),
);

async function expectStillHealthy(): Promise<void> {
  const health = await call('GET', '/health');
  expect({ status: health.status, body: health.body }).toEqual({ status: 200, body: { status: 'ok' } });
  const ready = await fetch(`http://127.0.0.1:${opsPort(0)}/readyz`);
  expect(ready.status).toBe(200);
}

beforeAll(async () => {
  const table = await fetch(`http://127.0.0.1:${opsPort(0)}/routes`);
  expect(table.status).toBe(200);
  routes = ((await table.json()) as { routes: RouteEntry[] }).routes;
  ws = await newWorkspace();
  const decisionId = await deployedDecision(ws, SLUG, triageSchema());
  const hook = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/hook`, { token: ws.session });
  expect(hook.status).toBe(201);
  hookToken = hook.body.token;
  // The enterprise window, so that the generated requests reach handlers instead of a used-up window.
  const plan = await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'enterprise' } });
  expect(plan.status).toBe(200);
  // Sign-out is among the routes: it gets a session of its own, so the workspace's session stays valid.
  spareSession = (await signUp()).session;
});

describe('fuzzing every route of the gateway', () => {
  it('lists routes of every kind of access to fuzz', () => {
    expect(new Set(routes.map((route) => route.access.kind))).toEqual(
      new Set(['public', 'application-entry', 'session', 'embed', 'api-key', 'operator', 'hook']),
    );
  });

  it('without valid credentials: never a 5xx, never internals, always the one error shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        requestArbitrary(() => garbageToken),
        async (request) => checkReply(request, await send(request)),
      ),
      { seed: SEED, numRuns: RUNS_WITHOUT_CREDENTIALS },
    );
    await expectStillHealthy();
  });

  it('with the credential each route needs, so bodies reach the handlers: the same', async () => {
    const validFor = (route: RouteEntry): string | null => {
      switch (route.access.kind) {
        case 'api-key':
          return `Bearer ${ws.apiKey}`;
        case 'session':
          return `Bearer ${ws.session}`;
        case 'operator':
          return `Bearer ${process.env.E2E_ADMIN_TOKEN}`;
        case 'application-entry':
          return `Bearer ${spareSession}`;
        case 'public':
        case 'embed':
        case 'hook':
          // A secret URL's credential is the token in its path.
          return null;
      }
    };
    const tokens = (route: RouteEntry) => fc.oneof({ weight: 6, arbitrary: fc.constant(validFor(route)) }, { weight: 1, arbitrary: garbageToken });
    await fc.assert(
      fc.asyncProperty(requestArbitrary(tokens), async (request) => checkReply(request, await send(request))),
      { seed: SEED + 1, numRuns: RUNS_WITH_CREDENTIALS },
    );
    await expectStillHealthy();
  });
});

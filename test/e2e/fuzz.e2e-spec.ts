import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { ERROR_STATUS } from '@ds/contracts';
import { baseUrl, call, deployedDecision, endFitRest, newWorkspace, opsPort, runDecision, signUp, triageSchema, uniqueMarker, Workspace } from './support/api';
import { eventually, Receiver, startReceiver } from './support/deliveries';

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
const SUB_WORKSPACE = 'fuzz-sub';

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
let decisionId: string;
let spareUserId: string;

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
/** The bus between the services, its limit, the database and its mapper: components no error names. */
const INTERNAL_COMPONENT = /\bNATS\b|max_payload|1048576|PostgreSQL|TypeORM|QueryFailedError/;
/** An error lists at most this many issues in `details`, whatever the input (docs/security.md, "Small errors"). */
const ERROR_ISSUES_MAX = 50;

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
  if (INTERNAL_COMPONENT.test(reply.text)) throw new Error(`an internal component named in the error:\n${context}`);
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
    Array.isArray(error?.details) && error.details.length > ERROR_ISSUES_MAX && `more than ${ERROR_ISSUES_MAX} issues in details`,
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

/** Whole numbers at and past the columns' ranges (int4, JavaScript's exact integers, int8) and floats past any. */
const EXTREME_NUMBERS = [
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  -(2 ** 63),
  2 ** 64,
  1e300,
  -1e300,
  1e-300,
  1.5,
];
/** The same as query text, with spellings JSON cannot carry. */
const EXTREME_NUMBER_TEXTS = [
  ...EXTREME_NUMBERS.map(String),
  '9223372036854775807',
  '9223372036854775808',
  '99999999999999999999999',
  '1e300',
  '-0',
  '0x10',
  'Infinity',
];
/** Dates at JavaScript's limits (±8.64e15 ms), past PostgreSQL's (4713 BC to 294276 AD) and at ISO's four-digit years. */
const EXTREME_DATES = [
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '+275760-09-13T00:00:00.001Z',
  '+294277-01-01T00:00:00.000Z',
  '-004714-11-23T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
  '+010000-01-01T00:00:00.000Z',
  '2026-02-31T00:00:00Z',
];
/** Days that do not exist, as a body's date. */
const NOT_QUITE_DATES_FOR_BODIES = ['2026-02-30', '2026-04-31', '2026-13-01', '2026-05-01T24:00:00Z'];
const base64url = (text: string) => Buffer.from(text).toString('base64url');
const SOME_UUID = '00000000-0000-4000-8000-000000000000';
/** Cursors in every form the services issue, holding numbers and dates past their columns. */
const FORGED_CURSORS = [
  base64url('e:9999999999999999999'),
  base64url('e:9223372036854775808'),
  base64url('e:9223372036854775807'),
  base64url('d9999999999999999999'),
  base64url('d9223372036854775808'),
  ...EXTREME_DATES.map((date) => base64url(JSON.stringify([date, SOME_UUID]))),
  base64url(JSON.stringify([1e300, SOME_UUID])),
];

/** Fields of the routes' bodies that hold numbers or dates, top level or under `limits` and `overrides`. */
const OVERRIDES = ['included_decisions', 'max_decisions', 'price_per_million_cents', 'rate_limit_per_minute'];
const NUMERIC_FIELDS = ['amount_cents', 'spend_cap_cents', 'days', 'revision', 'version', 'ttl_seconds', 'limit', 'expires_at'];

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
  fc.constantFrom(
    'limit',
    'cursor',
    'decision',
    'status',
    'include',
    'next',
    'version',
    'from',
    'to',
    '__proto__',
    'constructor',
    'toString',
    'limit[]',
    'a[b]',
  ),
  rawSegmentText,
  encodedBytes,
);
const queryValue = fc.oneof(
  fc.constantFrom('1', '0', '-1', '01', '100', '101', '1e3', 'NaN', 'success', 'error', 'probabilities', 'true', '', '2026-02-30', '2024-02-29'),
  fc.constantFrom(...EXTREME_NUMBER_TEXTS, ...FORGED_CURSORS, ...EXTREME_DATES.map(encodeURIComponent)),
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
    fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e308, -0, 2 ** 53 + 1), fc.constantFrom(...EXTREME_NUMBERS)),
    fc.constantFrom(...EXTREME_DATES),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        hostileString,
        fc.constantFrom('state', 'name', 'schema', 'slug', 'email', 'password', 'mode', 'plan', 'overrides', 'amount_cents', 'role', 'constructor', 'toString'),
        fc.constantFrom(...NUMERIC_FIELDS),
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
  fc.record({ plan: fc.constant('enterprise'), overrides: fc.dictionary(fc.constantFrom(...OVERRIDES), fc.constantFrom(...EXTREME_NUMBERS)) }),
  fc.record({ limits: fc.dictionary(fc.constantFrom('max_decisions', 'monthly_decisions'), fc.constantFrom(...EXTREME_NUMBERS)) }),
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
  decisionId = await deployedDecision(ws, SLUG, triageSchema());
  const hook = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/hook`, { token: ws.session });
  expect(hook.status).toBe(201);
  hookToken = hook.body.token;
  // The enterprise window, so that the generated requests reach handlers instead of a used-up window.
  const plan = await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'enterprise' } });
  expect(plan.status).toBe(200);
  // Sign-out is among the routes: it gets a session of its own, so the workspace's session stays valid.
  const spare = await signUp();
  spareSession = spare.session;
  spareUserId = spare.userId;
  // Partner mode and one sub-workspace, so that the sub-workspace routes read their bodies rather than refuse.
  const partner = await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/partner`, {
    token: process.env.E2E_ADMIN_TOKEN,
    body: { enabled: true, allowed_origins: ['https://partner.example'] },
  });
  expect(partner.status).toBe(200);
  const sub = await call('POST', '/v1/workspaces', { token: ws.apiKey, body: { external_id: SUB_WORKSPACE, name: 'fuzz sub-workspace' } });
  expect(sub.status).toBe(201);
});

/** The credential each route needs, so that generated input reaches its handler. */
function validFor(route: RouteEntry): string | null {
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
}

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
    const tokens = (route: RouteEntry) => fc.oneof({ weight: 6, arbitrary: fc.constant(validFor(route)) }, { weight: 1, arbitrary: garbageToken });
    await fc.assert(
      fc.asyncProperty(requestArbitrary(tokens), async (request) => checkReply(request, await send(request))),
      { seed: SEED + 1, numRuns: RUNS_WITH_CREDENTIALS },
    );
    await expectStillHealthy();
  });
});

/**
 * The routes behind the workspace's limits and the roles' rule, reached with real ids (a live execution, a
 * delivery, a replay and the decision) and valid credentials, so that generated bodies and queries meet their
 * handlers rather than a 404: fits, outcomes, replays and their cancel, a delivery and its resend.
 */
const LIMITED_ROUTES = [
  'POST /app/v1/workspaces/:ws/decisions/:id/calibration',
  'POST /v1/executions/:id/outcome',
  'PUT /app/v1/workspaces/:ws/executions/:id/outcome',
  'POST /app/v1/workspaces/:ws/decisions/:id/replays',
  'POST /app/v1/workspaces/:ws/decisions/:id/replays/:replay/cancel',
  'GET /app/v1/workspaces/:ws/deliveries/:id',
  'POST /app/v1/workspaces/:ws/deliveries/:id/resend',
];
const RUNS_ON_LIMITED_ROUTES = 150;

/** Bodies these routes read, each with a generated part. */
const limitedRouteBody = fc.oneof(
  fc.record({ version: hostileJson }, { requiredKeys: [] }),
  fc.record({ version: fc.constantFrom(1, '1', '01', 0, null, ...EXTREME_NUMBERS) }),
  fc.record({ answers: hostileJson, action: hostileJson }, { requiredKeys: [] }),
  fc.record({ answers: fc.dictionary(hostileString, hostileJson, { maxKeys: 80 }) }),
  fc.record({ version: hostileJson, last: hostileJson, from: hostileJson, to: hostileJson }, { requiredKeys: [] }),
  fc.record({ version: fc.constantFrom(1, null), last: fc.constantFrom(1, 0, -1, 1e9, ...EXTREME_NUMBERS) }),
  fc.record({
    version: fc.constantFrom(1, null),
    from: fc.constantFrom(...EXTREME_DATES, ...NOT_QUITE_DATES_FOR_BODIES),
    to: fc.constantFrom(...EXTREME_DATES),
  }),
  // Valid ones too, so that outcomes are recorded and replays started while the rest is thrown at them.
  fc.constantFrom({ answers: { intent: 'refund' }, action: 'continue' }, { version: null, last: 1 }, { version: 1 }),
);

/** Not left to chance: bodies each of these routes is sure to meet, with valid credentials. */
const FIXED_LIMITED_BODIES = [
  ...['1', '01', 1.5, 2 ** 31, -1, 0, null, [1], {}, true].map((version) => JSON.stringify({ version })),
  JSON.stringify({ answers: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`unknown_${i}`, i])) }),
  JSON.stringify({ answers: 'refund', action: 5 }),
  JSON.stringify({ answers: { intent: 'x'.repeat(5000) } }),
  ...[0, -1, 2 ** 53, '1'].map((last) => JSON.stringify({ version: null, last })),
  JSON.stringify({ version: null, from: '2026-02-30', to: '2026-03-01' }),
  JSON.stringify({ version: '1', last: 1 }),
  '',
  '{',
  '[]',
  'null',
];

describe('the routes of the limits and roles, with real ids', () => {
  let receiver: Receiver;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await startReceiver((_request, _index, response) => response.writeHead(410).end('gone'));
    const destinations = [{ key: 'crm', type: 'webhook', url: receiver.url }];
    ids.decision = await deployedDecision(ws, 'fuzz-limited', triageSchema(uniqueMarker(), { destinations, settings: { storeInput: true } }));
    const run = await runDecision(ws, 'fuzz-limited', { message: 'a live run with a delivery, its input kept' });
    expect(run.status).toBe(200);
    ids.execution = run.body.execution_id;
    ids.delivery = run.body.destinations[0].delivery_id;
    await eventually(
      async () => (await call('GET', `/app/v1/workspaces/${ws.workspaceId}/deliveries/${ids.delivery}`, { token: ws.session })).body.status === 'failed',
      20_000,
      'the delivery to fail',
    );
    const replay = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${ids.decision}/replays`, {
      token: ws.session,
      body: { version: null, last: 1 },
    });
    expect(replay.status).toBe(201);
    ids.replay = replay.body.id;
  });

  afterAll(async () => {
    await receiver?.close();
  });

  function realPath(route: RouteEntry): string {
    const values: Record<string, string> = {
      ws: ws.workspaceId,
      id: route.url.includes('/executions/') ? ids.execution! : route.url.includes('/deliveries/') ? ids.delivery! : ids.decision!,
      replay: ids.replay!,
    };
    return route.url.replace(/:([A-Za-z]+)/g, (_, name: string) => values[name]!);
  }

  it('are all in the live route table', () => {
    const live = new Set(routes.map(routeKey));
    expect(LIMITED_ROUTES.filter((key) => !live.has(key))).toEqual([]);
  });

  it('with generated bodies and queries, and a fixed list of hostile ones: never a 5xx, never internals, the one error shape, at most 50 issues', async () => {
    const limited = routes.filter((route) => LIMITED_ROUTES.includes(routeKey(route)));
    const tokens = (route: RouteEntry) => fc.oneof({ weight: 8, arbitrary: fc.constant(validFor(route)) }, { weight: 1, arbitrary: garbageToken });
    const body = fc.oneof({ weight: 4, arbitrary: limitedRouteBody.map((value) => JSON.stringify(value)) }, { weight: 1, arbitrary: bodyText });
    const request = fc.constantFrom(...limited).chain((route) =>
      fc.record({ query: queryString, headers: headersArbitrary(tokens(route)), body }).map(({ query, headers, body: text }): FuzzRequest => ({
        method: route.method,
        path: `${realPath(route)}${query}`,
        headers,
        body: route.method === 'GET' ? null : text,
      })),
    );
    const keyOfPath = new Map(limited.map((route) => [`${route.method} ${realPath(route)}`, routeKey(route)]));
    const reached = new Set<string>();
    await fc.assert(
      fc.asyncProperty(request, async (generated) => {
        const reply = await send(generated);
        checkReply(generated, reply);
        // Past the credential check: the handler (or the service behind it) answered.
        if (reply.status !== 401 && reply.status !== 403) reached.add(keyOfPath.get(`${generated.method} ${generated.path.split('?')[0]}`)!);
      }),
      { seed: SEED + 2, numRuns: RUNS_ON_LIMITED_ROUTES },
    );
    expect([...reached].sort()).toEqual([...LIMITED_ROUTES].sort());
    await expectStillHealthy();
    await sendAll(
      limited.flatMap((route) =>
        FIXED_LIMITED_BODIES.map((text) => ({
          method: route.method,
          path: `${realPath(route)}?version=01&from=2026-02-30`,
          headers: { authorization: validFor(route)!, 'content-type': 'application/json', 'x-request-id': 'fuzz-limited' },
          body: route.method === 'GET' ? null : text,
        })),
      ),
    );
    // No generated fit kept the workspace's turn: once the rest after the last one has passed, the next fit runs.
    await endFitRest(ws.workspaceId);
    const fit = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${ids.decision}/calibration`, { token: ws.session, body: { version: 1 } });
    expect({ status: fit.status, code: fit.body?.error?.code ?? null }).toEqual({ status: 200, code: null });
  }, 240_000);
});

/**
 * Not left to chance: every cursor and limit of every route that reads, and every numeric or date field of every
 * route that writes, at and past the ranges of the columns they land in. Each field is tried alone, on a body
 * otherwise valid, so that no other field's refusal hides what the value does further in.
 */
interface BodyFields {
  /** The rest of a valid body. */
  base: Record<string, unknown>;
  /** Dotted paths into the body. */
  fields: string[];
  headers?: Record<string, string>;
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const BODY_FIELDS: Record<string, BodyFields> = {
  'PUT /admin/v1/workspaces/:ws/plan': { base: { plan: 'enterprise' }, fields: OVERRIDES.map((name) => `overrides.${name}`) },
  'POST /admin/v1/workspaces/:ws/credits': { base: { kind: 'promotional', amount_cents: 100, currency: 'usd' }, fields: ['amount_cents', 'expires_at'] },
  'PUT /admin/v1/workspaces/:ws/spend-cap': { base: {}, fields: ['spend_cap_cents'] },
  'PUT /app/v1/workspaces/:ws/execution-retention': { base: {}, fields: ['days'] },
  'POST /v1/workspaces': { base: { external_id: 'fuzz-extreme', name: 'fuzz' }, fields: ['limits.max_decisions', 'limits.monthly_decisions'] },
  'PATCH /v1/workspaces/:ref': { base: {}, fields: ['limits.max_decisions', 'limits.monthly_decisions'] },
  'POST /v1/embed/sessions': {
    base: { workspace: `ext:${SUB_WORKSPACE}`, user: { id: 'fuzz-user' } },
    fields: ['ttl_seconds', 'workspace.limits.max_decisions', 'workspace.limits.monthly_decisions'],
  },
  'PUT /app/v1/workspaces/:ws/decisions/:id/draft': { base: { schema: triageSchema() }, fields: ['revision'] },
  'POST /app/v1/workspaces/:ws/decisions/:id/playground': { base: { state: { message: 'x' } }, fields: ['version'] },
  'POST /mcp': {
    base: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_executions', arguments: {} } },
    fields: ['params.arguments.limit', 'params.arguments.cursor'],
    headers: MCP_HEADERS,
  },
};

/** The reading routes whose query names a date or a version, with the other parameters a request needs. */
const DATE_AND_VERSION_PARAMETERS: Record<string, { base: Record<string, string>; dates: string[]; versions: string[] }> = {
  'GET /app/v1/workspaces/:ws/decisions/:id/quality': { base: {}, dates: ['from', 'to'], versions: ['version'] },
  'GET /app/v1/workspaces/:ws/decisions/:id/overview': { base: {}, dates: ['from', 'to'], versions: [] },
  'GET /app/v1/workspaces/:ws/decisions/:id/versions/compare': { base: { from: '1', to: '1' }, dates: [], versions: ['from', 'to'] },
  'GET /app/v1/workspaces/:ws/decisions/:id/review': { base: {}, dates: [], versions: ['version'] },
};
/** Days and times that do not exist, and spellings of real ones that are not ISO 8601's. */
const NOT_QUITE_DATES = [
  '2026-02-30',
  '2026-02-29',
  '1900-02-29',
  '2026-04-31',
  '2026-13-01',
  '2026-00-10',
  '2026-05-01T24:00:00Z',
  '2026-05-01T12:60:00Z',
  '2026-05-01T12:00:60Z',
  '2026-05-01T12:00:00+24:00',
  '2026-05-01T12:00:00',
  '2026-05-01 12:00:00Z',
  '2026-05-01t12:00:00z',
  '2026-5-1',
  'May 1, 2026',
  '1714560000000',
  ...EXTREME_DATES.filter((date) => !date.startsWith('9999')),
];
/** Version numbers not in canonical digits, or past the integer column. */
const NOT_QUITE_VERSIONS = ['01', '00', '0', '-1', '+1', ' 1', '1 ', '1.0', '1e0', '0x1', '', '2147483648', '99999999999'];

function withField(base: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const body = structuredClone(base);
  const keys = path.split('.');
  let at: Record<string, unknown> = body;
  for (const key of keys.slice(0, -1)) {
    // `workspace` is a reference in the base; a path into it asks for the object form.
    if (typeof at[key] !== 'object' || at[key] === null) at[key] = key === 'workspace' ? { external_id: 'fuzz-embed', name: 'fuzz' } : {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys.at(-1)!] = value;
  return body;
}

function filledPath(route: RouteEntry): string {
  const values: Record<string, string> = {
    ws: ws.workspaceId,
    slug: SLUG,
    token: hookToken,
    id: decisionId,
    ref: `ext:${SUB_WORKSPACE}`,
    user: spareUserId,
    name: 'FUZZ_SECRET',
  };
  return route.url.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(values[name] ?? 'x'));
}

/** Sends requests a few at a time: enough to be quick, few enough to leave the shared machine its cores. */
async function sendAll(requests: FuzzRequest[]): Promise<void> {
  const failures: string[] = [];
  for (let i = 0; i < requests.length; i += 8) {
    await Promise.all(
      requests.slice(i, i + 8).map(async (request) => {
        try {
          checkReply(request, await send(request));
        } catch (error) {
          failures.push((error as Error).message);
        }
      }),
    );
  }
  expect(failures).toEqual([]);
}

const routeKey = (route: RouteEntry) => `${route.method} ${route.url}`;
/** Routes that end the credentials the rest of the run needs, or remove what it works in. */
const spared = (route: RouteEntry) => route.method === 'DELETE' || /sign-out|\/leave$|\/ownership$|\/rotate$/.test(route.url);

describe('numbers and dates past what the database holds', () => {
  it('names routes that all exist in the live route table', () => {
    const live = new Set(routes.map(routeKey));
    expect(Object.keys(BODY_FIELDS).filter((key) => !live.has(key))).toEqual([]);
  });

  it('every cursor and limit of every reading route: never a 5xx', async () => {
    const requests: FuzzRequest[] = [];
    for (const route of routes.filter((r) => r.method === 'GET')) {
      const token = validFor(route);
      const headers: Record<string, string> = { 'x-request-id': 'fuzz-extreme', ...(token ? { authorization: token } : {}) };
      const values = [...FORGED_CURSORS.map((cursor) => `cursor=${cursor}`), ...EXTREME_NUMBER_TEXTS.map((limit) => `limit=${encodeURIComponent(limit)}`)];
      for (const query of values) requests.push({ method: 'GET', path: `${filledPath(route)}?${query}`, headers, body: null });
    }
    await sendAll(requests);
    await expectStillHealthy();
  }, 240_000);

  it('every date and version parameter of the routes that read one, spelled not quite right: 400 naming it', async () => {
    const live = new Set(routes.map(routeKey));
    expect(Object.keys(DATE_AND_VERSION_PARAMETERS).filter((key) => !live.has(key))).toEqual([]);
    const failures: string[] = [];
    for (const [key, { base, dates, versions }] of Object.entries(DATE_AND_VERSION_PARAMETERS)) {
      const [method, url] = key.split(' ') as [string, string];
      const path = filledPath({ method, url, access: { kind: 'session' } });
      const spelled = [
        ...dates.flatMap((name) => NOT_QUITE_DATES.map((value) => [name, value] as const)),
        ...versions.flatMap((name) => NOT_QUITE_VERSIONS.map((value) => [name, value] as const)),
      ];
      for (const [name, value] of spelled) {
        const query = new URLSearchParams({ ...base, [name]: value });
        const reply = await call(method, `${path}?${query}`, { token: ws.session });
        const named = (reply.body?.error?.details ?? []).some((issue: { path: string }) => issue.path === name);
        if (reply.status !== 400 || reply.body?.error?.code !== 'INVALID_REQUEST' || !named)
          failures.push(`${key} ${name}=${value} -> ${reply.status} ${reply.text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('every numeric and date field of every writing route, each alone: never a 5xx, and runs still answer', async () => {
    const requests: FuzzRequest[] = [];
    const extremes: unknown[] = [...EXTREME_NUMBERS, ...EXTREME_DATES, ...FORGED_CURSORS.slice(0, 2)];
    for (const route of routes.filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method) && !spared(r))) {
      const token = validFor(route);
      const known = BODY_FIELDS[routeKey(route)];
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-request-id': 'fuzz-extreme',
        ...(token ? { authorization: token } : {}),
        ...(known?.headers ?? (route.url === '/mcp' ? MCP_HEADERS : {})),
      };
      const bodies = known
        ? known.fields.flatMap((field) => extremes.map((value) => withField(known.base, field, value)))
        : // Any other route: every field name at once, one extreme value at a time.
          extremes.map((value) =>
            Object.fromEntries([
              ...NUMERIC_FIELDS.map((field) => [field, value]),
              ['limits', { max_decisions: value, monthly_decisions: value }],
              ['overrides', Object.fromEntries(OVERRIDES.map((name) => [name, value]))],
            ]),
          );
      for (const body of bodies) requests.push({ method: route.method, path: filledPath(route), headers, body: JSON.stringify(body) });
    }
    await sendAll(requests);
    await expectStillHealthy();
    // Whatever the operator's plan now holds, a run of the workspace is answered.
    const run = await call('POST', `/v1/decisions/${SLUG}`, { token: ws.apiKey, body: { state: { message: 'after the extremes' } } });
    expect(run.status).toBeLessThan(500);
  }, 240_000);
});

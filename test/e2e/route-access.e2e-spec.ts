import { Client } from 'pg';
import {
  call,
  deployedDecision,
  endFitRest,
  expectError,
  newWorkspace,
  opsPort,
  Reply,
  roomyWorkspace,
  runDecision,
  signUp,
  triageSchema,
  uniqueMarker,
  Workspace,
} from './support/api';
import { GatewayProcess, startGateway, waitFor } from './support/cluster';
import { eventually, Receiver, startReceiver } from './support/deliveries';

/**
 * Every route the gateway registered, taken from its own route table (so a new route is covered without
 * anyone listing it), tried without the credential it needs, under hostile spellings of its path. A
 * spelling the router still matches must meet the route's own check; one it does not match is a 404.
 * Nothing may get through, and nothing may fail with a 5xx.
 */
interface RouteEntry {
  method: string;
  url: string;
  access: {
    kind: 'public' | 'application-entry' | 'session' | 'embed' | 'api-key' | 'operator' | 'hook';
    role?: string;
    window?: string;
    tokenParam?: string;
    embed?: string;
  };
}

interface Refusal {
  status: number;
  code: string;
}

interface Attempt {
  credential: string;
  token: string | null;
  refusal: Refusal;
}

let routes: RouteEntry[];
let owner: Workspace;
let outsiderSession: string;

async function routeTable(base = `http://127.0.0.1:${opsPort(0)}`): Promise<RouteEntry[]> {
  const reply = await fetch(`${base}/routes`);
  expect(reply.status).toBe(200);
  return ((await reply.json()) as { routes: RouteEntry[] }).routes;
}

beforeAll(async () => {
  routes = await routeTable();
  owner = await newWorkspace();
  outsiderSession = (await signUp()).session;
});

/** Fills a route template with values that would reach real data: the owner's real workspace. */
function concretePath(url: string): string {
  return url.replace(/:(\w+)/g, (_match, name: string) => {
    if (name === 'ws') return owner.workspaceId;
    if (name === 'slug') return 'support-triage';
    if (name === 'token') return `whk_${'Zz9'.repeat(10)}Zz`;
    return `dec_${'a1'.repeat(10)}`;
  });
}

const hex = (char: string) => char.charCodeAt(0).toString(16).padStart(2, '0');

/** Spellings of one path: `matches` says whether the router must still find the route behind it. */
function hostileVariants(path: string): Array<{ path: string; matches: boolean }> {
  const segments = path.split('/').slice(1);
  const join = (parts: string[]) => `/${parts.join('/')}`;
  const variants: Array<{ path: string; matches: boolean }> = [
    { path, matches: true },
    { path: `${path}?next=%2Fadmin&x=1`, matches: true },
    { path: `${path}/`, matches: false },
    { path: `/${path}`, matches: false },
    { path: path.replace(/\//g, '//'), matches: false },
    { path: `/.${path}`, matches: false },
    { path: `/x/..${path}`, matches: false },
    { path: `/${segments[0]}/./${segments.slice(1).join('/')}`, matches: false },
  ];
  segments.forEach((segment, index) => {
    if (!/^[A-Za-z]/.test(segment)) return;
    const encodeFirst = (upper: boolean) => {
      const code = hex(segment[0]!);
      return `%${upper ? code.toUpperCase() : code}${segment.slice(1)}`;
    };
    const everyChar = [...segment].map((char) => `%${hex(char).toUpperCase()}`).join('');
    for (const encoded of [encodeFirst(true), encodeFirst(false), everyChar]) {
      variants.push({ path: join(segments.map((part, i) => (i === index ? encoded : part))), matches: true });
    }
    if (index < segments.length - 1) {
      const glued = [...segments.slice(0, index), `${segment}%2F${segments[index + 1]}`, ...segments.slice(index + 2)];
      variants.push({ path: join(glued), matches: false });
      variants.push({ path: join(glued).replace('%2F', '%2f'), matches: false });
    }
  });
  return variants;
}

function attemptsFor(route: RouteEntry): Attempt[] {
  const invalidKey: Refusal = { status: 401, code: 'INVALID_API_KEY' };
  const signInFirst: Refusal = { status: 401, code: 'UNAUTHORIZED' };
  const forbidden: Refusal = { status: 403, code: 'FORBIDDEN' };
  switch (route.access.kind) {
    case 'api-key':
      return [
        { credential: 'nothing', token: null, refusal: invalidKey },
        { credential: 'a session', token: owner.session, refusal: invalidKey },
        { credential: 'an unknown key', token: `svc_live_${'Z'.repeat(32)}`, refusal: invalidKey },
      ];
    case 'session': {
      const attempts: Attempt[] = [
        { credential: 'nothing', token: null, refusal: signInFirst },
        { credential: 'an unknown session', token: 'ses_unknown', refusal: signInFirst },
        { credential: 'an API key', token: owner.apiKey, refusal: forbidden },
      ];
      if (route.access.role) attempts.push({ credential: "another user's session", token: outsiderSession, refusal: forbidden });
      return attempts;
    }
    case 'operator':
      return [
        { credential: 'nothing', token: null, refusal: signInFirst },
        { credential: 'a wrong token', token: 'not-the-operator-token-000', refusal: signInFirst },
        { credential: 'a session', token: owner.session, refusal: signInFirst },
        { credential: 'an API key', token: owner.apiKey, refusal: forbidden },
      ];
    case 'embed':
      return [
        { credential: 'nothing', token: null, refusal: signInFirst },
        { credential: 'a session', token: owner.session, refusal: signInFirst },
        { credential: 'an API key', token: owner.apiKey, refusal: forbidden },
      ];
    case 'application-entry':
      return [{ credential: 'an API key', token: owner.apiKey, refusal: forbidden }];
    case 'hook': {
      // The token in the path is the credential: an unknown one is not found, whatever else is sent.
      const notFound: Refusal = { status: 404, code: 'NOT_FOUND' };
      return [
        { credential: 'an unknown token', token: null, refusal: notFound },
        { credential: 'an unknown token and an API key', token: owner.apiKey, refusal: notFound },
        { credential: 'an unknown token and a session', token: owner.session, refusal: notFound },
      ];
    }
    case 'public':
      return [];
  }
}

/**
 * The walk sends well over a thousand wrong credentials. They come from an address of their own (the gateway
 * believes X-Forwarded-For from loopback), so that they count against it and never against the loopback address
 * every other test in the shared cluster calls from.
 */
const WALK_ADDRESS = '198.51.100.44';

async function send(method: string, path: string, token: string | null): Promise<Reply> {
  const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'DELETE';
  return call(method, path, {
    token,
    headers: { 'x-forwarded-for': WALK_ADDRESS },
    ...(hasBody ? { body: { plan: 'enterprise', name: 'intruder', mode: 'live' } } : {}),
  });
}

async function inBatches<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(work));
}

describe('the route table', () => {
  it('lists every kind of access, and every route declares one', () => {
    const kinds = new Set(routes.map((route) => route.access.kind));
    expect([...kinds].sort()).toEqual(['api-key', 'application-entry', 'embed', 'hook', 'operator', 'public', 'session']);
    expect(routes.find((route) => route.method === 'POST' && route.url === '/v1/hooks/:token')?.access).toEqual({ kind: 'hook', tokenParam: 'token' });
    expect(routes.find((route) => route.method === 'POST' && route.url === '/v1/decisions/:slug')?.access).toEqual({
      kind: 'api-key',
      window: 'decisions',
      slugParam: 'slug',
    });
    // Runs count in the decisions window and outcomes in a window of their own (they are writes); every other
    // key route is a read.
    const windowOf = (url: string) => (url === '/v1/executions/:id/outcome' ? 'outcomes' : 'reads');
    for (const route of routes.filter((candidate) => candidate.access.kind === 'api-key' && candidate.url !== '/v1/decisions/:slug')) {
      expect({ route: route.url, window: route.access.window }).toEqual({ route: route.url, window: windowOf(route.url) });
    }
    const retention = routes.filter((route) => route.url === '/app/v1/workspaces/:ws/execution-retention');
    expect(retention.map((route) => [route.method, route.access.kind, route.access.role]).sort()).toEqual([
      ['GET', 'session', 'viewer'],
      ['HEAD', 'session', 'viewer'],
      ['PUT', 'session', 'admin'],
    ]);
    for (const route of routes.filter((candidate) => candidate.url.includes(':ws') && candidate.url.startsWith('/app/'))) {
      expect({ route: `${route.method} ${route.url}`, role: typeof route.access.role }).toEqual({ route: `${route.method} ${route.url}`, role: 'string' });
    }
  });
});

describe('every route refuses a caller without its credential, however the path is spelled', () => {
  it('under the plain path and every hostile variant', async () => {
    const failures: string[] = [];
    const cases = routes.flatMap((route) =>
      attemptsFor(route).flatMap((attempt) => hostileVariants(concretePath(route.url)).map((variant) => ({ route, attempt, variant }))),
    );
    expect(cases.length).toBeGreaterThan(500);
    await inBatches(cases, 16, async ({ route, attempt, variant }) => {
      const reply = await send(route.method, variant.path, attempt.token);
      const code = route.method === 'HEAD' ? null : (reply.body?.error?.code ?? null);
      const expected = variant.matches ? [attempt.refusal] : [attempt.refusal, { status: 404, code: 'NOT_FOUND' }];
      const ok = expected.some((refusal) => refusal.status === reply.status && (code === null || refusal.code === code));
      if (!ok) failures.push(`${route.method} ${variant.path} with ${attempt.credential}: ${reply.status} ${reply.text.slice(0, 120)}`);
    });
    expect(failures).toEqual([]);
    // Hundreds of requests, more with every route added; a loaded machine needs more than the default minute.
  }, 180_000);

  it('refuses the two requests that once went through on an encoded prefix, and nothing changed', async () => {
    const plan = await call('PUT', `/%61dmin/v1/workspaces/${owner.workspaceId}/plan`, { body: { plan: 'enterprise' } });
    expectError(plan, 401, 'UNAUTHORIZED');
    const key = await call('POST', `/%61pp/v1/workspaces/${owner.workspaceId}/api-keys`, { body: { name: 'x', mode: 'live' } });
    expectError(key, 401, 'UNAUTHORIZED');

    const me = await call('GET', '/v1/me', { token: owner.apiKey });
    expect(me.body.plan.name).toBe('genesis');
    const keys = await call('GET', `/app/v1/workspaces/${owner.workspaceId}/api-keys`, { token: owner.session });
    expect(keys.body.data).toHaveLength(1);
  });

  it('lets the right credential through the same encoded spelling', async () => {
    const keys = await call('GET', `/%61pp/v1/workspaces/${owner.workspaceId}/%61pi-keys`, { token: owner.session });
    expect(keys.status).toBe(200);
    const me = await call('GET', '/%761/me', { token: owner.apiKey });
    expect(me.status).toBe(200);
    expect(me.body.workspace.id).toBe(owner.workspaceId);
  });
});

describe('without ADMIN_TOKEN', () => {
  let gateway: GatewayProcess;

  beforeAll(async () => {
    gateway = await startGateway(undefined, { ADMIN_TOKEN: undefined });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('registers no operator route at all', async () => {
    const table = await routeTable(gateway.opsUrl);
    expect(table.length).toBeGreaterThan(10);
    expect(table.filter((route) => route.access.kind === 'operator')).toEqual([]);
    for (const path of [`/admin/v1/workspaces/${owner.workspaceId}/plan`, `/%61dmin/v1/workspaces/${owner.workspaceId}/plan`]) {
      expectError(await call('PUT', path, { token: 'e2e-admin-token-0123456789', body: { plan: 'enterprise' } }, gateway.baseUrl), 404, 'NOT_FOUND');
    }
  });
});

/**
 * A reviewer sees and resolves reviews and nothing else: every route of a workspace that asks for another role
 * refuses it, however harmless, and the routes that ask for `reviewer` let it through.
 */
describe('a reviewer', () => {
  it('is refused on every workspace route but the reviews', async () => {
    const ws = await newWorkspace();
    const user = await signUp();
    const added = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: user.email, role: 'reviewer' } });
    expect(added.status).toBe(201);
    const workspaceRoutes = routes.filter((route) => route.access.kind === 'session' && route.access.role !== undefined);
    const reviewRoutes = workspaceRoutes.filter((route) => route.access.role === 'reviewer');
    expect(reviewRoutes.map((route) => `${route.method} ${route.url}`).sort()).toEqual(
      [
        'GET /app/v1/workspaces/:ws/reviews',
        'GET /app/v1/workspaces/:ws/reviews/:id',
        'HEAD /app/v1/workspaces/:ws/reviews',
        'HEAD /app/v1/workspaces/:ws/reviews/:id',
        'POST /app/v1/workspaces/:ws/reviews/:id/claim',
        'POST /app/v1/workspaces/:ws/reviews/:id/release',
        'POST /app/v1/workspaces/:ws/reviews/:id/resolve',
      ].sort(),
    );
    const path = (url: string) => url.replace(':ws', ws.workspaceId).replace(/:\w+/g, `rev_${'a1'.repeat(10)}`);
    const wrong: string[] = [];
    await inBatches(workspaceRoutes, 8, async (route) => {
      const hasBody = !['GET', 'HEAD', 'DELETE'].includes(route.method);
      const reply = await call(route.method, path(route.url), { token: user.session, ...(hasBody ? { body: { name: 'reviewer', role: 'owner' } } : {}) });
      const refused = reply.status === 403 && (route.method === 'HEAD' || reply.body?.error?.code === 'FORBIDDEN');
      const shouldRefuse = route.access.role !== 'reviewer';
      // A review route gets past the role check: an unknown item is 404, the list 200.
      if (refused !== shouldRefuse || reply.status >= 500) wrong.push(`${route.method} ${route.url}: ${reply.status}`);
    });
    expect(wrong).toEqual([]);
    expect(workspaceRoutes.length - reviewRoutes.length).toBeGreaterThan(50);
  }, 120_000);
});

type Role = 'viewer' | 'member' | 'admin' | 'owner';
/** From the least to the most a member may do: a route's `access.role` admits its own and every later one. */
const ROLES: readonly Role[] = ['viewer', 'member', 'admin', 'owner'];
const reaches = (role: Role, least: string | undefined) => least !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(least as Role);

/** A workspace with one member of each role, each with a session of their own. */
async function teamWorkspace(): Promise<{ ws: Workspace; sessions: Record<Role, string> }> {
  const ws = await roomyWorkspace();
  const sessions = { owner: ws.session } as Record<Role, string>;
  for (const role of ['admin', 'member', 'viewer'] as const) {
    const user = await signUp();
    const added = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: user.email, role } });
    expect(added.status).toBe(201);
    sessions[role] = user.session;
  }
  return { ws, sessions };
}

function routeNamed(method: string, url: string): RouteEntry {
  const route = routes.find((candidate) => candidate.method === method && candidate.url === url);
  expect(route).toBeDefined();
  return route!;
}

/**
 * Headers and bodies a delivery sent and was answered are shown to Admins and Owners only. The routes that show
 * them are found by walking the route table as the Owner with a delivery's id in every parameter, so that a new
 * route answering with them is caught here, and each of those routes is tried by every role.
 */
describe("a delivery's headers and bodies", () => {
  const BODY_ROUTES = ['GET /app/v1/workspaces/:ws/deliveries/:id', 'POST /app/v1/workspaces/:ws/deliveries/:id/resend'];
  let receiver: Receiver;
  let team: Workspace;
  let sessions: Record<Role, string>;
  let deliveryId: string;
  /** Only in the receiver's answer: a reply that holds it shows what the delivery was answered. */
  const answerMarker = uniqueMarker();
  const path = (url: string) => url.replace(':ws', team.workspaceId).replace(/:\w+/g, deliveryId);
  const delivery = () => call('GET', path('/app/v1/workspaces/:ws/deliveries/:id'), { token: team.session });
  // A resend answers 202 before its attempt is made: the delivery still reads failed from the attempt before, and a
  // second resend then would meet the first in flight (409). So after an accepted resend, wait for its own sequence to fail.
  let sequenceSeen = 0;
  let resent = false;
  const failedAgain = () =>
    eventually(
      async () => {
        const { status, sequence } = (await delivery()).body;
        if (status !== 'failed' || (resent && sequence <= sequenceSeen)) return false;
        sequenceSeen = sequence;
        resent = false;
        return true;
      },
      20_000,
      'the delivery to fail',
    );

  beforeAll(async () => {
    receiver = await startReceiver((_request, _index, response) =>
      response.writeHead(410, { 'content-type': `text/plain; note=${answerMarker}` }).end(`gone: ${answerMarker}`),
    );
    ({ ws: team, sessions } = await teamWorkspace());
    const destinations = [{ key: 'crm', type: 'webhook', url: receiver.url, headers: { 'X-Team': 'walk' } }];
    await deployedDecision(team, 'walked', triageSchema(uniqueMarker(), { destinations }));
    const run = await runDecision(team, 'walked', { message: 'hello' });
    expect(run.status).toBe(200);
    deliveryId = run.body.destinations[0].delivery_id;
    await failedAgain();
  });

  afterAll(async () => {
    await receiver?.close();
  });

  it('are shown by each route that shows them to Owners and Admins only, and to Members and Viewers as sizes', async () => {
    for (const key of BODY_ROUTES) {
      const [method, url] = key.split(' ') as [string, string];
      const least = routeNamed(method, url).access.role;
      for (const role of ROLES) {
        if (method === 'POST') await failedAgain();
        const reply = await call(method, path(url), { token: sessions[role] });
        const seen = { route: key, role, status: reply.status };
        if (!reaches(role, least)) {
          expect({ ...seen, code: reply.body?.error?.code }).toEqual({ ...seen, status: 403, code: 'FORBIDDEN' });
          continue;
        }
        expect(seen).toEqual({ ...seen, status: method === 'POST' ? 202 : 200 });
        if (method === 'POST') resent = true;
        const shown = reaches(role, 'admin');
        const { request, attempts, bodies_shown } = reply.body;
        const response = attempts[0].response;
        expect({ ...seen, bodies_shown, holdsAnswer: reply.text.includes(answerMarker) }).toEqual({ ...seen, bodies_shown: shown, holdsAnswer: shown });
        expect({ ...seen, bodyBytes: typeof request.body_bytes, answerBytes: response.body_bytes }).toEqual({
          ...seen,
          bodyBytes: 'number',
          answerBytes: Buffer.byteLength(`gone: ${answerMarker}`),
        });
        if (shown) {
          expect({ ...seen, headers: request.headers, body: typeof request.body, answer: response.body }).toEqual({
            ...seen,
            headers: expect.objectContaining({ 'x-team': 'walk' }),
            body: 'string',
            answer: `gone: ${answerMarker}`,
          });
        } else {
          expect({ ...seen, headers: request.headers, body: request.body, answer: response.body, type: response.content_type }).toEqual({
            ...seen,
            headers: null,
            body: null,
            answer: null,
            type: null,
          });
        }
      }
    }
  }, 120_000);

  it('are shown by no route of the table but those', async () => {
    await failedAgain();
    const candidates = routes.filter(
      (route) =>
        route.access.kind === 'session' &&
        route.url.startsWith('/app/v1/workspaces/:ws') &&
        (route.method === 'GET' ||
          // A change is sent only where the path names something else than the workspace, which here is the delivery.
          (['POST', 'PUT', 'PATCH'].includes(route.method) && /:ws\/.*:\w/.test(route.url) && !/\/leave$|\/ownership$|\/rotate$/.test(route.url))),
    );
    expect(candidates.length).toBeGreaterThan(30);
    const showing: string[] = [];
    const failing: string[] = [];
    for (const route of candidates) {
      const reply = await call(route.method, path(route.url), { token: team.session, ...(route.method === 'GET' ? {} : { body: {} }) });
      if (reply.status >= 500) failing.push(`${route.method} ${route.url}: ${reply.status}`);
      if (reply.text.includes(answerMarker)) showing.push(`${route.method} ${route.url}`);
    }
    expect(failing).toEqual([]);
    expect(showing.sort()).toEqual([...BODY_ROUTES].sort());
  }, 120_000);
});

/**
 * A workspace fits one calibration at a time, within a daily budget: every role the route admits meets both
 * limits, every other is refused before either.
 */
describe('the calibration fit', () => {
  const FIT = { method: 'POST', url: '/app/v1/workspaces/:ws/decisions/:id/calibration' };
  /** The free plan's fits a day (docs/quality.md). */
  const DAILY_FITS = 20;

  it('answers 409 to a second fit while one runs, 429 while the workspace rests and past the day’s budget to each role allowed to fit, and 403 to the others', async () => {
    const least = routeNamed(FIT.method, FIT.url).access.role;
    expect(least).toBeDefined();
    const allowed = ROLES.filter((role) => reaches(role, least));
    const refused = ROLES.filter((role) => !reaches(role, least));
    expect(refused.length).toBeGreaterThan(0);
    const { ws, sessions } = await teamWorkspace();
    // The free plan's budget, so that the day's budget is a few fits away.
    const plan = await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, { token: process.env.E2E_ADMIN_TOKEN, body: { plan: 'genesis' } });
    expect(plan.status).toBe(200);
    const decisionId = await deployedDecision(ws, 'fitted', triageSchema(uniqueMarker()));
    const fitPath = FIT.url.replace(':ws', ws.workspaceId).replace(':id', decisionId);
    const fit = (role: Role) => call(FIT.method, fitPath, { token: sessions[role], body: { version: 1 } });
    const outcome = async (role: Role) => {
      const reply = await fit(role);
      return { role, status: reply.status, code: reply.body?.error?.code ?? null };
    };

    expect(await outcome('owner')).toEqual({ role: 'owner', status: 200, code: null });
    await endFitRest(ws.workspaceId);
    const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    const watcher = new Client({ connectionString: process.env.E2E_DATABASE_URL });
    await Promise.all([db.connect(), watcher.connect()]);
    let fitsSpent = 1;
    try {
      // Holding the day's budget row keeps a fit inside its turn, spending from the budget.
      await db.query('BEGIN');
      await db.query(`SELECT 1 FROM decision_runner.lab_budgets WHERE workspace_id = $1 AND kind = 'fit' FOR UPDATE`, [ws.workspaceId]);
      const held = fit('owner');
      const spending = async () =>
        (
          await watcher.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO lab_budgets%'",
          )
        ).rows[0].n as number;
      await waitFor(async () => (await spending()) === 1, 20_000, 'a fit waiting to spend');
      const whileHeld = await Promise.all(ROLES.map(outcome));
      expect(whileHeld).toEqual(
        ROLES.map((role) => ({ role, status: reaches(role, least) ? 409 : 403, code: reaches(role, least) ? 'CONFLICT' : 'FORBIDDEN' })),
      );
      await db.query('COMMIT');
      expect((await held).status).toBe(200);
      fitsSpent++;
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await Promise.all([db.end(), watcher.end()]);
    }

    // After a fit the workspace rests before the next, for every role alike.
    const resting = [];
    for (const role of ROLES) resting.push(await outcome(role));
    expect(resting).toEqual(
      ROLES.map((role) => ({ role, status: reaches(role, least) ? 429 : 403, code: reaches(role, least) ? 'RATE_LIMITED' : 'FORBIDDEN' })),
    );
    for (; fitsSpent < DAILY_FITS; fitsSpent++) {
      await endFitRest(ws.workspaceId);
      const role = allowed[fitsSpent % allowed.length]!;
      expect(await outcome(role)).toEqual({ role, status: 200, code: null });
    }
    await endFitRest(ws.workspaceId);
    const pastBudget = [];
    for (const role of ROLES) pastBudget.push(await outcome(role));
    expect(pastBudget).toEqual(
      ROLES.map((role) => ({ role, status: reaches(role, least) ? 429 : 403, code: reaches(role, least) ? 'RATE_LIMITED' : 'FORBIDDEN' })),
    );
  }, 120_000);
});

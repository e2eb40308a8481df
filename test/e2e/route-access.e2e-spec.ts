import { call, expectError, newWorkspace, opsPort, Reply, signUp, Workspace } from './support/api';
import { GatewayProcess, startGateway } from './support/cluster';

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
    for (const route of routes.filter((candidate) => candidate.access.kind === 'api-key' && candidate.url !== '/v1/decisions/:slug')) {
      expect({ route: route.url, window: route.access.window }).toEqual({ route: route.url, window: 'reads' });
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

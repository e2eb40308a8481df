import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { call, expectError, newWorkspace, Reply, signUp } from './support/api';
import { GatewayProcess, startGateway } from './support/cluster';

/**
 * Floods go to a gateway replica of their own with low ceilings and a Redis namespace of its own, so that
 * nothing here counts against the shared cluster the other tests use from the same loopback address.
 * Each test speaks for a client address of its own through X-Forwarded-For (loopback is a trusted proxy).
 */
const CACHE_MAX = 50;
const FAILURES_PER_ADDRESS = 300;
const SIGN_UPS_PER_ADDRESS = 3;
const OPERATOR_REQUESTS_PER_ADDRESS = 3;
const FLOODING_SCRYPT_N = 32_768;
/** A session's pace on this replica: a burst of 5, then 10 a second, a request held at most 5 s (the gateway's bound). */
const SESSION_BURST = 5;
const SESSION_PER_SECOND = 10;
const SESSION_MAX_WAIT_S = 5;
/** The shared cluster runs with the gateway's default ceiling on attempts per e-mail and minute. */
const ATTEMPTS_PER_EMAIL_DEFAULT = 60;

let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGateway(undefined, {
    RATE_LIMIT_KEY_PREFIX: `e2e-floods-${randomBytes(6).toString('hex')}`,
    API_KEY_CACHE_MAX: String(CACHE_MAX),
    AUTH_FAILURES_PER_ADDRESS: String(FAILURES_PER_ADDRESS),
    SIGN_UPS_PER_ADDRESS: String(SIGN_UPS_PER_ADDRESS),
    OPERATOR_REQUESTS_PER_ADDRESS: String(OPERATOR_REQUESTS_PER_ADDRESS),
    // The lock alone decides here, not the per-e-mail window.
    SIGN_IN_ATTEMPTS_PER_ACCOUNT: '1000',
    PASSWORD_SCRYPT_N: String(FLOODING_SCRYPT_N),
    APP_REQUEST_BURST: String(SESSION_BURST),
    APP_REQUESTS_PER_SECOND: String(SESSION_PER_SECOND),
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
});

let addressCounter = 0;
/** A documentation address (RFC 5737) no other test uses. */
function clientAddress(): string {
  addressCounter++;
  return `203.0.113.${addressCounter}`;
}

function from(address: string, token?: string): { headers: Record<string, string>; token?: string } {
  return { headers: { 'x-forwarded-for': address }, token };
}

async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${gateway.opsUrl}/metrics`)).text();
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  throw new Error(`no metric ${name} ${JSON.stringify(labels)} on the gateway`);
}

async function inBatches<T>(count: number, batchSize: number, send: (index: number) => Promise<T>): Promise<T[]> {
  const replies: T[] = [];
  for (let start = 0; start < count; start += batchSize) {
    replies.push(...(await Promise.all(Array.from({ length: Math.min(batchSize, count - start) }, (_, i) => send(start + i)))));
  }
  return replies;
}

function randomApiKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `svc_live_${Array.from(randomBytes(32), (byte) => alphabet[byte % alphabet.length]).join('')}`;
}

function expectRetryAfter(reply: Reply, atLeast: number, atMost: number): void {
  const seconds = Number(reply.headers.get('retry-after'));
  expect(seconds).toBeGreaterThanOrEqual(atLeast);
  expect(seconds).toBeLessThanOrEqual(atMost);
}

async function userRow(email: string): Promise<{ failed_sign_ins: number; locked_until: Date | null; password_hash: string }> {
  const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
  await db.connect();
  try {
    const result = await db.query('SELECT failed_sign_ins, locked_until, password_hash FROM gateway.users WHERE email = $1', [email]);
    return result.rows[0];
  } finally {
    await db.end();
  }
}

function signIn(address: string, email: string, password: string, base = gateway.baseUrl): Promise<Reply> {
  return call('POST', '/app/v1/auth/sign-in', { ...from(address), body: { email, password } }, base);
}

describe('a flood of random API keys', () => {
  it('keeps the key cache within its ceiling and memory flat, then refuses the address before any lookup', async () => {
    const ws = await newWorkspace();
    const flooder = clientAddress();
    const heapBefore = await metric('nodejs_heap_size_used_bytes');
    const replies = await inBatches(3_000, 25, () => call('GET', '/v1/decisions', from(flooder, randomApiKey()), gateway.baseUrl));

    const unauthorized = replies.filter((reply) => reply.status === 401);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(unauthorized.length + refused.length).toBe(3_000);
    // Past the ceiling no key is looked up: only requests already in flight when it was reached answer 401.
    expect(unauthorized.length).toBeGreaterThan(FAILURES_PER_ADDRESS);
    expect(unauthorized.length).toBeLessThanOrEqual(FAILURES_PER_ADDRESS + 25);
    const last = replies[replies.length - 1]!;
    expectError(last, 429, 'RATE_LIMITED');
    expectRetryAfter(last, 1, 600);

    expect(await metric('decision_service_api_key_cache_max_entries')).toBe(CACHE_MAX);
    expect(await metric('decision_service_api_key_cache_entries', { kind: 'unknown' })).toBeLessThanOrEqual(CACHE_MAX);
    expect(await metric('decision_service_api_key_cache_entries', { kind: 'known' })).toBeLessThanOrEqual(CACHE_MAX);
    const heapGrowth = (await metric('nodejs_heap_size_used_bytes')) - heapBefore;
    expect(heapGrowth).toBeLessThan(64 * 1024 * 1024);

    // The refused address is refused even with a working key; every other address is served.
    expectError(await call('GET', '/v1/decisions', from(flooder, ws.apiKey), gateway.baseUrl), 429, 'RATE_LIMITED');
    expect((await call('GET', '/v1/decisions', from(clientAddress(), ws.apiKey), gateway.baseUrl)).status).toBe(200);
  });

  it('counts wrong sessions against the address too', async () => {
    const address = clientAddress();
    const replies = await inBatches(FAILURES_PER_ADDRESS + 10, 25, () =>
      call('GET', '/app/v1/templates', from(address, `ses_${randomBytes(32).toString('base64url')}`), gateway.baseUrl),
    );
    expect(replies.filter((reply) => reply.status === 401).length).toBeGreaterThan(FAILURES_PER_ADDRESS);
    const { session } = await signUp();
    expectError(await call('GET', '/app/v1/templates', from(address, session), gateway.baseUrl), 429, 'RATE_LIMITED');
    expect((await call('GET', '/app/v1/templates', from(clientAddress(), session), gateway.baseUrl)).status).toBe(200);
  });
});

describe('a sign-in flood for one e-mail', () => {
  it('lets five wrong attempts reach the password check and refuses the other 45 before hashing', async () => {
    const user = await signUp();
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => signIn(clientAddress(), user.email, `wrong-password-${i}`)));
    const unauthorized = replies.filter((reply) => reply.status === 401);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(unauthorized).toHaveLength(5);
    expect(refused).toHaveLength(45);
    for (const reply of refused) {
      expectError(reply, 429, 'RATE_LIMITED');
      expectRetryAfter(reply, 14 * 60, 15 * 60);
    }
    const row = await userRow(user.email);
    expect(row.failed_sign_ins).toBe(5);
    expect(row.locked_until!.getTime()).toBeGreaterThan(Date.now() + 14 * 60_000);
    // Locked means locked: the right password waits too, on every replica.
    expectError(await signIn(clientAddress(), user.email, user.password), 429, 'RATE_LIMITED');
    expectError(await signIn(clientAddress(), user.email, user.password, process.env.E2E_BASE_URL), 429, 'RATE_LIMITED');
  });

  it('answers the same for an e-mail without an account: five reach the check, the rest wait as long, with the same words', async () => {
    const user = await signUp();
    const known = await signIn(clientAddress(), user.email, 'wrong-password-x');
    for (let i = 0; i < 4; i++) await signIn(clientAddress(), user.email, 'wrong-password-x');
    const knownLock = await signIn(clientAddress(), user.email, 'wrong-password-x');
    expectError(knownLock, 429, 'RATE_LIMITED');

    const nobody = `nobody-${randomBytes(6).toString('hex')}@example.com`;
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => signIn(clientAddress(), nobody, `wrong-password-${i}`)));
    const unauthorized = replies.filter((reply) => reply.status === 401);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(unauthorized).toHaveLength(5);
    expect(refused).toHaveLength(45);
    for (const reply of unauthorized) expect(reply.body.error.message).toBe(known.body.error.message);
    for (const reply of refused) {
      expectError(reply, 429, 'RATE_LIMITED');
      expectRetryAfter(reply, 14 * 60, 15 * 60);
      expect(reply.body.error.message).toBe(knownLock.body.error.message);
    }
  });

  it('resets the count on a right password', async () => {
    const user = await signUp();
    const address = clientAddress();
    for (let i = 0; i < 4; i++) expectError(await signIn(address, user.email, 'wrong-password-1'), 401, 'UNAUTHORIZED');
    expect((await signIn(address, user.email, user.password)).status).toBe(200);
    expect((await userRow(user.email)).failed_sign_ins).toBe(0);
    for (let i = 0; i < 4; i++) expectError(await signIn(address, user.email, 'wrong-password-1'), 401, 'UNAUTHORIZED');
    expect((await signIn(address, user.email, user.password)).status).toBe(200);
  });

  it('answers an unknown e-mail like a wrong password, locks it like an account, and limits attempts per e-mail on the shared cluster’s defaults', async () => {
    const email = `nobody-${randomUUID()}@example.com`;
    const address = clientAddress();
    for (let i = 0; i < 5; i++) expectError(await signIn(address, email, 'wrong-password-1', process.env.E2E_BASE_URL), 401, 'UNAUTHORIZED');
    for (let i = 5; i < ATTEMPTS_PER_EMAIL_DEFAULT; i++) {
      const locked = await signIn(address, email, 'wrong-password-1', process.env.E2E_BASE_URL);
      expectError(locked, 429, 'RATE_LIMITED');
      expectRetryAfter(locked, 14 * 60, 15 * 60);
    }
    // The 61st attempt within the minute meets the per-e-mail ceiling, before the lock is even read.
    const refused = await signIn(address, email, 'wrong-password-1', process.env.E2E_BASE_URL);
    expectError(refused, 429, 'RATE_LIMITED');
    expectRetryAfter(refused, 1, 60);
  });

  it('lets one user sign in with the right password again and again on the shared cluster’s defaults', async () => {
    const user = await signUp();
    const address = clientAddress();
    for (let i = 0; i < 20; i++) expect((await signIn(address, user.email, user.password, process.env.E2E_BASE_URL)).status).toBe(200);
  });

  it('rehashes a password made at a lower cost when its owner signs in', async () => {
    const user = await signUp();
    expect((await userRow(user.email)).password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect((await signIn(clientAddress(), user.email, user.password)).status).toBe(200);
    const rehashed = (await userRow(user.email)).password_hash;
    expect(rehashed).toMatch(new RegExp(`^scrypt\\$${FLOODING_SCRYPT_N}\\$8\\$1\\$`));
    // A replica with a lower cost verifies the stronger hash and leaves it as it is.
    expect((await signIn(clientAddress(), user.email, user.password, process.env.E2E_BASE_URL)).status).toBe(200);
    expect((await userRow(user.email)).password_hash).toBe(rehashed);
  });
});

describe('a session asking in a tight loop', () => {
  it('is held to its pace, is refused with Retry-After past the longest wait, and leaves other sessions served at once', async () => {
    const [flooding, other] = await Promise.all([newWorkspace(), newWorkspace()]);
    const me = async (token: string) => {
      const reply = await call('GET', '/app/v1/workspaces', { token }, gateway.baseUrl);
      return { reply, at: performance.now() };
    };
    const [heldBefore, refusedBefore] = await Promise.all([
      metric('decision_service_application_paced_total', { outcome: 'held' }).catch(() => 0),
      metric('decision_service_application_paced_total', { outcome: 'refused' }).catch(() => 0),
    ]);
    const flood = Promise.all(Array.from({ length: 100 }, () => me(flooding.session)));
    // Asked after the whole flood was sent: served without waiting behind any of it.
    const bystander = await me(other.session);
    const replies = await flood;

    const answered = replies.filter(({ reply }) => reply.status === 200);
    const refused = replies.filter(({ reply }) => reply.status !== 200);
    // The burst at once and as many as fit in the longest wait at the steady rate; the rest refused.
    expect(answered.length).toBeGreaterThanOrEqual(SESSION_BURST + SESSION_PER_SECOND * SESSION_MAX_WAIT_S);
    expect(refused.length).toBeGreaterThan(0);
    for (const { reply } of refused) {
      expectError(reply, 429, 'RATE_LIMITED');
      expect(reply.body.error.message).toMatch(/^Too many requests from this session; retry after \d+ seconds\.$/);
      expectRetryAfter(reply, 1, SESSION_MAX_WAIT_S + 1);
    }
    expect(bystander.reply.status).toBe(200);
    expect(bystander.at).toBeLessThan(Math.max(...answered.map(({ at }) => at)));
    expect(await metric('decision_service_application_paced_total', { outcome: 'held' })).toBeGreaterThanOrEqual(
      heldBefore + SESSION_PER_SECOND * SESSION_MAX_WAIT_S - 1,
    );
    expect(await metric('decision_service_application_paced_total', { outcome: 'refused' })).toBe(refusedBefore + refused.length);
  }, 60_000);
});

describe('per-address ceilings', () => {
  it('refuses sign-ups past the address’s ceiling before the body is even checked, and serves other addresses', async () => {
    const address = clientAddress();
    const signUpFrom = (who: string, body: unknown) => call('POST', '/app/v1/auth/sign-up', { ...from(who), body }, gateway.baseUrl);
    const account = () => ({ email: `user-${randomUUID()}@example.com`, password: 'correcthorse42', name: 'Flood' });
    for (let i = 0; i < SIGN_UPS_PER_ADDRESS; i++) expect((await signUpFrom(address, account())).status).toBe(201);
    const refused = await signUpFrom(address, account());
    expectError(refused, 429, 'RATE_LIMITED');
    expectRetryAfter(refused, 1, 600);
    expectError(await signUpFrom(address, { email: 'not an address' }), 429, 'RATE_LIMITED');
    expect((await signUpFrom(clientAddress(), account())).status).toBe(201);
  });

  it('refuses operator requests past the address’s ceiling, before the token is compared', async () => {
    const address = clientAddress();
    const ws = await newWorkspace();
    const setSpendCap = (token: string) =>
      call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/spend-cap`, { ...from(address, token), body: { spend_cap_cents: 1000 } }, gateway.baseUrl);
    for (let i = 0; i < OPERATOR_REQUESTS_PER_ADDRESS; i++) expectError(await setSpendCap('wrong-operator-token-000'), 401, 'UNAUTHORIZED');
    const refused = await setSpendCap(process.env.E2E_ADMIN_TOKEN!);
    expectError(refused, 429, 'RATE_LIMITED');
    expectRetryAfter(refused, 1, 600);
  });
});

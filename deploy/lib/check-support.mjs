// What the image check and the upgrade check share: a fresh database, a private nats-server, free ports, the
// engine simulator as built, HTTP calls, a local webhook receiver and a workspace with a deployed decision.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(ROOT, 'package.json'));
const { Client } = require('pg');

export const ADMIN_DATABASE_URL = process.env.CHECK_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.CHECK_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SERVICES = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner'];

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

export class CheckFailed extends Error {}
export function expect(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export async function waitFor(check, timeoutMs, what, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(everyMs);
  }
  throw new CheckFailed(`${what} not within ${timeoutMs / 1000} s`);
}

async function adminQuery(sql) {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    return await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A database of the check's own (`<purpose>_<random>_test`); only names ending in _test are ever created or dropped. */
export async function freshDatabase(purpose) {
  const name = `${purpose}_${randomBytes(4).toString('hex')}_test`;
  if (!/^[a-z0-9_]+_test$/.test(name)) throw new Error(`refusing database name ${name}`);
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(databaseUrl) {
  const name = new URL(databaseUrl).pathname.slice(1);
  if (!/^[a-z0-9_]+_test$/.test(name)) throw new Error(`refusing to drop database ${name}`);
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

export async function query(databaseUrl, sql, params = []) {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return (await db.query(sql, params)).rows;
  } finally {
    await db.end();
  }
}

/** A nats-server with JetStream of the check's own, so its streams and subjects are nobody else's. */
export async function startNats() {
  if (spawnSync('nats-server', ['--version']).error) throw new CheckFailed('nats-server is not installed (Debian: apt-get install -y nats-server)');
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'ds-check-nats-'));
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
  const url = `nats://127.0.0.1:${port}`;
  await waitFor(
    () =>
      new Promise((resolve) => {
        const socket = createNetServer();
        socket.once('error', () => resolve(true));
        socket.listen(port, '127.0.0.1', () => socket.close(() => resolve(false)));
      }),
    20_000,
    'nats-server',
  );
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) await new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')));
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** The engine simulator of the build in `root` (dist/), on a free port. */
export async function startSimulator(root = ROOT) {
  // A burst of held engine calls waits on one abort signal of the simulator's: more than Node's default ten listeners.
  setMaxListeners(500);
  const entry = join(root, 'dist', 'libs', 'engine-simulator', 'src', 'index.js');
  if (!existsSync(entry)) throw new CheckFailed(`${entry} is missing: run npm run build first`);
  const { startEngineSimulator } = createRequire(entry)(entry);
  return startEngineSimulator({ port: 0 });
}

/** One HTTP call; a refused connection or a reset comes back as status 0 with the error's code. */
export async function call(base, method, path, { token, body, headers = {}, signal } = {}) {
  const all = { ...headers };
  if (token) all.authorization = `Bearer ${token}`;
  if (body !== undefined) all['content-type'] ??= 'application/json';
  try {
    const response = await fetch(`${base}${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body), signal });
    const text = await response.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  } catch (error) {
    const code = error?.cause?.code ?? error?.code ?? error?.name ?? 'ERROR';
    return { status: 0, headers: new Headers(), body: null, text: String(code), error: code };
  }
}

/** A webhook receiver on loopback that answers 200 and counts each delivery by its `webhook-id`. */
export async function startReceiver() {
  const byId = new Map();
  let total = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      total++;
      const id = String(request.headers['webhook-id'] ?? '');
      byId.set(id, (byId.get(id) ?? 0) + 1);
      response.writeHead(200).end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    byId,
    total: () => total,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

export function triageSchema(context, destinations = []) {
  return {
    state: { type: 'object', fields: { message: { type: 'string', required: true } } },
    context,
    questions: [
      {
        key: 'intent',
        kind: 'choice',
        instructions: 'What does the customer want? Read `message`.',
        options: [
          { value: 'refund', description: 'Wants the money back' },
          { value: 'exchange', description: null },
        ],
      },
      { key: 'fraud', kind: 'probability', instructions: 'Judge the request.', criterion: 'The request shows signs of fraud' },
    ],
    policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.9 }, action: 'block' }],
    fallbackAction: 'escalate',
    ...(destinations.length > 0 ? { destinations } : {}),
    settings: { storeInput: true },
  };
}

/**
 * A verified user, a workspace on a plan without a practical rate limit, a live API key and the decision `slug`
 * deployed (with a webhook to `webhookUrl` when given).
 */
export async function seedWorkspace({ base, adminToken, databaseUrl, slug = 'triage', marker = `marker-${randomUUID()}`, webhookUrl = null }) {
  const must = (reply, status, what) => {
    if (reply.status !== status) throw new CheckFailed(`${what} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    return reply.body;
  };
  const email = `${marker}@example.com`;
  const user = must(await call(base, 'POST', '/app/v1/auth/sign-up', { body: { email, password: 'correcthorse42', name: 'Check' } }), 201, 'sign-up');
  await query(databaseUrl, 'UPDATE gateway.users SET email_verified_at = now() WHERE id = $1', [user.user.id]);
  const session = user.session.token;
  const ws = must(await call(base, 'POST', '/app/v1/workspaces', { token: session, body: { name: 'check' } }), 201, 'workspace creation').id;
  must(
    await call(base, 'PUT', `/admin/v1/workspaces/${ws}/plan`, {
      token: adminToken,
      body: { plan: 'enterprise', overrides: { rate_limit_per_minute: 1_000_000 } },
    }),
    200,
    'plan change',
  );
  const apiKey = must(
    await call(base, 'POST', `/app/v1/workspaces/${ws}/api-keys`, { token: session, body: { name: 'check', mode: 'live' } }),
    201,
    'API key',
  ).key;
  const destinations = webhookUrl ? [{ key: 'hook', type: 'webhook', url: webhookUrl }] : [];
  const decision = must(
    await call(base, 'POST', `/app/v1/workspaces/${ws}/decisions`, { token: session, body: { slug, name: slug, schema: triageSchema(marker, destinations) } }),
    201,
    'decision creation',
  );
  must(await call(base, 'POST', `/app/v1/workspaces/${ws}/decisions/${decision.id}/deploy`, { token: session }), 201, 'deploy');
  return { session, workspaceId: ws, apiKey, decisionId: decision.id, slug, marker };
}

/** Runs `steps` in order, printing each one's name, outcome and wall time. */
export function stepper(label) {
  return async function step(name, body) {
    const started = Date.now();
    process.stdout.write(`${label}: ${name} … `);
    try {
      const note = await body();
      process.stdout.write(`ok (${seconds(Date.now() - started)}${note ? `; ${note}` : ''})\n`);
      return note;
    } catch (error) {
      process.stdout.write(`FAILED (${seconds(Date.now() - started)})\n`);
      throw error;
    }
  };
}

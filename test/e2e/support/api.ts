import { randomUUID } from 'node:crypto';
import { Client } from 'pg';

export const baseUrl = () => process.env.E2E_BASE_URL!;
export const simulatorUrl = () => process.env.E2E_SIMULATOR_URL!;
export const opsPort = (index: number) => Number(process.env.E2E_OPS_BASE) + index;

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function call<T = any>(method: string, path: string, options: CallOptions = {}, base = baseUrl()): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/**
 * Fails the test when an element it is about to read is missing (a request that never arrived, a row that was
 * not written), so the failure is an assertion rather than a TypeError further down; hands the element back.
 */
export function defined<T>(value: T | undefined): T {
  expect(value).toBeDefined();
  return value as T;
}

export function expectError(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.body?.error?.code }).toEqual({ status, code });
  expect(reply.body.error.request_id).toBe(reply.headers.get('x-request-id'));
  expect(typeof reply.body.error.message).toBe('string');
  expect(reply.text).not.toMatch(/\bat .+\.(js|ts):\d+/);
}

export interface Workspace {
  session: string;
  workspaceId: string;
  apiKey: string;
  keyId: string;
  email: string;
}

/**
 * A new user. The shared cluster sends e-mail, so an address must be verified before its account joins a workspace
 * or owns one on a paid plan; tests about other things get a verified one, marked in the database (the verification
 * by an e-mailed code is what accounts.e2e-spec.ts proves). `verified: false` leaves it as sign-up does.
 */
export async function signUp(options: { verified?: boolean } = {}): Promise<{ session: string; email: string; password: string; userId: string }> {
  const email = `user-${randomUUID()}@example.com`;
  const password = 'correcthorse42';
  const reply = await call('POST', '/app/v1/auth/sign-up', { body: { email, password, name: 'Test User' } });
  if (reply.status !== 201) throw new Error(`sign-up failed: ${reply.text}`);
  if (options.verified !== false) await markVerified(reply.body.user.id);
  return { session: reply.body.session.token, email, password, userId: reply.body.user.id };
}

export async function markVerified(userId: string): Promise<void> {
  const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
  await db.connect();
  try {
    await db.query('UPDATE gateway.users SET email_verified_at = now() WHERE id = $1', [userId]);
  } finally {
    await db.end();
  }
}

/** As if the workspace's rest after its last calibration fit had passed (docs/quality.md, "Fitting"). */
export async function endFitRest(workspaceId: string): Promise<void> {
  const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
  await db.connect();
  try {
    await db.query(`UPDATE decision_runner.lab_turns SET expires_at = now() WHERE workspace_id = $1 AND holder = 'resting'`, [workspaceId]);
  } finally {
    await db.end();
  }
}

/** A new user with a new workspace and a live API key: every test works in one of its own. */
export async function newWorkspace(mode: 'live' | 'test' = 'live'): Promise<Workspace> {
  const user = await signUp();
  const workspace = await call('POST', '/app/v1/workspaces', { token: user.session, body: { name: 'Test workspace' } });
  if (workspace.status !== 201) throw new Error(`workspace creation failed: ${workspace.text}`);
  const key = await call('POST', `/app/v1/workspaces/${workspace.body.id}/api-keys`, { token: user.session, body: { name: 'tests', mode } });
  if (key.status !== 201) throw new Error(`key creation failed: ${key.text}`);
  return { session: user.session, workspaceId: workspace.body.id, apiKey: key.body.key, keyId: key.body.id, email: user.email };
}

/** A workspace whose plan allows many requests a minute, so that tests making dozens never meet the limit. */
export async function roomyWorkspace(): Promise<Workspace> {
  const ws = await newWorkspace();
  const plan = await call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/plan`, {
    token: process.env.E2E_ADMIN_TOKEN,
    body: { plan: 'enterprise', overrides: { rate_limit_per_minute: 1_000_000 } },
  });
  if (plan.status !== 200) throw new Error(`plan change failed: ${plan.text}`);
  return ws;
}

export async function createDecision(ws: Workspace, slug: string, schema: unknown): Promise<{ id: string }> {
  const reply = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions`, { token: ws.session, body: { slug, name: `Decision ${slug}`, schema } });
  if (reply.status !== 201) throw new Error(`decision creation failed: ${reply.text}`);
  return reply.body;
}

export async function deploy(ws: Workspace, decisionId: string): Promise<number> {
  const reply = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/deploy`, { token: ws.session });
  if (reply.status !== 201) throw new Error(`deploy failed: ${reply.text}`);
  return reply.body.version;
}

export async function deployedDecision(ws: Workspace, slug: string, schema: unknown): Promise<string> {
  const { id } = await createDecision(ws, slug, schema);
  await deploy(ws, id);
  return id;
}

export function runDecision(ws: Workspace, slug: string, state: unknown, headers: Record<string, string> = {}, query = ''): Promise<Reply> {
  return call('POST', `/v1/decisions/${slug}${query}`, { token: ws.apiKey, body: { state }, headers });
}

/** Scripts the simulator for requests whose body contains `marker` (tests put it in the decision context). */
export async function scriptEngine(marker: string, steps: unknown[], repeat = false): Promise<void> {
  const reply = await call('POST', '/_sim/scripts', { body: { match: marker, steps, repeat } }, simulatorUrl());
  if (reply.status !== 201) throw new Error(`scripting the simulator failed: ${reply.text}`);
}

export async function engineRequests(marker: string): Promise<Array<{ at: number; body: any }>> {
  return (await call('GET', `/_sim/requests?match=${encodeURIComponent(marker)}`, {}, simulatorUrl())).body.data;
}

export function uniqueMarker(): string {
  return `marker-${randomUUID()}`;
}

export { triageSchema } from './schemas';

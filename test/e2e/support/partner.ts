import { Client } from 'pg';
import { baseUrl, call, CallOptions, newWorkspace, Reply, roomyWorkspace, Workspace } from './api';

export const ALLOWED_ORIGINS = ['https://app.partner.example', 'https://admin.partner.example'];

export async function setPartner(ws: Workspace, body: Record<string, unknown>): Promise<Reply> {
  return call('PUT', `/admin/v1/workspaces/${ws.workspaceId}/partner`, { token: process.env.E2E_ADMIN_TOKEN, body });
}

/** A workspace in partner mode; `enterprise` plans are roomy (no sub-workspace ceiling, a high rate limit). */
export async function partnerWorkspace(plan: 'enterprise' | 'genesis' = 'enterprise', origins = ALLOWED_ORIGINS): Promise<Workspace> {
  const ws = plan === 'enterprise' ? await roomyWorkspace() : await newWorkspace();
  const reply = await setPartner(ws, { enabled: true, allowed_origins: origins });
  if (reply.status !== 200) throw new Error(`enabling partner mode failed: ${reply.text}`);
  return ws;
}

export function v1(ws: Workspace, method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<Reply> {
  return call(method, path, { token: ws.apiKey, ...(body === undefined ? {} : { body }), ...options });
}

export async function subWorkspace(ws: Workspace, body: Record<string, unknown>): Promise<any> {
  const reply = await v1(ws, 'POST', '/v1/workspaces', body);
  if (reply.status !== 201 && reply.status !== 200) throw new Error(`sub-workspace creation failed: ${reply.text}`);
  return reply.body;
}

export async function embedSession(ws: Workspace, body: Record<string, unknown>): Promise<any> {
  const reply = await v1(ws, 'POST', '/v1/embed/sessions', body);
  if (reply.status !== 201) throw new Error(`embed session creation failed: ${reply.status} ${reply.text}`);
  return reply.body;
}

/** The launch URL's path and query, on the cluster's gateway (APP_URL names the public address, not the test's). */
export function launchPath(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

export interface Launch {
  status: number;
  location: string | null;
  setCookie: string | null;
  csp: string | null;
  contentType: string | null;
  text: string;
  /** The embed cookie's token, when one was set. */
  token: string | null;
}

export async function launch(url: string): Promise<Launch> {
  const response = await fetch(`${baseUrl()}${launchPath(url)}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  const setCookie = response.headers.get('set-cookie');
  const match = setCookie ? /ds_embed=([A-Za-z0-9_-]{43})/.exec(setCookie) : null;
  return {
    status: response.status,
    location: response.headers.get('location'),
    setCookie,
    csp: response.headers.get('content-security-policy'),
    contentType: response.headers.get('content-type'),
    text: await response.text(),
    token: match?.[1] ?? null,
  };
}

/** Opens a session and redeems its ticket: the embed cookie's token. */
export async function openEmbed(ws: Workspace, body: Record<string, unknown>): Promise<{ session: any; token: string }> {
  const session = await embedSession(ws, body);
  const launched = await launch(session.url);
  if (!launched.token) throw new Error(`launch failed: ${launched.status} ${launched.text}`);
  return { session, token: launched.token };
}

export function asEmbed(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return call(method, path, { headers: { cookie: `ds_embed=${token}`, ...headers }, ...(body === undefined ? {} : { body }) });
}

export async function withDatabase<T>(work: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: process.env.E2E_DATABASE_URL });
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}

/** Polls until `check` holds (the event consumers work in the background), failing with the last value after ~20 s. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let attempt = 0; attempt < 200 && !check(value); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

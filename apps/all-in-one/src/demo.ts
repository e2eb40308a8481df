import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomAlphanumeric } from '@ds/ids';
import { Template, TEMPLATES } from '@ds/decision-schema';
import { demoDecisionRepair, DemoDecisionState, isDemoWorkspaceName } from './demo-repair';

/**
 * What the launcher keeps of the demo between starts, in `DATA_DIR/demo-user.json` (mode 0600): the demo user's
 * password and the plain API key, which grant the same access to a demo workspace, and the ids of what it seeded.
 */
interface DemoState {
  email: string;
  password: string;
  workspace_id?: string;
  decision_id?: string;
  key_id?: string;
  key?: string;
}

interface Reply {
  status: number;
  body: any;
}

/** A step of the demo set-up that did not go as the API promised; its message is the one line the launcher prints. */
export class DemoSetupError extends Error {}

const KEY_NAME = 'demo';

async function call(baseUrl: string, method: string, path: string, token: string | null, body?: unknown): Promise<Reply> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

function expectStatus(result: Reply, status: number, what: string): any {
  if (result.status === status) return result.body;
  const error = result.body?.error;
  const reason = error?.code ? `${error.code}: ${error.message}` : JSON.stringify(result.body);
  throw new DemoSetupError(`failed to ${what} (${result.status} ${reason})`);
}

function readState(file: string): DemoState | null {
  if (!existsSync(file)) return null;
  let state: DemoState;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as DemoState;
  } catch {
    throw new DemoSetupError(`failed to read ${file}: it is not JSON`);
  }
  if (typeof state?.email !== 'string' || typeof state.password !== 'string') throw new DemoSetupError(`failed to read ${file}: it names no demo user`);
  return state;
}

/** Written whole or not at all, and readable by this user alone: it holds a password and a live key. */
function writeState(file: string, state: DemoState): void {
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(state, null, 2), { mode: 0o600 });
  renameSync(partial, file);
  chmodSync(file, 0o600);
}

/**
 * Seeds the demo through the public application API, as a user would, or finds what an earlier start seeded and
 * mends it: the demo user, one workspace, one live key (kept and printed again at every start), and a deployed
 * decision from a template. Restarts reuse all of it, so nothing the demo user owns grows with them.
 */
export async function seedDemo(baseUrl: string, dataDir: string): Promise<string> {
  const stateFile = join(dataDir, 'demo-user.json');
  const api = (method: string, path: string, body?: unknown) => call(baseUrl, method, path, session, body);
  let session: string | null = null;

  let state = readState(stateFile);
  if (state) {
    session = expectStatus(
      await call(baseUrl, 'POST', '/app/v1/auth/sign-in', null, { email: state.email, password: state.password }),
      200,
      'sign in as the demo user',
    ).session.token;
  } else {
    // An address of this data folder's own: a database shared with another data folder already knows the other's.
    state = { email: `demo-${randomAlphanumeric(8).toLowerCase()}@example.com`, password: `demo${randomAlphanumeric(16)}7` };
    session = expectStatus(
      await call(baseUrl, 'POST', '/app/v1/auth/sign-up', null, { email: state.email, password: state.password, name: 'Demo User' }),
      201,
      'sign up the demo user',
    ).session.token;
    writeState(stateFile, state);
  }

  const workspaceId = await demoWorkspace(api, state);
  if (workspaceId !== state.workspace_id) {
    state = { email: state.email, password: state.password, workspace_id: workspaceId };
    writeState(stateFile, state);
  }
  const template = TEMPLATES.find((t) => t.id === 'support-triage') ?? TEMPLATES[0];
  if (!template) throw new DemoSetupError('failed: there is no decision template to seed');
  const decision = await demoDecision(api, workspaceId, state.decision_id, template);
  const key = await demoKey(api, workspaceId, state);
  if (decision.id !== state.decision_id || key.id !== state.key_id) {
    state = { ...state, decision_id: decision.id, key_id: key.id, key: key.key };
    writeState(stateFile, state);
  }

  const curl = [
    `curl -s -X POST ${baseUrl}/v1/decisions/${decision.slug} \\`,
    `  -H 'Authorization: Bearer ${key.key}' \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '${JSON.stringify({ state: template.sample_state }).replace(/'/g, "'\\''")}'`,
  ].join('\n');
  return [
    'Demo ready.',
    `  application:      ${baseUrl}/  (sign in as the user below)`,
    `  application user: ${state.email} (password in ${stateFile})`,
    `  workspace:        ${workspaceId}`,
    `  API key:          ${key.key}   (kept in ${stateFile}; the same at every start)`,
    `  decision:         ${decision.slug} (${decision.name}), version ${decision.version} deployed`,
    '',
    'Run it:',
    curl,
  ].join('\n');
}

type Api = (method: string, path: string, body?: unknown) => Promise<Reply>;

/** The workspace of the last start; or else a demo workspace an earlier version of the launcher made; or a new one. */
async function demoWorkspace(api: Api, state: DemoState): Promise<string> {
  if (state.workspace_id) {
    const found = await api('GET', `/app/v1/workspaces/${state.workspace_id}`);
    if (found.status === 200) return state.workspace_id;
    if (found.status !== 404 && found.status !== 403) expectStatus(found, 200, 'read the demo workspace');
  }
  const owned = expectStatus(await api('GET', '/app/v1/workspaces'), 200, 'list the demo user’s workspaces') as {
    data: Array<{ id: string; name: string; role: string }>;
  };
  const earlier = owned.data.filter((workspace) => workspace.role === 'owner' && isDemoWorkspaceName(workspace.name));
  // Names sort by their date: the newest earlier demo is the last.
  const adopted = earlier.at(-1);
  if (adopted) return adopted.id;
  return expectStatus(await api('POST', '/app/v1/workspaces', { name: 'Demo' }), 201, 'create the demo workspace').id;
}

interface DemoDecision {
  id: string;
  slug: string;
  name: string;
  version: number;
}

/** The decision of the last start (by id, so a renamed slug is followed), or the template's by slug, or a new one; deployed and enabled. */
async function demoDecision(api: Api, workspaceId: string, decisionId: string | undefined, template: Template): Promise<DemoDecision> {
  const base = `/app/v1/workspaces/${workspaceId}/decisions`;
  let found: Reply | null = decisionId ? await api('GET', `${base}/${decisionId}`) : null;
  if (found?.status !== 200) found = await api('GET', `${base}/${template.id}`);
  let details: DemoDecisionState & { id: string; slug: string; name: string };
  let created = false;
  if (found.status === 200) details = found.body;
  else if (found.status === 404) {
    created = true;
    const fresh = expectStatus(
      await api('POST', base, { slug: template.id, name: template.name, description: template.description, schema: template.schema }),
      201,
      'create the demo decision',
    );
    details = { ...fresh, active_version: null, endpoint_enabled: true, active_schema: null };
  } else return expectStatus(found, 200, 'read the demo decision');

  const repair = demoDecisionRepair(details, template);
  let version = details.active_version;
  if (repair.redeployTemplate) {
    if (!created) {
      expectStatus(
        await api('PUT', `${base}/${details.id}/draft`, { schema: template.schema, revision: details.revision }),
        200,
        'restore the demo decision’s draft',
      );
    }
    version = expectStatus(await api('POST', `${base}/${details.id}/deploy`), 201, 'deploy the demo decision').version;
  }
  if (repair.enableEndpoint) expectStatus(await api('PUT', `${base}/${details.id}/endpoint`, { enabled: true }), 200, 'turn the demo decision’s endpoint on');
  return { id: details.id, slug: details.slug, name: details.name, version: version! };
}

/**
 * The key kept from the last start while it is still active; otherwise a new one, and the launcher's earlier demo
 * keys in the workspace (their secrets are not kept anywhere) are revoked, so the demo holds one active key.
 */
async function demoKey(api: Api, workspaceId: string, state: DemoState): Promise<{ id: string; key: string }> {
  const base = `/app/v1/workspaces/${workspaceId}/api-keys`;
  const active = expectStatus(await api('GET', base), 200, 'list the demo workspace’s keys') as { data: Array<{ id: string; name: string }> };
  if (state.key_id && state.key && active.data.some((key) => key.id === state.key_id)) return { id: state.key_id, key: state.key };
  const created = expectStatus(await api('POST', base, { name: KEY_NAME, mode: 'live' }), 201, 'create the demo key');
  for (const stale of active.data.filter((key) => key.name === KEY_NAME)) {
    expectStatus(await api('DELETE', `${base}/${stale.id}`), 204, 'revoke an earlier demo key');
  }
  return { id: created.id, key: created.key };
}

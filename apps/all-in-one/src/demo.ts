import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomAlphanumeric } from '@ds/ids';
import { TEMPLATES } from '@ds/decision-schema';

interface DemoCredentials {
  email: string;
  password: string;
}

async function call(baseUrl: string, method: string, path: string, token: string | null, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

function expectStatus(result: { status: number; body: unknown }, status: number, what: string): any {
  if (result.status !== status) throw new Error(`demo set-up failed to ${what}: ${result.status} ${JSON.stringify(result.body)}`);
  return result.body;
}

/**
 * Seeds a demo through the public application API, as a user would: the demo user (its password kept in
 * the data folder), a fresh workspace, a live key shown once, and a deployed decision from a template.
 */
export async function seedDemo(baseUrl: string, dataDir: string): Promise<string> {
  const credentialsFile = join(dataDir, 'demo-user.json');
  let credentials: DemoCredentials;
  let session: string;
  if (existsSync(credentialsFile)) {
    credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as DemoCredentials;
    session = expectStatus(await call(baseUrl, 'POST', '/app/v1/auth/sign-in', null, credentials), 200, 'sign in').session.token;
  } else {
    credentials = { email: 'demo@example.com', password: `demo${randomAlphanumeric(16)}7` };
    session = expectStatus(await call(baseUrl, 'POST', '/app/v1/auth/sign-up', null, { ...credentials, name: 'Demo User' }), 201, 'sign up').session.token;
    writeFileSync(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
  }
  const workspace = expectStatus(
    await call(baseUrl, 'POST', '/app/v1/workspaces', session, { name: `Demo ${new Date().toISOString()}` }),
    201,
    'create a workspace',
  );
  const key = expectStatus(
    await call(baseUrl, 'POST', `/app/v1/workspaces/${workspace.id}/api-keys`, session, { name: 'demo', mode: 'live' }),
    201,
    'create a key',
  );
  const template = TEMPLATES.find((t) => t.id === 'support-triage') ?? TEMPLATES[0];
  if (!template) throw new Error('demo set-up failed: there is no decision template to seed');
  const decision = expectStatus(
    await call(baseUrl, 'POST', `/app/v1/workspaces/${workspace.id}/decisions`, session, {
      slug: template.id,
      name: template.name,
      description: template.description,
      schema: template.schema,
    }),
    201,
    'create the decision',
  );
  expectStatus(await call(baseUrl, 'POST', `/app/v1/workspaces/${workspace.id}/decisions/${decision.id}/deploy`, session), 201, 'deploy the decision');
  const curl = [
    `curl -s -X POST ${baseUrl}/v1/decisions/${template.id} \\`,
    `  -H 'Authorization: Bearer ${key.key}' \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '${JSON.stringify({ state: template.sample_state }).replace(/'/g, "'\\''")}'`,
  ].join('\n');
  return [
    'Demo ready.',
    `  application:      ${baseUrl}/  (sign in as the user below)`,
    `  application user: ${credentials.email} (password in ${credentialsFile})`,
    `  workspace:        ${workspace.id}`,
    `  API key:          ${key.key}   (shown once)`,
    `  decision:         ${template.id} (${template.name}), version 1 deployed`,
    '',
    'Run it:',
    curl,
  ].join('\n');
}

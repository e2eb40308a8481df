import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Browser, chromium, Frame, Page } from 'playwright-core';
import { baseUrl, defined, deployedDecision, triageSchema, Workspace } from './support/api';
import { embedSession, launchPath, partnerWorkspace, subWorkspace, v1 } from './support/partner';

/**
 * The embedded editor in a real browser: a partner's page on one origin (127.0.0.1) frames the launch URL
 * served from another site (localhost), as a partner's app frames the service's application.
 */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const REOPEN_TEXT = 'Reopen the editor from your app';
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const DECISION_NAME = 'Decision embed-triage';

let browser: Browser;
let host: Server;
let hostOrigin: string;
let strangerHost: Server;
let strangerOrigin: string;
let partner: Workspace;
let sub: { id: string; external_id: string };
/** The sub-workspace's copy of the partner's decision. */
let decisionId: string;

/** A host page that frames `?src=`: a partner's own app. */
function hostServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const src = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('src') ?? 'about:blank';
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html><body><h1>Partner app</h1><iframe id="editor" src="${src.replace(/"/g, '&quot;')}" width="800" height="600"></iframe></body></html>`,
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })),
  );
}

/** The launch URL on the gateway, spelled with `localhost` so that it is another site than the host page. */
function onLocalhost(url: string): string {
  const gateway = new URL(baseUrl());
  return `http://localhost:${gateway.port}${launchPath(url)}`;
}

async function openHostPage(page: Page, origin: string, src: string): Promise<Frame> {
  await page.goto(`${origin}/?src=${encodeURIComponent(src)}`, { waitUntil: 'load' });
  const handle = await page.waitForSelector('#editor');
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('the iframe has no frame');
  await frame.waitForLoadState('load');
  return frame;
}

/** Console errors (a CSP violation included) and uncaught errors of the page and its frames. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return problems;
}

/** Serious and critical axe-core violations of the embedded screen as it is now. */
async function axe(frame: Frame): Promise<string[]> {
  const violations = await frame.evaluate(async (source) => {
    if (!(globalThis as any).axe) (0, eval)(source);
    const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return result.violations as Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
  }, AXE_SOURCE);
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

/** The hrefs of the links inside `selector`. */
function linksIn(frame: Frame, selector: string): Promise<string[]> {
  return frame.$$eval(`${selector} a`, (links) => links.map((link: any) => String(link.getAttribute('href'))));
}

/** What the embedded page itself sees of its session: the status of an application call made from inside the frame. */
function sessionStatusFrom(frame: Frame): Promise<number> {
  return frame.evaluate(async () => (await fetch('/app/v1/embed/session')).status);
}

beforeAll(async () => {
  ({ server: host, origin: hostOrigin } = await hostServer());
  ({ server: strangerHost, origin: strangerOrigin } = await hostServer());
  partner = await partnerWorkspace('enterprise', [hostOrigin, 'https://app.partner.example']);
  await deployedDecision(partner, 'embed-triage', triageSchema());
  sub = await subWorkspace(partner, { external_id: `browser-${Date.now()}`, name: 'Browser', seed: { decisions: ['embed-triage'] } });
  decisionId = defined((sub as unknown as { seed: { created: Array<{ id: string }> } }).seed.created[0]).id;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => host?.close(resolve));
  await new Promise((resolve) => strangerHost?.close(resolve));
});

describe('the embedded editor in Chromium', () => {
  it('opens at the start path inside a cross-site iframe, then shows the reopen page on a second load', async () => {
    const session = await embedSession(partner, { workspace: sub.id, user: { id: 'browser-user' }, start_path: '/decisions/new', origins: [hostOrigin] });
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watch(page);
    const frame = await openHostPage(page, hostOrigin, onLocalhost(session.url));
    expect(new URL(frame.url()).pathname).toBe('/decisions/new');
    expect(new URL(frame.url()).hostname).toBe('localhost');
    // The cookie set by the launch was accepted in the third-party frame: the page's own call is in the session.
    expect(await sessionStatusFrom(frame)).toBe(200);
    const seen = await frame.evaluate(async () => (await fetch('/app/v1/embed/session')).json());
    expect(seen).toMatchObject({ workspace_id: sub.id, user: { id: 'browser-user' }, start_path: '/decisions/new' });
    const decisions = await frame.evaluate(async (ws) => (await fetch(`/app/v1/workspaces/${ws}/decisions`)).status, sub.id);
    expect(decisions).toBe(200);

    // The gallery, and a write from the application's own page carried by the cookie: a blank decision.
    await frame.locator('button:has-text("Blank decision")').dispatchEvent('click');
    await frame.fill('input[name="name"]', 'Made in the frame');
    await frame.fill('input[name="slug"]', 'made-in-the-frame');
    await frame.locator('form.inline-form').evaluate((form: any) => form.requestSubmit());
    await frame.waitForSelector('h1:has-text("Made in the frame")');
    expect(new URL(frame.url()).pathname).toMatch(/^\/decisions\/dec_[A-Za-z0-9]{20}\/editor$/);
    expect(problems).toEqual([]);

    const again = await openHostPage(page, hostOrigin, onLocalhost(session.url));
    expect(await again.textContent('body')).toContain(REOPEN_TEXT);
    expect(await again.textContent('h1')).toBe('This editor session has ended');
    await context.close();
  });

  it('opens the sub-workspace’s decision in the editor with only what the session allows, in its theme and language', async () => {
    const session = await embedSession(partner, {
      workspace: sub.id,
      user: { id: 'editor-user', name: 'Ada' },
      permissions: ['decisions:read', 'decisions:write'],
      start_path: `/decisions/${decisionId}/editor`,
      origins: [hostOrigin],
      theme: 'dark',
      locale: 'pt',
    });
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const problems = watch(page);
    const frame = await openHostPage(page, hostOrigin, onLocalhost(session.url));
    // The editor of the copied decision, not the sign-in page: its name heads the screen.
    await frame.waitForSelector(`h1:has-text("${DECISION_NAME}")`);
    expect(new URL(frame.url()).pathname).toBe(`/decisions/${decisionId}/editor`);
    expect(await frame.evaluate(() => (globalThis as any).document.documentElement.dataset.theme)).toBe('dark');
    expect(await frame.evaluate(() => (globalThis as any).document.documentElement.lang)).toBe('pt');
    // Writing is granted: the form is editable. Deploying and executions are not: their tabs are not offered.
    // Reading the decision covers its quality report.
    expect(await frame.locator('fieldset.plain input').first().isDisabled()).toBe(false);
    const tabs = await linksIn(frame, 'nav.tabs');
    expect(tabs).toEqual([`/decisions/${decisionId}/quality`, `/decisions/${decisionId}/editor`, `/decisions/${decisionId}/playground`]);
    // No account of its own: no sign-out, no workspace switcher, no account screens in the navigation.
    expect(await frame.locator('button:has-text("Sair"), .ws-switch, .menu-toggle').count()).toBe(0);
    expect(await linksIn(frame, 'nav.side')).toEqual(['/decisions']);
    expect(await axe(frame)).toEqual([]);

    // The list of the sub-workspace, reached through the application's own navigation.
    await frame.locator('nav.side a[href="/decisions"]').dispatchEvent('click');
    await frame.waitForSelector(`table a:has-text("${DECISION_NAME}")`);
    expect(await frame.locator('a[href="/decisions/new"]').count()).toBe(1);
    expect(await axe(frame)).toEqual([]);

    // A screen outside the permissions, loaded directly, says so instead of offering it.
    await frame.goto(new URL(`/decisions/${decisionId}/deploy`, frame.url()).toString());
    await frame.waitForSelector('[role="alert"]');
    expect(await frame.textContent('[role="alert"]')).toBe('Esta sessão do editor não permite isso.');
    expect(await frame.locator('button.primary').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('offers a read-only session the list and a read-only editor, and nothing that writes', async () => {
    const session = await embedSession(partner, {
      workspace: sub.id,
      user: { id: 'reader' },
      permissions: ['decisions:read'],
      start_path: '/decisions',
      origins: [hostOrigin],
      theme: 'light',
      locale: 'en',
    });
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const problems = watch(page);
    const frame = await openHostPage(page, hostOrigin, onLocalhost(session.url));
    await frame.waitForSelector(`table a:has-text("${DECISION_NAME}")`);
    expect(await frame.locator('a[href="/decisions/new"]').count()).toBe(0);
    expect(await frame.locator('th:has-text("Last run")').count()).toBe(0);
    expect(await axe(frame)).toEqual([]);

    await frame.locator(`table a:has-text("${DECISION_NAME}")`).dispatchEvent('click');
    await frame.waitForSelector(`h1:has-text("${DECISION_NAME}")`);
    expect(await frame.textContent('.notice')).toBe('You can read this decision but not change it.');
    expect(await frame.locator('fieldset.plain input').first().isDisabled()).toBe(true);
    expect((await linksIn(frame, 'nav.tabs')).map((href) => href.split('/').pop())).toEqual(['quality', 'editor']);
    expect(await frame.locator('button:has-text("Save draft")').count()).toBe(0);
    expect(await axe(frame)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows the reopen page after a revoke, for a session in use and for an unused launch URL', async () => {
    const inUse = await embedSession(partner, { workspace: sub.id, user: { id: 'revoked-user' }, origins: [hostOrigin] });
    const unused = await embedSession(partner, { workspace: sub.id, user: { id: 'revoked-user' }, origins: [hostOrigin] });
    const context = await browser.newContext();
    const page = await context.newPage();
    const frame = await openHostPage(page, hostOrigin, onLocalhost(inUse.url));
    expect(await sessionStatusFrom(frame)).toBe(200);

    await frame.waitForSelector(`table a:has-text("${DECISION_NAME}")`);

    expect((await v1(partner, 'POST', '/v1/embed/sessions/revoke', { user_id: 'revoked-user' })).body).toEqual({ revoked: 2 });
    expect(await sessionStatusFrom(frame)).toBe(401);
    // The application's next call answers 401: it leaves for the page that says to reopen it from the partner's app.
    await frame.locator('nav.side a[href="/executions"]').dispatchEvent('click');
    await frame.waitForURL(/\/embed\/ended$/);
    expect(await frame.textContent('body')).toContain(REOPEN_TEXT);

    const revoked = await openHostPage(page, hostOrigin, onLocalhost(unused.url));
    expect(await revoked.textContent('body')).toContain(REOPEN_TEXT);
    await context.close();
  });

  it('cannot be framed by an origin outside the session’s', async () => {
    const session = await embedSession(partner, { workspace: sub.id, user: { id: 'framed' }, origins: [hostOrigin] });
    const context = await browser.newContext();
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/frame-ancestors/.test(message.text())) blocked.push(message.text());
    });
    const frame = await openHostPage(page, strangerOrigin, onLocalhost(session.url));
    // Chromium refuses to render the launch answer inside a frame its CSP does not allow: an error page instead.
    expect(frame.url()).toMatch(/^chrome-error:/);
    expect(await frame.evaluate(() => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText)).not.toContain(
      REOPEN_TEXT,
    );
    expect(blocked.length).toBeGreaterThan(0);
    await context.close();
  });
});

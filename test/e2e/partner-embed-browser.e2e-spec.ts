import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Browser, chromium, Frame, Page } from 'playwright-core';
import { baseUrl, Workspace } from './support/api';
import { embedSession, launchPath, partnerWorkspace, subWorkspace, v1 } from './support/partner';

/**
 * The embedded editor in a real browser: a partner's page on one origin (127.0.0.1) frames the launch URL
 * served from another site (localhost), as a partner's app frames the service's application.
 */
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const REOPEN_TEXT = 'Reopen the editor from your app';

let browser: Browser;
let host: Server;
let hostOrigin: string;
let strangerHost: Server;
let strangerOrigin: string;
let partner: Workspace;
let sub: { id: string; external_id: string };

/** A host page that frames `?src=`: a partner's own app. */
function hostServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const src = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('src') ?? 'about:blank';
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html><body><h1>Partner app</h1><iframe id="editor" src="${src.replace(/"/g, '&quot;')}" width="800" height="600"></iframe></body></html>`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
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

/** What the embedded page itself sees of its session: the status of an application call made from inside the frame. */
function sessionStatusFrom(frame: Frame): Promise<number> {
  return frame.evaluate(async () => (await fetch('/app/v1/embed/session')).status);
}

beforeAll(async () => {
  ({ server: host, origin: hostOrigin } = await hostServer());
  ({ server: strangerHost, origin: strangerOrigin } = await hostServer());
  partner = await partnerWorkspace('enterprise', [hostOrigin, 'https://app.partner.example']);
  sub = await subWorkspace(partner, { external_id: `browser-${Date.now()}`, name: 'Browser' });
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
    const frame = await openHostPage(page, hostOrigin, onLocalhost(session.url));
    expect(new URL(frame.url()).pathname).toBe('/decisions/new');
    expect(new URL(frame.url()).hostname).toBe('localhost');
    // The cookie set by the launch was accepted in the third-party frame: the page's own call is in the session.
    expect(await sessionStatusFrom(frame)).toBe(200);
    const seen = await frame.evaluate(async () => (await fetch('/app/v1/embed/session')).json());
    expect(seen).toMatchObject({ workspace_id: sub.id, user: { id: 'browser-user' }, start_path: '/decisions/new' });
    const decisions = await frame.evaluate(async (ws) => (await fetch(`/app/v1/workspaces/${ws}/decisions`)).status, sub.id);
    expect(decisions).toBe(200);

    const again = await openHostPage(page, hostOrigin, onLocalhost(session.url));
    expect(await again.textContent('body')).toContain(REOPEN_TEXT);
    expect(await again.textContent('h1')).toBe('This editor session has ended');
    await context.close();
  });

  it('shows the reopen page after a revoke, for a session in use and for an unused launch URL', async () => {
    const inUse = await embedSession(partner, { workspace: sub.id, user: { id: 'revoked-user' }, origins: [hostOrigin] });
    const unused = await embedSession(partner, { workspace: sub.id, user: { id: 'revoked-user' }, origins: [hostOrigin] });
    const context = await browser.newContext();
    const page = await context.newPage();
    const frame = await openHostPage(page, hostOrigin, onLocalhost(inUse.url));
    expect(await sessionStatusFrom(frame)).toBe(200);

    expect((await v1(partner, 'POST', '/v1/embed/sessions/revoke', { user_id: 'revoked-user' })).body).toEqual({ revoked: 2 });
    expect(await sessionStatusFrom(frame)).toBe(401);
    // Where the editor goes when its calls say the session ended.
    await frame.goto(new URL('/embed/ended', frame.url()).toString());
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
    expect(await frame.evaluate(() => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText)).not.toContain(REOPEN_TEXT);
    expect(blocked.length).toBeGreaterThan(0);
    await context.close();
  });
});

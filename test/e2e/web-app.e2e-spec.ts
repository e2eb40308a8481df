import { mkdirSync, readFileSync } from 'node:fs';
import { request as httpRequest, IncomingHttpHeaders } from 'node:http';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Browser, BrowserContext, chromium, Locator, Page } from 'playwright-core';
import { baseUrl, call, expectError, signUp } from './support/api';
import { waitForMail } from './support/mailbox';

/**
 * The web application in a real headless Chromium against the shared cluster: the main journey of an author,
 * an accessibility check (axe-core) on every screen in both themes, and the narrow (360 px) layout.
 * With WEB_SCREENSHOTS=<dir> it also writes the screenshots the README links to.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SCREENSHOTS = process.env.WEB_SCREENSHOTS ? resolve(process.env.WEB_SCREENSHOTS) : null;
const PASSWORD = 'correcthorse42';

let browser: Browser;
let context: BrowserContext;
const problems: string[] = [];

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  context = await browser.newContext({ baseURL: baseUrl(), viewport: { width: 1280, height: 860 } });
  context.setDefaultTimeout(20_000);
});

afterAll(async () => {
  await browser?.close();
});

function watch(page: Page): void {
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** Serious and critical axe-core violations of the page as it is now, in the theme it is shown in. */
async function axe(page: Page): Promise<string[]> {
  const violations = await page.evaluate(async (source: string) => {
    if (!(globalThis as any).axe) (0, eval)(source);
    const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return result.violations as AxeViolation[];
  }, AXE_SOURCE);
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

const checked: Record<string, string[]> = {};

/** Checks the screen in light and dark, and writes its screenshots when asked to. */
async function screen(page: Page, name: string, part?: Locator): Promise<void> {
  await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
  for (const theme of ['light', 'dark'] as const) {
    await page.evaluate((value) => ((globalThis as any).document.documentElement.dataset.theme = value), theme);
    checked[`${name} (${theme})`] = await axe(page);
    if (SCREENSHOTS) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      const path = join(SCREENSHOTS, `${name}-${theme}.png`);
      // A part below the fold (a run's result) is shot on its own rather than scrolled to.
      await (part ? part.screenshot({ path }) : page.screenshot({ path, fullPage: false }));
    }
  }
  await page.evaluate(() => ((globalThis as any).document.documentElement.dataset.theme = 'system'));
}

/** A GET (or HEAD) whose body is kept as the bytes sent: fetch would decode it and hide Content-Encoding's effect. */
function rawGet(path: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((done, fail) => {
    const sent = httpRequest(`${baseUrl()}${path}`, { method, headers }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (chunk: Buffer) => chunks.push(chunk));
      reply.on('end', () => done({ status: reply.statusCode!, headers: reply.headers, body: Buffer.concat(chunks) }));
      reply.on('error', fail);
    });
    sent.on('error', fail);
    sent.end();
  });
}

describe('the gateway serves the web application', () => {
  it('serves index.html for app routes with a strict CSP and no caching, and hashed assets for a year', async () => {
    for (const path of ['/', '/sign-in', '/decisions', '/decisions/dec_x/editor', '/executions/exec_1', '/keys']) {
      const reply = await fetch(`${baseUrl()}${path}`);
      expect({ path, status: reply.status }).toEqual({ path, status: 200 });
      expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
      expect(reply.headers.get('cache-control')).toBe('no-cache');
      const csp = reply.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      const html = await reply.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
      const script = await fetch(`${baseUrl()}${asset}`);
      expect(script.status).toBe(200);
      expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    }
  });

  it('answers the page and every asset in the brotli or gzip copy the client takes, and the copy decodes to the file', async () => {
    const page = await rawGet('/sign-in', { 'accept-encoding': 'identity' });
    const assets = [...page.body.toString().matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    // The entry script and the shared files it imports (preloaded); each screen's own files come by route (web-routes.e2e-spec.ts).
    expect(assets.filter((path) => path.endsWith('.js')).length).toBeGreaterThanOrEqual(1);
    expect(assets.filter((path) => path.endsWith('.js')).some((path) => /\/assets\/index-[^/]+\.js$/.test(path))).toBe(true);
    expect(assets.filter((path) => path.endsWith('.css'))).toHaveLength(1);
    for (const path of ['/sign-in', ...assets]) {
      const caching = path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      const plain = await rawGet(path, { 'accept-encoding': 'identity' });
      const unasked = await rawGet(path, {});
      const br = await rawGet(path, { 'accept-encoding': 'gzip, deflate, br, zstd' });
      const gzip = await rawGet(path, { 'accept-encoding': 'gzip, br;q=0' });
      const refused = await rawGet(path, { 'accept-encoding': 'br;q=0, gzip;q=0' });
      const replies = { plain, unasked, br, gzip, refused };
      for (const [name, reply] of Object.entries(replies)) {
        expect({ path, name, status: reply.status }).toEqual({ path, name, status: 200 });
        expect({ path, name, vary: reply.headers.vary }).toEqual({ path, name, vary: 'Accept-Encoding' });
        expect({ path, name, caching: reply.headers['cache-control'] }).toEqual({ path, name, caching });
        expect({ path, name, type: reply.headers['content-type'] }).toEqual({ path, name, type: plain.headers['content-type'] });
        expect({ path, name, length: Number(reply.headers['content-length']) }).toEqual({ path, name, length: reply.body.length });
      }
      expect([plain, unasked, refused].map((reply) => reply.headers['content-encoding'])).toEqual([undefined, undefined, undefined]);
      expect(unasked.body.equals(plain.body) && refused.body.equals(plain.body)).toBe(true);
      expect(br.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
      expect(br.body.length).toBeLessThan(plain.body.length / 2);

      // Each copy has its own tag, and a client holding it is answered 304 without a body.
      expect(new Set([plain.headers.etag, br.headers.etag, gzip.headers.etag]).size).toBe(3);
      const revalidated = await rawGet(path, { 'accept-encoding': 'gzip, deflate, br', 'if-none-match': br.headers.etag! });
      expect({ status: revalidated.status, length: revalidated.body.length, etag: revalidated.headers.etag }).toEqual({
        status: 304,
        length: 0,
        etag: br.headers.etag,
      });
      expect(revalidated.headers.vary).toBe('Accept-Encoding');
      expect((await rawGet(path, { 'accept-encoding': 'gzip', 'if-none-match': br.headers.etag! })).status).toBe(200);

      const head = await rawGet(path, { 'accept-encoding': 'gzip, deflate, br' }, 'HEAD');
      expect({ status: head.status, encoding: head.headers['content-encoding'], length: head.headers['content-length'], body: head.body.length }).toEqual({
        status: 200,
        encoding: 'br',
        length: String(br.body.length),
        body: 0,
      });
    }
  });

  it('paints the shell before the script runs, in the theme the system asks for', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const shellContext = await browser.newContext({ baseURL: baseUrl(), viewport: { width: 1280, height: 860 }, colorScheme });
      try {
        const page = await shellContext.newPage();
        // As the page stands while the script is still on its way.
        await page.route('**/assets/*.js', (route) => route.abort());
        await page.goto('/sign-in');
        await page.getByText('Decision service').waitFor();
        expect(await page.getByRole('status').textContent()).toBe('Loading…');
        const colours = await page.evaluate(() => {
          const style = (selector: string) => (globalThis as any).getComputedStyle((globalThis as any).document.querySelector(selector));
          return { page: style('body').backgroundColor, bar: style('header').backgroundColor, text: style('.loading').color };
        });
        expect(colours).toEqual(
          colorScheme === 'dark'
            ? { page: 'rgb(18, 19, 24)', bar: 'rgb(28, 30, 37)', text: 'rgb(169, 173, 186)' }
            : { page: 'rgb(247, 247, 249)', bar: 'rgb(255, 255, 255)', text: 'rgb(90, 95, 109)' },
        );
        if (SCREENSHOTS) {
          mkdirSync(SCREENSHOTS, { recursive: true });
          await page.screenshot({ path: join(SCREENSHOTS, `loading-shell-${colorScheme}.png`) });
        }
      } finally {
        await shellContext.close();
      }
    }
  });

  it('answers the API error for unknown assets and never shadows the API', async () => {
    expectError(await call('GET', '/assets/missing.js'), 404, 'NOT_FOUND');
    expectError(await call('GET', '/assets/..%2F..%2Fpackage.json'), 404, 'NOT_FOUND');
    expectError(await call('GET', '/v1/nothing-here'), 404, 'NOT_FOUND');
    expectError(await call('GET', '/app/v1/nothing-here'), 404, 'NOT_FOUND');
    expectError(await call('GET', '/decisions/a/b/c'), 404, 'NOT_FOUND');
    expect((await call('GET', '/health')).body).toEqual({ status: 'ok' });
  });
});

describe('an author’s journey in the browser', () => {
  it('signs up, builds a decision from a template, resolves a conflict, runs, deploys and sees the execution', async () => {
    const page = await context.newPage();
    watch(page);
    const email = `web-${randomUUID()}@example.com`;
    const slug = `triage-${randomUUID().slice(0, 8)}`;

    // Sign up: the keyboard reaches the skip link first.
    await page.goto('/sign-up');
    await page.keyboard.press('Tab');
    await screen(page, 'sign-up');
    await page.getByLabel('Your name').fill('Web Author');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create an account' }).click();

    // Create a workspace.
    await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
    await expectText(page, 'You are not in any workspace yet');
    await screen(page, 'workspaces');
    await page.getByLabel('Workspace name').fill('Web journey');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('heading', { name: 'Decisions' }).waitFor();
    await expectText(page, 'No decisions yet');
    await screen(page, 'decisions-empty');

    // Start from a template.
    await page.getByRole('link', { name: 'New decision' }).click();
    await page.getByRole('heading', { name: 'Support ticket triage' }).waitFor();
    expect(await page.locator('.templates > li').count()).toBe(10);
    await page.getByRole('button', { name: 'Use this template Support ticket triage' }).click();
    await screen(page, 'templates');
    await page.getByLabel('Slug').fill(slug);
    await page.getByRole('button', { name: 'Create decision' }).click();
    await page.getByRole('heading', { name: 'Support ticket triage' }).waitFor();
    await expectText(page, 'The schema is valid.');
    await screen(page, 'editor');
    const editorUrl = page.url();

    // Edit a question: a bad key shows an issue at its path, in the list and beside the field; fixing it clears it.
    const key = page.locator('#f-questions_0_key');
    await key.fill('Intent!');
    await page.locator('.issues li[data-path="questions.0.key"]').waitFor();
    expect(await key.getAttribute('aria-invalid')).toBe('true');
    // Save with an issue left saves nothing and shows the issues instead.
    await page.getByRole('button', { name: 'Save draft' }).click();
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('editor-issues');
    await screen(page, 'editor-issue');
    await key.fill('intent');
    await page.locator('.issues li[data-path="questions.0.key"]').waitFor({ state: 'detached' });
    await expectText(page, 'The schema is valid.');
    await page.locator('#f-questions_0_instructions').fill('What does the customer need? Pick the one main need.');

    // The JSON view shows the same document.
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    // CodeMirror draws only the lines near the view, and loads after the click. The line holding the cursor is always
    // drawn and kept in view: once the editor is there, walk the cursor down from its first line until the question's
    // line is drawn. (Wheeling the page could pass the line before CodeMirror drew it, or wheel before it loaded.)
    const instructionsLine = page.locator('#schema-json').getByText('Pick the one main need.');
    // #schema-json is CodeMirror's content element itself.
    const content = page.locator('#schema-json');
    await content.waitFor();
    await content.click({ position: { x: 4, y: 4 } });
    for (let step = 0; step < 400 && !(await instructionsLine.isVisible()); step++) await page.keyboard.press('ArrowDown');
    await instructionsLine.scrollIntoViewIfNeeded();
    await screen(page, 'editor-json');
    await page.getByRole('button', { name: 'Form', exact: true }).click();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await expectText(page, 'Saved revision 2.');

    // A second tab saves meanwhile; the first tab's save is refused and shown, then resolved on purpose.
    const other = await context.newPage();
    watch(other);
    await other.goto(editorUrl);
    await other.locator('#f-context').fill('Saved from the second tab.');
    await other.getByRole('button', { name: 'Save draft' }).click();
    await expectText(other, 'Saved revision 3.');
    await other.close();

    await page.locator('#f-context').fill('Saved from the first tab.');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.locator('.conflict').waitFor();
    await expectText(page, 'now revision 3');
    await screen(page, 'editor-conflict');
    // Both tabs changed the context: overwriting theirs is a deliberate second step.
    await page.getByRole('button', { name: 'Save mine over theirs' }).click();
    await page.locator('.conflict').getByRole('button', { name: 'Yes' }).click();
    await expectText(page, 'Saved revision 4.');

    const token = await page.evaluate(() => (globalThis as any).localStorage.getItem('ds.session'));
    const workspaces = await call('GET', '/app/v1/workspaces', { token });
    const ws = workspaces.body.data[0].id as string;
    const details = await call('GET', `/app/v1/workspaces/${ws}/decisions/${slug}`, { token });
    expect(details.body.revision).toBe(4);
    expect(details.body.draft.context).toBe('Saved from the first tab.');
    expect(details.body.draft.questions[0].instructions).toBe('What does the customer need? Pick the one main need.');

    // Playground: the draft starts from the template's sample state, not from "example" in every field.
    await page.getByRole('link', { name: 'Playground' }).click();
    expect(await page.locator('#state-subject').inputValue()).toBe('Board not loading - urgent');
    expect(await page.locator('#state-channel').inputValue()).toBe('email');
    await page.locator('#state-message').fill('I was charged twice this month, please refund one.');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    await expectText(page, 'Action:');
    expect(await page.locator('.result tbody tr').count()).toBe(4);
    // The words say what happened: a policy's action, continue when none matched, or the fallback named as such.
    const action = (await page.locator('.action-line strong').innerText()).trim();
    const reason = await page.locator('.result p', { hasText: 'Reason:' }).innerText();
    expect(reason).toMatch(new RegExp(`(so the action is ${action}|so the fallback action ${action} was taken)`));
    // Numbers are rounded for people: at most two decimals, confidences as whole percentages.
    for (const cell of await page.locator('.result tbody td').allInnerTexts()) expect(cell).not.toMatch(/\d\.\d{3,}/);
    for (const cell of await page.locator('.result tbody td:nth-child(3)').allInnerTexts()) expect(cell).toMatch(/^(—|[<>]?\d{1,3}%)$/);
    await screen(page, 'playground');
    await screen(page, 'playground-result', page.locator('.result'));

    // Deploy: the first deploy, confirmed in the dialog; then the draft equals the active version.
    await page.getByRole('link', { name: 'Deploy' }).click();
    await expectText(page, 'First deploy');
    await screen(page, 'deploy');
    await page.getByRole('button', { name: 'Deploy the draft' }).click();
    await page.getByRole('dialog', { name: 'Deploy the draft as version 1?' }).getByRole('button', { name: 'Deploy the draft' }).click();
    await expectText(page, 'Deployed version 1.');
    await expectText(page, 'The draft is the same as the active version 1: nothing to deploy.');

    // An API key, shown once.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('journey');
    await page.getByLabel('Mode').selectOption('live');
    await page.getByRole('button', { name: 'Create key' }).click();
    const apiKey = await page.locator('#created-key').inputValue();
    expect(apiKey).toMatch(/^svc_live_/);
    await screen(page, 'api-keys');

    // Run over HTTP with the key.
    const run = await call('POST', `/v1/decisions/${slug}`, { token: apiKey, body: { state: { message: 'How do I export a board to CSV?' } } });
    expect(run.status).toBe(200);

    // The execution appears in the list of live runs; the playground run joins it once its source is chosen.
    await page.getByRole('link', { name: 'Executions' }).click();
    const row = page.locator('table.executions tbody tr', { hasText: 'api' });
    await row.waitFor();
    expect(await page.locator('table.executions tbody tr', { hasText: 'playground' }).count()).toBe(0);
    await page.getByRole('checkbox', { name: 'Playground' }).check();
    await page.locator('table.executions tbody tr', { hasText: 'playground' }).waitFor();
    await screen(page, 'executions');
    // The row's first link opens the execution; the others lead to its deliveries.
    await row.getByRole('link').first().click();
    await expectText(page, run.body.execution_id);
    await screen(page, 'execution');

    // Filtered by status, then paged: 20 rows a page, the rest behind "Load more".
    for (let i = 0; i < 20; i++) {
      expect((await call('POST', `/v1/decisions/${slug}`, { token: apiKey, body: { state: { message: `Question ${i}` } } })).status).toBe(200);
    }
    await page.getByRole('link', { name: 'Executions', exact: true }).click();
    const rows = page.locator('table.executions tbody tr');
    await until(async () => (await rows.count()) === 20);
    await page.getByLabel('Status').selectOption('error');
    await expectText(page, 'No execution from the chosen sources matches Status: error.');
    await page.getByLabel('Status').selectOption('');
    await until(async () => (await rows.count()) === 20);
    // The 21 live runs; the playground run is not among them.
    await page.getByRole('button', { name: 'Load more' }).click();
    await until(async () => (await rows.count()) === 21);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);

    // The key revoked: "No" keeps it, "Yes" takes it off the list and its calls stop working.
    await page.getByRole('link', { name: 'API keys' }).click();
    const keyRow = page.locator('table tbody tr', { hasText: 'journey' });
    await keyRow.getByRole('button', { name: 'Revoke journey' }).click();
    await keyRow.getByRole('button', { name: 'No' }).click();
    await keyRow.getByRole('button', { name: 'Revoke journey' }).click();
    await keyRow.getByRole('button', { name: 'Yes' }).click();
    await keyRow.waitFor({ state: 'detached' });
    expect((await call('POST', `/v1/decisions/${slug}`, { token: apiKey, body: { state: { message: 'after' } } })).status).toBe(401);

    await page.getByRole('link', { name: 'Decisions' }).click();
    await page.locator('table tbody tr', { hasText: slug }).waitFor();
    await screen(page, 'decisions');
    // Members: add an existing user, change the role, remove them; the owner's own row offers neither.
    const colleague = await signUp();
    await page.getByRole('link', { name: 'Members' }).click();
    await page.locator('table tbody tr', { hasText: email }).waitFor();
    await page.getByLabel('E-mail').fill(colleague.email);
    await page.locator('form select[name=role]').selectOption('member');
    await page.getByRole('button', { name: 'Add member' }).click();
    const colleagueRow = page.locator('table tbody tr', { hasText: colleague.email });
    await colleagueRow.waitFor();
    await screen(page, 'members');
    await colleagueRow.getByLabel('Role of Test User').selectOption('viewer');
    await colleagueRow.locator('select').waitFor();
    await until(
      async () => (await call('GET', `/app/v1/workspaces/${ws}/members`, { token })).body.data.find((m: any) => m.email === colleague.email)?.role === 'viewer',
    );
    expect(await page.locator('table tbody tr', { hasText: email }).locator('select').count()).toBe(0);
    await colleagueRow.getByRole('button', { name: 'Remove Test User' }).click();
    await colleagueRow.getByRole('button', { name: 'Yes' }).click();
    await colleagueRow.waitFor({ state: 'detached' });

    // An invitation: its link shown once, pending until the invited person opens it signed in, and joins.
    const invitee = await signUp();
    await page.getByLabel("Invitee's address").fill(invitee.email);
    await page.getByLabel('Role to grant').selectOption('viewer');
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const link = new URL(await page.locator('#invitation-link').inputValue());
    expect(link.pathname).toBe('/invitations/accept');
    const pendingRow = page.locator('table.invitations tbody tr', { hasText: invitee.email });
    await pendingRow.waitFor();
    await screen(page, 'invitations');
    const guestContext = await browser.newContext({ baseURL: baseUrl(), viewport: { width: 1280, height: 860 } });
    try {
      const guest = await guestContext.newPage();
      await guest.goto(`${link.pathname}${link.search}`);
      await guest.getByRole('link', { name: 'Sign in and join' }).click();
      await screen(guest, 'accept-invitation');
      await guest.getByLabel('E-mail').fill(invitee.email);
      await guest.getByLabel('Password').fill(PASSWORD);
      await guest.getByRole('button', { name: 'Sign in', exact: true }).click();
      // Signing in from the invitation joins at once.
      await guest.waitForURL('**/decisions');
    } finally {
      await guestContext.close();
    }
    const joined = (await call('GET', `/app/v1/workspaces/${ws}/members`, { token })).body.data.find((m: any) => m.email === invitee.email);
    expect(joined?.role).toBe('viewer');
    await page.reload();
    await expectText(page, 'No pending invitations.');
    await page.getByRole('link', { name: 'Engine settings' }).click();
    await expectText(page, 'No provider key saved.');
    await screen(page, 'settings');
    await page.getByLabel('Engine of decisions that pin none').selectOption('checkpoint');
    await until(async () => (await call('GET', `/app/v1/workspaces/${ws}/engine-settings`, { token })).body.default_engine === 'checkpoint');
    await page.getByLabel('Engine of decisions that pin none').selectOption('');
    await until(async () => (await call('GET', `/app/v1/workspaces/${ws}/engine-settings`, { token })).body.default_engine === null);
    await page.getByRole('link', { name: 'Usage and billing' }).click();
    await expectText(page, 'genesis');
    await expectText(page, 'Executions are kept 7 days.');
    await page.getByLabel('Days to keep (1 to 7)').fill('3');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expectText(page, 'Executions are kept 3 days.');
    expect((await call('GET', `/app/v1/workspaces/${ws}/execution-retention`, { token })).body).toEqual({ days: 3, plan_days: 7, effective_days: 3 });
    await page.getByLabel('Cap per billing cycle (USD)').fill('12.34');
    await page.getByRole('button', { name: 'Set cap' }).click();
    await page.getByRole('button', { name: 'Remove the cap' }).waitFor();
    expect((await call('GET', `/app/v1/workspaces/${ws}`, { token })).body.account.spend_cap.spend_cap_cents).toBe(1234);
    await screen(page, 'billing');
    await page.getByRole('button', { name: 'Remove the cap' }).click();
    await until(async () => (await call('GET', `/app/v1/workspaces/${ws}`, { token })).body.account.spend_cap.spend_cap_cents === null);
    await page.getByRole('button', { name: "Use the plan's" }).click();
    await expectText(page, 'Executions are kept 7 days.');
    expect((await call('GET', `/app/v1/workspaces/${ws}/execution-retention`, { token })).body.days).toBeNull();

    // 360 px wide: nothing runs off the side of the screen.
    await page.setViewportSize({ width: 360, height: 780 });
    for (const path of ['/decisions', `/decisions/${slug}/editor`, `/decisions/${slug}/playground`, '/executions']) {
      await page.goto(path);
      await page.locator('#page-title').waitFor();
      const overflow = await page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth,
      );
      expect({ path, overflow }).toEqual({ path, overflow: 0 });
    }
    await screen(page, 'narrow-executions');

    // What an embed passes: locale and theme in the query.
    await page.goto('/decisions?locale=pt&theme=dark');
    await page.getByRole('link', { name: 'Decisões', exact: true }).waitFor();
    expect(await page.evaluate(() => [(globalThis as any).document.documentElement.lang, (globalThis as any).document.documentElement.dataset.theme])).toEqual([
      'pt',
      'dark',
    ]);
    await page.close();

    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(Object.keys(checked).length).toBeGreaterThanOrEqual(30);
    expect(problems).toEqual([]);
  }, 300_000);
});

describe('handing over, leaving and deleting a workspace in the browser', () => {
  it('the Owner makes a member the owner, stays as an admin, then leaves', async () => {
    const owner = await signUp();
    const colleague = await signUp();
    const created = await call('POST', '/app/v1/workspaces', { token: owner.session, body: { name: 'Handover' } });
    const ws = created.body.id as string;
    expect((await call('POST', `/app/v1/workspaces/${ws}/members`, { token: owner.session, body: { email: colleague.email, role: 'member' } })).status).toBe(
      201,
    );
    const roleOf = async (userId: string) =>
      (await call('GET', `/app/v1/workspaces/${ws}/members`, { token: colleague.session })).body.data.find((m: any) => m.user_id === userId)?.role;

    await inOwnBrowser(async (page) => {
      await signInWithPassword(page, owner);
      await page.getByRole('link', { name: 'Members' }).click();
      await expectText(page, 'The owner cannot leave');
      expect(await page.getByRole('button', { name: 'Leave workspace' }).count()).toBe(0);

      const colleagueRow = page.locator('table tbody tr', { hasText: colleague.email });
      await colleagueRow.getByRole('button', { name: 'Make owner Test User' }).click();
      await colleagueRow.getByRole('button', { name: 'Yes' }).click();
      await until(async () => (await roleOf(colleague.userId)) === 'owner');
      expect(await roleOf(owner.userId)).toBe('admin');
      // The shell sees the new role: no more hand-over buttons, and leaving is offered.
      await page.getByRole('button', { name: 'Leave workspace' }).waitFor();
      expect(await page.getByRole('button', { name: /^Make owner/ }).count()).toBe(0);
      expect(await axe(page)).toEqual([]);
      if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'members-after-handover.png') });

      await page.getByRole('button', { name: 'Leave workspace' }).click();
      await page.getByRole('button', { name: 'Yes' }).click();
      await page.waitForURL('**/workspaces');
      await expectText(page, 'You are not in any workspace yet.');
      expect(await roleOf(owner.userId)).toBeUndefined();
    });
    expect(problems).toEqual([]);
  }, 120_000);

  it('the Owner deletes the workspace after typing its name, once no paid subscription is live', async () => {
    const owner = await signUp();
    const created = await call('POST', '/app/v1/workspaces', { token: owner.session, body: { name: 'Short-lived' } });
    const ws = created.body.id as string;
    const plan = (name: string) => call('PUT', `/admin/v1/workspaces/${ws}/plan`, { token: process.env.E2E_ADMIN_TOKEN, body: { plan: name } });
    expect((await plan('developer')).status).toBe(200);

    await inOwnBrowser(async (page) => {
      await signInWithPassword(page, owner);
      await page.getByRole('link', { name: 'Members' }).click();
      const confirmation = page.getByLabel('Type Short-lived to confirm');
      const button = page.getByRole('button', { name: 'Delete workspace' });
      await confirmation.fill('Short-live');
      expect(await button.isDisabled()).toBe(true);
      await confirmation.fill('Short-lived');
      await button.click();
      await expectText(page, 'live developer subscription');
      expect(await axe(page)).toEqual([]);
      if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'members-delete-refused.png'), fullPage: true });

      expect((await plan('genesis')).status).toBe(200);
      await button.click();
      await page.waitForURL('**/workspaces');
      await expectText(page, 'You are not in any workspace yet.');
      expect((await call('GET', '/app/v1/workspaces', { token: owner.session })).body.data).toEqual([]);
    });
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('signing in with an e-mailed code in the browser', () => {
  it('asks for a code, reads it from the e-mail and signs in', async () => {
    const user = await signUp();
    await inOwnBrowser(async (page) => {
      await page.goto('/sign-in');
      await page.getByRole('button', { name: 'E-mail me a sign-in code instead' }).click();
      expect(await page.getByLabel('Password').count()).toBe(0);
      await page.getByLabel('E-mail').fill(user.email);
      await page.getByRole('button', { name: 'E-mail me a code' }).click();
      await expectText(page, 'a six-digit code is on its way');
      await screen(page, 'sign-in-code');
      expect(Object.entries(checked).filter(([name, violations]) => name.startsWith('sign-in-code') && violations.length > 0)).toEqual([]);
      const [mail] = await waitForMail(user.email);
      const code = /\b(\d{6})\b/.exec(mail!.text)![1]!;
      await page.getByLabel('Code from the e-mail').fill(code);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // Signed in: a new account has no workspace yet, and the application says so.
      await expectText(page, 'You are not in any workspace yet.');
    });
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('workspace secrets in the browser', () => {
  it('an admin saves a secret, sees how to use it but never its value again, replaces it and deletes it', async () => {
    const owner = await signUp();
    const created = await call('POST', '/app/v1/workspaces', { token: owner.session, body: { name: 'Secretive' } });
    const ws = created.body.id as string;
    const value = `value-${randomUUID()}`;
    await inOwnBrowser(async (page) => {
      await signInWithPassword(page, owner);
      await page.getByRole('link', { name: 'Secrets', exact: true }).click();
      await expectText(page, 'No secrets yet.');
      await page.getByLabel('Secret name').fill('CRM_TOKEN');
      await page.getByLabel('Secret value').fill(value);
      await page.getByRole('button', { name: 'Save secret' }).click();
      await expectText(page, 'Saved CRM_TOKEN.');
      const row = page.locator('table.secrets tbody tr', { hasText: 'CRM_TOKEN' });
      await row.waitFor();
      expect(await row.locator('code').textContent()).toBe('{{secrets.CRM_TOKEN}}');
      expect(await page.content()).not.toContain(value);
      await screen(page, 'secrets');
      expect(Object.entries(checked).filter(([name, violations]) => name.startsWith('secrets') && violations.length > 0)).toEqual([]);

      await page.getByLabel('Secret name').fill('CRM_TOKEN');
      await page.getByLabel('Secret value').fill('replaced');
      await page.getByRole('button', { name: 'Save secret' }).click();
      await until(async () => {
        const [secret] = (await call('GET', `/app/v1/workspaces/${ws}/secrets`, { token: owner.session })).body.data;
        return secret.updated_at !== secret.created_at;
      });
      await row.getByRole('button', { name: 'Delete CRM_TOKEN' }).click();
      await row.getByRole('button', { name: 'Yes' }).click();
      await expectText(page, 'No secrets yet.');
      expect((await call('GET', `/app/v1/workspaces/${ws}/secrets`, { token: owner.session })).body.data).toEqual([]);
    });
    expect(problems).toEqual([]);
  }, 120_000);
});

/** Runs `work` in a browser context of its own (its own session and storage), its page watched for errors. */
async function inOwnBrowser(work: (page: Page) => Promise<void>): Promise<void> {
  const ownContext = await browser.newContext({ baseURL: baseUrl(), viewport: { width: 1280, height: 860 } });
  ownContext.setDefaultTimeout(20_000);
  try {
    const page = await ownContext.newPage();
    watch(page);
    await work(page);
  } finally {
    await ownContext.close();
  }
}

async function signInWithPassword(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function expectText(page: Page, text: string): Promise<void> {
  await page.getByText(text, { exact: false }).first().waitFor();
}

/** Waits for a condition the page brings about through the API (a bounded number of tries, no timing assertion). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the condition never held');
}

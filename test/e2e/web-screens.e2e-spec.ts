import { Browser, Page } from 'playwright-core';
import { baseUrl, call, deployedDecision, newWorkspace, runDecision, triageSchema, uniqueMarker, Workspace } from './support/api';
import { checkScreen, launchChromium, signedInContext, watchProblems } from './support/browser';
import { Receiver, startReceiver } from './support/deliveries';

/**
 * The deliveries, signing-secret and secret-URL screens in a real headless Chromium against the shared cluster
 * (plain http to loopback allowed, retries scaled to seconds), with axe-core on each screen in both themes.
 * With WEB_SCREENSHOTS=<dir> it also writes their screenshots.
 */
/** Six attempts on the scaled schedule take about 5 seconds; the rest is room for a busy machine. */
const SETTLE_MS = 45_000;

let browser: Browser;
const receivers: Receiver[] = [];
const problems: string[] = [];
const checked: Record<string, string[]> = {};

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

/** A tab signed in as the workspace's owner, in that workspace. */
async function signedIn(ws: Workspace): Promise<Page> {
  const context = await signedInContext(browser, ws);
  const page = await context.newPage();
  // A refused call (the 409 of a resend) is logged by Chromium as a failed resource; the screen shows it.
  watchProblems(page, problems);
  return page;
}

const screen = (page: Page, name: string) => checkScreen(page, name, checked);

/** The URL shown is on the configured BASE_URL; the test's gateway listens elsewhere, so only its path is kept. */
function hookCall(url: string, headers: Record<string, string> = {}) {
  return fetch(`${baseUrl()}${new URL(url).pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ state: { message: 'My phone broke' } }),
  });
}

describe('the deliveries screen', () => {
  it('shows a failed webhook delivery with its attempts, resends it once the receiver recovers, and shows a stale resend’s 409', async () => {
    const ws = await newWorkspace();
    let healthy = false;
    const target = await startReceiver((_request, _index, response) => response.writeHead(healthy ? 200 : 500).end(healthy ? 'ok' : 'down'));
    receivers.push(target);
    const slug = `screens-${uniqueMarker().slice(-8)}`;
    const decisionId = await deployedDecision(ws, slug, triageSchema(uniqueMarker(), { destinations: [{ key: 'ops', type: 'webhook', url: target.url }] }));
    expect((await runDecision(ws, slug, { message: 'My phone broke' })).status).toBe(200);

    const page = await signedIn(ws);
    await page.goto('/deliveries');
    await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
    // Pending rows are looked at again by the screen itself until the six attempts are spent.
    await page.locator('[data-testid="delivery-status"]', { hasText: 'Failed' }).waitFor({ timeout: SETTLE_MS });
    expect(target.received).toHaveLength(6);
    await page.getByText('Attempts (6)').click();
    const attempts = page.locator('.delivery table tbody tr');
    expect(await attempts.count()).toBe(6);
    expect(await attempts.first().innerText()).toMatch(/failed\s+500/);
    expect(await page.locator('.delivery').innerText()).toContain(target.url);

    // The status filter asks the API again.
    await page.getByLabel('Status').selectOption('succeeded');
    await page.getByText('No deliveries match.').waitFor();
    await page.getByLabel('Status').selectOption('failed');
    await page.locator('[data-testid="delivery-status"]', { hasText: 'Failed' }).waitFor();
    await page.getByText('Attempts (6)').click();
    await screen(page, 'deliveries');

    // A second tab on the decision's own deliveries, still showing the failed delivery.
    const stale = await signedIn(ws);
    await stale.goto(`/decisions/${decisionId}/deliveries`);
    await stale.locator('[data-testid="delivery-status"]', { hasText: 'Failed' }).waitFor();
    await screen(stale, 'decision-deliveries');

    healthy = true;
    await page.getByRole('button', { name: 'Resend ops' }).click();
    await page.locator('[data-testid="delivery-status"]', { hasText: 'Succeeded' }).waitFor({ timeout: SETTLE_MS });
    expect(target.received).toHaveLength(7);
    expect(await page.getByRole('button', { name: 'Resend ops' }).count()).toBe(0);
    await page.locator('.delivery details').evaluate((details) => ((details as any).open = true));
    expect(await page.locator('.delivery table tbody tr').last().innerText()).toMatch(/2\.1.*succeeded\s+200/s);

    // The stale tab's resend is refused: the API's message and request id, then the delivery as it is now.
    await stale.getByRole('button', { name: 'Resend ops' }).click();
    const refused = stale.getByRole('alert');
    await refused.waitFor();
    await refused.getByText('Details').click();
    const text = await refused.innerText();
    expect(text).toContain('This changed meanwhile');
    expect(text).toContain('CONFLICT');
    expect(text).toMatch(/Request id: req_/);
    await stale.locator('[data-testid="delivery-status"]', { hasText: 'Succeeded' }).waitFor();
    expect(target.received).toHaveLength(7);

    // 360 px wide, attempts open: nothing runs off the side of the screen.
    await page.setViewportSize({ width: 360, height: 780 });
    for (const path of ['/deliveries', `/decisions/${decisionId}/deliveries`, `/decisions/${decisionId}/secret-url`, '/signing-secret']) {
      await page.goto(path);
      await page.locator('#page-title').waitFor();
      await page.locator('details').evaluateAll((all) => all.forEach((details) => ((details as any).open = true)));
      const overflow = await page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth,
      );
      expect({ path, overflow }).toEqual({ path, overflow: 0 });
    }
  });
});

describe('the signing secret screen', () => {
  it('creates and rotates the secret, shows it once, and then only its hint with the overlap', async () => {
    const ws = await newWorkspace();
    const page = await signedIn(ws);
    await page.goto('/signing-secret');
    await page.getByText('No signing secret yet').waitFor();
    await page.getByRole('button', { name: 'Rotate secret…' }).click();
    await page.getByRole('button', { name: 'Rotate secret', exact: true }).click();
    const first = await page.locator('#new-signing-secret').inputValue();
    expect(first).toMatch(/^whsec_/);
    await page.getByTestId('signing-secret-hint').waitFor();
    expect(await page.getByTestId('signing-secret-hint').innerText()).toBe(`whsec_…${first.slice(-4)}`);

    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Rotate secret…' }).click();
    await page.getByRole('button', { name: 'Rotate secret', exact: true }).click();
    const second = await page.locator('#new-signing-secret').inputValue();
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    await page
      .getByTestId('signing-secret-hint')
      .filter({ hasText: second.slice(-4) })
      .waitFor();
    await page.getByText('Previous secret', { exact: true }).waitFor();
    expect(await page.locator('main').innerText()).toContain('For 24 hours deliveries carry signatures by both');
    await screen(page, 'signing-secret');

    const stored = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/signing-secret`, { token: ws.session });
    expect(stored.body.hint).toBe(`whsec_…${second.slice(-4)}`);
    expect(stored.body.previous_expires_at).not.toBeNull();
    // Once closed, the secret is not on the page any more.
    await page.getByRole('button', { name: 'Close' }).click();
    expect(await page.locator('main').innerText()).not.toContain(second);
  });
});

describe('the secret URL screen', () => {
  it('turns the URL on, calls it, adds a secret that calls must prove, rotates it and turns it off', async () => {
    const ws = await newWorkspace();
    const slug = `hooked-${uniqueMarker().slice(-8)}`;
    const decisionId = await deployedDecision(ws, slug, triageSchema(uniqueMarker()));
    const page = await signedIn(ws);
    await page.goto(`/decisions/${decisionId}/secret-url`);
    await page.getByRole('heading', { name: 'Secret URL', level: 2 }).waitFor();

    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('hook-state').filter({ hasText: 'On' }).waitFor();
    const url = await page.locator('#hook-url').inputValue();
    expect(url).toMatch(/\/v1\/hooks\/whk_/);
    const run = await hookCall(url);
    expect(run.status).toBe(200);
    expect(((await run.json()) as { schema: string }).schema).toBe(slug);

    await page.getByRole('button', { name: 'Generate secret' }).click();
    const secret = await page.locator('#hook-secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await screen(page, 'secret-url');
    expect((await hookCall(url)).status).toBe(401);
    expect((await hookCall(url, { authorization: `Bearer ${secret}` })).status).toBe(200);

    await page.getByRole('button', { name: 'Rotate URL' }).click();
    await page.getByText('New URL: the previous one no longer works.').waitFor();
    const rotated = await page.locator('#hook-url').inputValue();
    expect(rotated).not.toBe(url);
    expect((await hookCall(url, { authorization: `Bearer ${secret}` })).status).toBe(404);
    expect((await hookCall(rotated, { authorization: `Bearer ${secret}` })).status).toBe(200);

    await page.getByRole('button', { name: 'Remove secret' }).click();
    await page.getByText('The secret is removed').waitFor();
    expect((await hookCall(rotated)).status).toBe(200);

    await page.getByRole('button', { name: 'Turn off' }).click();
    await page.getByTestId('hook-state').filter({ hasText: 'Off' }).waitFor();
    expect((await hookCall(rotated)).status).toBe(404);

    // A fresh tab reads the state from the API: off, with the last call it started.
    const fresh = await signedIn(ws);
    await fresh.goto(`/decisions/${decisionId}/secret-url`);
    await fresh.getByTestId('hook-state').filter({ hasText: 'Off' }).waitFor();
    expect(await fresh.getByRole('button', { name: 'Turn off' }).isDisabled()).toBe(true);
    expect(await fresh.getByTestId('hook-last-call').innerText()).not.toContain('never');
    // A tab still showing "off" while another turns it on hears the API's 409.
    const other = await signedIn(ws);
    await other.goto(`/decisions/${decisionId}/secret-url`);
    await other.getByTestId('hook-state').filter({ hasText: 'Off' }).waitFor();
    await fresh.getByRole('button', { name: 'Turn on' }).click();
    await fresh.getByTestId('hook-state').filter({ hasText: 'On' }).waitFor();
    await fresh.getByRole('button', { name: 'Generate secret' }).click();
    await fresh.locator('#hook-secret').waitFor();
    await other.getByRole('button', { name: 'Turn on' }).click();
    await other.getByText('The secret URL is already on.').waitFor();
    // After a reload the screen still knows: on, with a secret.
    await fresh.reload();
    await fresh.getByTestId('hook-state').filter({ hasText: 'On' }).waitFor();
    await fresh.locator('strong', { hasText: /^set$/ }).waitFor();
  }, 120_000);
});

describe('the new screens', () => {
  it('have no serious or critical accessibility violation in either theme, and log no error', () => {
    expect(Object.keys(checked).sort()).toEqual(
      ['decision-deliveries', 'deliveries', 'secret-url', 'signing-secret'].flatMap((name) => [`${name} (dark)`, `${name} (light)`]).sort(),
    );
    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  });
});

import { Browser, Page } from 'playwright-core';
import { baseUrl, call, deployedDecision, expectError, newWorkspace, Reply, runDecision, signUp, triageSchema, uniqueMarker, Workspace } from './support/api';
import { checkScreen, launchChromium, signedInContext, sticksOut, stripState, watchProblems } from './support/browser';
import { waitFor } from './support/cluster';
import { Receiver, startReceiver } from './support/deliveries';

/**
 * The executions list and a delivery in a real headless Chromium against the shared cluster: the run's figures
 * as columns, filters kept in the address, the delivery's status followed to the delivery and back to its
 * execution, and the playground started from that execution's stored state. axe-core in both themes, 360 px.
 * With WEB_SCREENSHOTS=<dir> it also writes their screenshots.
 */
let browser: Browser;
let receiver: Receiver;
const problems: string[] = [];
const checked: Record<string, string[]> = {};

beforeAll(async () => {
  browser = await launchChromium();
  receiver = await startReceiver();
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
});

async function signedIn(ws: Workspace): Promise<Page> {
  const page = await (await signedInContext(browser, ws)).newPage();
  watchProblems(page, problems);
  return page;
}

const decisionFilter = (page: Page) => page.locator('label:has(> span:text-is("Decision")) select');

/** How far the page scrolls sideways, and what sticks out of it. */
const overflow = async (page: Page) => ({
  overflow: await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth),
  wide: await sticksOut(page),
});

describe('the executions screen', () => {
  it('shows the figures of a run, keeps its filters in the address, follows its delivery, tries its state in the playground, deploys with a note, and no screen scrolls sideways at 360 px', async () => {
    const ws = await newWorkspace();
    const slug = `exec-${uniqueMarker().slice(-8)}`;
    const decisionId = await deployedDecision(
      ws,
      slug,
      triageSchema(uniqueMarker(), { settings: { storeInput: true }, destinations: [{ key: 'ops', type: 'webhook', url: receiver.url }] }),
    );
    const state = { message: 'The screen arrived cracked', amount: 129 };
    const run = await runDecision(ws, slug, state);
    expect(run.status).toBe(200);
    const executionId: string = run.body.execution_id;
    const deliveryId: string = run.body.destinations[0].delivery_id;

    // The stored state is read only in its own workspace, and only by id.
    const token = { token: ws.session };
    expect((await call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions/${executionId}/input`, token)).body).toEqual({
      execution_id: executionId,
      decision_id: decisionId,
      decision: slug,
      kept: true,
      state,
    });
    const other = await newWorkspace();
    expectError(await call('GET', `/app/v1/workspaces/${other.workspaceId}/executions/${executionId}/input`, { token: other.session }), 404, 'NOT_FOUND');
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions/not-an-id/input`, token), 404, 'NOT_FOUND');

    const page = await signedIn(ws);
    await page.goto('/executions');
    const row = page.locator('table.executions tbody tr').first();
    await row.waitFor();
    const cells = await row.locator('td').allInnerTexts();
    const byColumn = Object.fromEntries((await page.locator('table.executions thead th').allInnerTexts()).map((name, i) => [name.trim(), cells[i]!.trim()]));
    expect(byColumn).toMatchObject({ Decision: expect.stringContaining(slug), Mode: 'live' });
    expect(byColumn.Model).toBe(run.body.metrics.model);
    expect(byColumn.Latency).toMatch(/^[\d,]+ ms$/);
    expect(byColumn['Tokens in / out']).toMatch(/^[\d,]+ \/ [\d,]+$/);
    expect(byColumn['Est. cost']).toMatch(/^\$/);
    // The delivery is queued with the run; the list follows it until it settles.
    await row.getByTestId('execution-delivery').filter({ hasText: 'Succeeded' }).waitFor({ timeout: 30_000 });
    await checkScreen(page, 'executions-columns', checked);

    // Filters live in the address: a reload keeps them, Back goes to the list before the filter.
    await page.getByLabel('Status').selectOption('error');
    await page.getByTestId('executions-empty').filter({ hasText: 'Status: error' }).waitFor();
    expect(new URL(page.url()).search).toBe('?status=error');
    await page.reload();
    await page.getByTestId('executions-empty').filter({ hasText: 'Status: error' }).waitFor();
    expect(await page.getByLabel('Status').inputValue()).toBe('error');
    await decisionFilter(page).selectOption(slug);
    expect(new URLSearchParams(new URL(page.url()).search).get('decision')).toBe(slug);
    await page.goto(`/decisions/${decisionId}`);
    await page.goBack();
    await page.getByTestId('executions-empty').waitFor();
    expect(await decisionFilter(page).inputValue()).toBe(slug);
    await page.getByLabel('Status').selectOption('');

    // From the run to its delivery, and from the delivery back to the run.
    await page.getByTestId('execution-delivery').first().click();
    await page.waitForURL(`**/deliveries/${deliveryId}`);
    await page.getByRole('heading', { name: `Delivery ${deliveryId}`, level: 1 }).waitFor();
    await page.getByText('Attempts (1)').waitFor();
    expect(await page.locator('.delivery table tbody tr').first().innerText()).toMatch(/succeeded\s+200/);
    // The body sent, pretty-printed, and the receiver's answer.
    const sent = await page.getByTestId('delivery-request-body').innerText();
    expect(JSON.parse(sent)).toEqual(JSON.parse(receiver.received.find((request) => request.headers['service-delivery-id'] === deliveryId)!.body));
    expect(sent).toContain(`\n  "id": "${deliveryId}"`);
    expect(await page.getByTestId('delivery-response-body').innerText()).toBe('ok');
    await checkScreen(page, 'delivery', checked);
    await page.getByRole('link', { name: executionId }).click();
    await page.waitForURL(`**/executions/${executionId}`);

    // The run's state, kept by the version's settings, opens in the playground.
    await page.getByRole('link', { name: "Try this execution's state" }).click();
    await page.waitForURL(`**/decisions/${decisionId}/playground?from=${executionId}`);
    await page.getByTestId('playground-from').waitFor();
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    expect(JSON.parse(await page.locator('textarea').first().inputValue())).toEqual(state);
    await checkScreen(page, 'playground-from-execution', checked);

    // A changed draft deployed with a note: the note is kept with the version and shown in the History tab.
    const context = `${slug} with a longer context`;
    const saved = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/draft`, {
      ...token,
      body: {
        schema: triageSchema(context, { settings: { storeInput: true }, destinations: [{ key: 'ops', type: 'webhook', url: receiver.url }] }),
        revision: 1,
      },
    });
    expect(saved.status).toBe(200);
    await page.goto(`/decisions/${decisionId}/deploy`);
    await page.getByRole('button', { name: 'Deploy the draft' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Deploy note (optional)').fill('Longer context for the support team.');
    await checkScreen(page, 'deploy-note', checked, false);
    await dialog.getByRole('button', { name: 'Deploy the draft' }).click();
    await page.getByText('Deployed version 2.').waitFor();
    await page.getByRole('link', { name: 'History', exact: true }).click();
    await page.getByTestId('deploy-note').waitFor();
    expect(await page.getByTestId('deploy-note').allInnerTexts()).toEqual(['Longer context for the support team.']);

    await page.setViewportSize({ width: 360, height: 780 });
    // Every screen of the workspace and every view of the decision, at 360 px: nothing runs off the side.
    const views = ['overview', 'quality', 'editor', 'playground', 'deploy', 'history', 'replay', 'executions', 'deliveries', 'secret-url'];
    const paths = [
      ...[
        '/workspaces',
        '/decisions',
        '/decisions/new',
        '/executions',
        '/reviews',
        '/deliveries',
        '/keys',
        '/members',
        '/billing',
        '/settings',
        '/signing-secret',
        '/secrets',
        '/account',
      ],
      `/executions/${executionId}`,
      `/deliveries/${deliveryId}`,
      ...views.map((view) => `/decisions/${decisionId}/${view}`),
    ];
    const wide: Array<Awaited<ReturnType<typeof overflow>> & { path: string }> = [];
    for (const path of paths) {
      await page.goto(path);
      await page.locator('#page-title').waitFor();
      await page.locator('main p, main table, main dl, main form, main section').first().waitFor();
      await page.locator('p.loading').first().waitFor({ state: 'detached' });
      const found = await overflow(page);
      if (found.overflow > 0 || found.wide.length > 0) wide.push({ path, ...found });
    }
    expect(wide).toEqual([]);
    // The navigation and the tabs scroll inside themselves rather than cut their labels: the current link is brought
    // wholly into view, the edges with more behind them fade, and the page stays 360 px wide.
    const strips = [
      { path: '/decisions', strip: 'nav.side ul', fades: ['end'] },
      { path: '/secrets', strip: 'nav.side ul', fades: ['start', 'end'] },
      { path: `/decisions/${decisionId}/overview`, strip: 'nav.tabs', fades: ['end'] },
      { path: `/decisions/${decisionId}/secret-url`, strip: 'nav.tabs', fades: ['start'] },
    ];
    for (const { path, strip, fades } of strips) {
      await page.goto(path);
      await page.locator('#page-title').waitFor();
      await page.locator(`${strip} [aria-current="page"]`).waitFor();
      expect({ path, strip, ...(await stripState(page, strip)) }).toEqual({ path, strip, scrolls: true, currentInView: true, fades, documentWidth: 360 });
    }
    await checkScreen(page, 'narrow-tabs', checked);
    await page.goto('/executions');
    await page.getByTestId('execution-delivery').first().waitFor();
    await checkScreen(page, 'narrow-executions-cards', checked);

    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);

  it('reads a failed run as a record in words, and offers a member only the screens and tabs the role can use, asking nothing the API refuses', async () => {
    const ws = await newWorkspace();
    const slug = `fail-${uniqueMarker().slice(-8)}`;
    const decisionId = await deployedDecision(ws, slug, triageSchema(uniqueMarker()));
    const refused = await runDecision(ws, slug, { amount: 12 });
    expectError(refused, 422, 'INVALID_STATE');
    const failed = (await call('GET', '/v1/executions?status=error', { token: ws.apiKey })).body.data[0];
    expect(failed).toMatchObject({ status: 'error', error: { code: 'INVALID_STATE', message: refused.body.error.message } });

    const refusals: string[] = [];
    const watch = (page: Page) =>
      page.on('response', (response) => response.status() === 403 && refusals.push(`${response.request().method()} ${response.url()}`));
    const page = await signedIn(ws);
    watch(page);
    await page.goto(`/executions/${failed.id}`);
    const record = page.getByTestId('execution-failure');
    await record.waitFor();
    const text = await record.innerText();
    expect(text).toContain('The caller sent a state the decision does not accept');
    expect(text).toContain('INVALID_STATE');
    expect(text).toContain(refused.body.error.message);
    expect(text).toContain('The caller’s request');
    expect(text).toMatch(/fix the caller, or change the state schema/i);
    expect(await record.locator('.failure-details li').allInnerTexts()).toEqual([refused.body.error.message]);
    expect(refused.body.error.message).toBe('state.message is required');
    const main = await page.locator('main').innerText();
    expect(main).not.toContain('Something failed in the application');
    expect(main).not.toMatch(/\{\s*"code"/);
    await checkScreen(page, 'execution-failed', checked);
    await page.setViewportSize({ width: 360, height: 780 });
    expect(await overflow(page)).toEqual({ overflow: 0, wide: [] });
    await checkScreen(page, 'execution-failed-narrow', checked);

    // A member: no keys, signing secret, secrets or engine settings in the navigation, no deploy, history or replay
    // among the decision's tabs, and a screen opened by its address says so without asking the API.
    const person = await signUp();
    const added = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: person.email, role: 'member' } });
    expect(added.status).toBe(201);
    const memberPage = await signedIn({ ...ws, session: person.session, email: person.email });
    watch(memberPage);
    await memberPage.goto(`/decisions/${decisionId}/overview`);
    await memberPage.locator('nav.tabs [aria-current="page"]').waitFor();
    expect(await memberPage.locator('nav.side a').allInnerTexts()).toEqual([
      'Decisions',
      'Executions',
      'Reviews',
      'Deliveries',
      'Members',
      'Usage and billing',
    ]);
    expect(await memberPage.locator('nav.tabs a').allInnerTexts()).toEqual([
      'Overview',
      'Quality',
      'Editor',
      'Playground',
      'Executions',
      'Deliveries',
      'Secret URL',
    ]);
    await checkScreen(memberPage, 'member-tabs', checked);
    for (const path of ['/keys', '/settings', '/secrets', '/signing-secret', `/decisions/${decisionId}/deploy`, `/decisions/${decisionId}/history`]) {
      await memberPage.goto(path);
      await memberPage.getByRole('alert').first().waitFor();
      expect({ path, alert: await memberPage.getByRole('alert').first().innerText() }).toEqual({
        path,
        alert: path.startsWith('/decisions') ? 'This page does not exist.' : 'Your role in this workspace does not allow this.',
      });
    }
    await memberPage.goto('/members');
    await memberPage.locator('main table').first().waitFor();
    await memberPage.goto(`/executions/${failed.id}`);
    await memberPage.getByTestId('execution-failure').waitFor();
    await memberPage.locator('p.loading').first().waitFor({ state: 'detached' });
    expect(refusals).toEqual([]);

    // Signed out, outside any embed: the page asks for no embed session, so nothing answers 401.
    const signedOut = await (await browser.newContext({ baseURL: baseUrl() })).newPage();
    watchProblems(signedOut, problems);
    const asked: string[] = [];
    signedOut.on(
      'response',
      (response) => (response.url().includes('/embed/session') || response.status() === 401) && asked.push(`${response.status()} ${response.url()}`),
    );
    await signedOut.goto('/decisions');
    await signedOut.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    expect(asked).toEqual([]);

    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);

  it('lists live runs by default with their count, shows replayed runs once their source is chosen, filters by action, and says which filter hid everything', async () => {
    const ws = await newWorkspace();
    const slug = `explore-${uniqueMarker().slice(-8)}`;
    const decisionId = await deployedDecision(ws, slug, triageSchema(uniqueMarker(), { settings: { storeInput: true } }));
    const runs: Reply[] = [];
    for (const message of ['Where is my parcel?', 'Refund me now', 'The lid is cracked']) runs.push(await runDecision(ws, slug, { message }));
    expect(runs.map((run) => run.status)).toEqual([200, 200, 200]);
    const replay = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/replays`, {
      token: ws.session,
      body: { version: 1, last: 3 },
    });
    expect(replay.status).toBe(201);
    const list = (query: string) => call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions?${query}`, { token: ws.session });
    await waitFor(async () => (await list('source=replay')).body.data.length === 3, 30_000, 'the replayed runs');

    // The application lists live runs unless told otherwise; the public list keeps listing every source.
    const live = await list('include=total_count');
    expect(live.body.data.map((row: { source: string }) => row.source)).toEqual(['api', 'api', 'api']);
    expect(live.body).toMatchObject({ total_count: 3, total_capped: false });
    expect((await call('GET', '/v1/executions?include=total_count', { token: ws.apiKey })).body.total_count).toBe(6);
    expect((await call('GET', '/v1/executions?source=live', { token: ws.apiKey })).body.data).toHaveLength(3);
    const refusals: Array<[string, string]> = [
      ['source=replays', 'source'],
      ['version=01', 'version'],
      ['action=stop', 'action'],
      ['reason=rule', 'reason'],
      ['error_code=oops', 'error_code'],
    ];
    for (const [query, path] of refusals) {
      const refused = await list(query);
      expectError(refused, 400, 'INVALID_REQUEST');
      expect(refused.body.error.details).toEqual([expect.objectContaining({ path })]);
      expectError(await call('GET', `/v1/executions?${query}`, { token: ws.apiKey }), 400, 'INVALID_REQUEST');
    }

    const page = await signedIn(ws);
    const rows = page.locator('table.executions tbody tr');
    await page.goto('/executions');
    await page.getByTestId('executions-total').filter({ hasText: '3 executions' }).waitFor();
    expect(await rows.count()).toBe(3);
    expect(await page.getByRole('checkbox', { name: 'Live' }).isChecked()).toBe(true);
    expect(await rows.filter({ hasText: 'replay' }).count()).toBe(0);
    // Each row says why its action was taken.
    const headers = (await page.locator('table.executions thead th').allInnerTexts()).map((name) => name.trim());
    expect(headers).toEqual(expect.arrayContaining(['Reason', 'Error code']));

    // The replayed runs join the list once their source is chosen, and the choice is kept in the address.
    await page.getByRole('checkbox', { name: 'Replays' }).check();
    await page.getByTestId('executions-total').filter({ hasText: '6 executions' }).waitFor();
    expect(await rows.filter({ hasText: 'replay' }).count()).toBe(3);
    expect(new URLSearchParams(new URL(page.url()).search).get('source')).toBe('live,replay');
    await page.reload();
    await page.getByTestId('executions-total').filter({ hasText: '6 executions' }).waitFor();

    // By action: the live and replayed runs that took the first run's action.
    const action: string = runs[0]!.body.action;
    const taken = runs.filter((run) => run.body.action === action).length;
    await page.getByLabel('Action').selectOption(action);
    await page
      .getByTestId('executions-total')
      .filter({ hasText: `${taken * 2} execution` })
      .waitFor();
    expect(new Set(await rows.locator('td:nth-child(5)').allInnerTexts())).toEqual(new Set([action]));
    await checkScreen(page, 'executions-explorer', checked);

    // An action no run took: the empty list names the filter and offers to clear it.
    const untaken = ['continue', 'block', 'escalate', 'fallback'].find((name) => !runs.some((run) => run.body.action === name))!;
    await page.getByLabel('Action').selectOption(untaken);
    await page
      .getByTestId('executions-empty')
      .filter({ hasText: `Action: ${untaken}` })
      .waitFor();
    await page.getByRole('button', { name: 'Clear these filters' }).click();
    await page.getByTestId('executions-total').filter({ hasText: '6 executions' }).waitFor();
    // Only a source with nothing in it: the empty list says the other sources hold executions.
    await page.goto('/executions?source=playground');
    await page.getByTestId('executions-empty').filter({ hasText: 'No execution from Playground matches; 6 from other sources do.' }).waitFor();
    await checkScreen(page, 'executions-empty', checked);

    await page.setViewportSize({ width: 360, height: 780 });
    await page.goto('/executions?source=live,replay');
    await rows.first().waitFor();
    expect(await overflow(page)).toEqual({ overflow: 0, wide: [] });
    await checkScreen(page, 'narrow-explorer', checked);

    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});

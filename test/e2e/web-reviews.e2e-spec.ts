import { Browser, Page } from 'playwright-core';
import { call, deployedDecision, roomyWorkspace, runDecision, scriptEngine, signUp, uniqueMarker, Workspace } from './support/api';
import { checkScreen, launchChromium, signedInContext, sticksOut, watchProblems } from './support/browser';
import { eventually } from './support/deliveries';

/**
 * The reviewer's inbox in a real headless Chromium against the shared cluster: a reviewer sees only the inbox in the
 * navigation, moves through the queue with j/k and the arrows, answers with digits, resolves with Enter and releases
 * with Escape, keyboard alone, five items at 1280 px and five at 360 px; each resolution is the execution's outcome.
 * The live region says what happened, the claim timer counts down. axe in both themes, no console error (a CSP
 * violation included), nothing sticking out at 360 px. With WEB_SCREENSHOTS=<dir> it also writes the screenshots.
 */
const RUNS = 12;
const SCRIPTED = { intent: { refund: 0.96, exchange: 0.02, other: 0.02 }, fraud: { yes: 0.1, no: 0.9 } };

const reviewSchema = (marker: string) => ({
  state: { type: 'object', fields: { message: { type: 'string', required: true } } },
  context: `Support inbox ${marker}`,
  questions: [
    { key: 'intent', kind: 'choice', instructions: 'What does the customer want? Read `message`.', options: [{ value: 'refund' }, { value: 'exchange' }] },
    { key: 'fraud', kind: 'probability', instructions: 'Judge `message`.', criterion: 'The request shows signs of fraud' },
  ],
  policies: [{ when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' }, action: 'escalate' }],
  fallbackAction: 'fallback',
  settings: { storeInput: true, review: { when: { actions: ['escalate'] }, auditRate: 0, dueMinutes: 45 } },
});

let browser: Browser;
let ws: Workspace;
let reviewer: Workspace;
const problems: string[] = [];
const checked: Record<string, string[]> = {};

async function reviews(query: string): Promise<Array<Record<string, any>>> {
  const reply = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/reviews?limit=100&${query}`, { token: ws.session });
  expect(reply.status).toBe(200);
  return reply.body.data;
}

async function reviewerPage(width: number, height: number): Promise<Page> {
  const context = await signedInContext(browser, reviewer);
  const page = await context.newPage();
  await page.setViewportSize({ width, height });
  watchProblems(page, problems);
  return page;
}

const selected = (page: Page) => page.locator('[data-testid="rv-queue"] tr.selected th').innerText();
const live = (page: Page) => page.getByTestId('rv-live');

/** Answers the chosen item by keyboard: exchange, no fraud, continue; then Enter. Answers the item's id. */
async function resolveByKeyboard(page: Page, expectedLeft: number): Promise<string> {
  const title = await page.locator('#rv-item-title').innerText();
  const before = await reviews('');
  await page.keyboard.press('2');
  await page.keyboard.press('2');
  await page.keyboard.press('1');
  await live(page).filter({ hasText: 'continue for Right action.' }).waitFor();
  await page.keyboard.press('Enter');
  await live(page).filter({ hasText: 'Resolved as continue.' }).waitFor();
  const after = await eventually(
    async () => {
      const now = await reviews('');
      return now.length === expectedLeft ? now : null;
    },
    10_000,
    'the resolution',
  );
  const gone = before.filter((item) => !after.some((other) => other.id === item.id));
  expect(gone).toHaveLength(1);
  expect(title).toContain(`${gone[0]!.decision} v1`);
  return gone[0]!.id;
}

beforeAll(async () => {
  browser = await launchChromium();
  ws = await roomyWorkspace();
  const marker = uniqueMarker();
  await deployedDecision(ws, `inbox-${marker.slice(-8)}`, reviewSchema(marker));
  await scriptEngine(marker, [{ answers: SCRIPTED }], true);
  for (let i = 0; i < RUNS; i++) {
    const reply = await runDecision(ws, `inbox-${marker.slice(-8)}`, { message: `case ${i} ${marker}` });
    expect(reply.status).toBe(200);
    expect(reply.body.action).toBe('escalate');
  }
  await eventually(async () => ((await reviews('')).length === RUNS ? true : null), 20_000, 'every review item');
  const person = await signUp();
  const added = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/members`, { token: ws.session, body: { email: person.email, role: 'reviewer' } });
  expect(added.status).toBe(201);
  reviewer = { ...ws, session: person.session, email: person.email };
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('the reviewer’s inbox', () => {
  it('resolves five items by keyboard alone at 1280 px, with the claim timer and the live region', async () => {
    const page = await reviewerPage(1280, 860);
    // A reviewer lands in the inbox, the only screen in the navigation.
    await page.goto('/');
    await page.waitForURL('**/reviews');
    expect(await page.locator('nav.side a').allInnerTexts()).toEqual(['Reviews']);
    await page
      .locator('[data-testid="rv-queue"] tbody tr')
      .nth(RUNS - 1)
      .waitFor();
    await page.locator('#rv-item-title').waitFor();
    const queue = await reviews('');
    expect(await page.locator('[data-testid="rv-queue"] tbody tr').count()).toBe(RUNS);
    expect(await page.locator('[data-testid="rv-queue"] tbody tr').first().innerText()).toMatch(/due in 4\d min/);

    // j/k and the arrows move through the queue, said by the live region.
    await page.keyboard.press('j');
    await live(page)
      .filter({ hasText: `Item 2 of ${RUNS}` })
      .waitFor();
    await page.keyboard.press('ArrowDown');
    await live(page)
      .filter({ hasText: `Item 3 of ${RUNS}` })
      .waitFor();
    await page.keyboard.press('k');
    await page.keyboard.press('ArrowUp');
    await live(page)
      .filter({ hasText: `Item 1 of ${RUNS}` })
      .waitFor();
    await page
      .locator('#rv-item-title')
      .filter({ hasText: `item 1 of ${RUNS}` })
      .waitFor();
    expect(await selected(page)).toContain('v1');

    // The first digit claims the item: the timer counts down from 15 minutes; Escape releases it.
    await page.keyboard.press('2');
    await live(page).filter({ hasText: 'exchange for intent.' }).waitFor();
    const timer = page.getByTestId('rv-claim-timer');
    await timer.waitFor();
    expect(await timer.innerText()).toMatch(/^Claimed by you: 1[45]:\d\d left$/);
    const claimed = (await reviews('status=claimed')).map((item) => item.id);
    expect(claimed).toEqual([queue[0]!.id]);
    await page.getByRole('heading', { name: 'State the run was called with' }).waitFor();
    expect(await page.locator('.review-state').innerText()).toContain('case');
    await checkScreen(page, 'reviews', checked);
    await page.keyboard.press('Escape');
    await live(page).filter({ hasText: 'Released.' }).waitFor();
    await timer.waitFor({ state: 'detached' });
    expect(await reviews('status=claimed')).toEqual([]);

    // Five resolutions in a row, each moving on to the next item.
    const resolved: string[] = [];
    for (let n = 1; n <= 5; n++) resolved.push(await resolveByKeyboard(page, RUNS - n));
    expect(resolved).toEqual(queue.slice(0, 5).map((item) => item.id));
    expect(await page.locator('[data-testid="rv-queue"] tbody tr').count()).toBe(RUNS - 5);
    const done = await reviews('status=resolved');
    expect(done.map((item) => item.id).sort()).toEqual([...resolved].sort());
    for (const item of done) expect(item.resolution).toEqual({ answers: { intent: 'exchange', fraud: false }, action: 'continue', note: null });
    const executions = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/executions?limit=100`, { token: ws.session });
    const outcomes = executions.body.data.filter((execution: { id: string }) => done.some((item) => item.execution_id === execution.id));
    expect(outcomes.map((execution: { outcome: { source: string; action: string } }) => [execution.outcome.source, execution.outcome.action])).toEqual(
      done.map(() => ['review', 'continue']),
    );

    // The resolved ones are a filter away; a reason that nothing matches leaves the queue empty.
    await page.getByLabel('Status').selectOption('resolved');
    await page.locator('[data-testid="rv-resolution"]').waitFor();
    expect(await page.locator('[data-testid="rv-queue"] tbody tr').count()).toBe(5);
    await page.getByLabel('Reason').selectOption('audit');
    await page.getByText('Nothing to review here.').waitFor();
    await checkScreen(page, 'reviews-empty', checked);

    // Every other screen of the workspace is closed to a reviewer.
    await page.goto('/decisions');
    expect(await page.getByRole('alert').first().innerText()).toBe('Your role in this workspace does not allow this.');
    await page.context().close();
  }, 180_000);

  it('resolves five more at 360 px, nothing sticking out', async () => {
    const page = await reviewerPage(360, 780);
    await page.goto('/reviews');
    await page
      .locator('[data-testid="rv-queue"] tbody tr')
      .nth(RUNS - 6)
      .waitFor();
    await page.locator('#rv-item-title').waitFor();
    expect(await sticksOut(page)).toEqual([]);
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    await live(page)
      .filter({ hasText: `Item 1 of ${RUNS - 5}` })
      .waitFor();
    await page
      .locator('#rv-item-title')
      .filter({ hasText: `item 1 of ${RUNS - 5}` })
      .waitFor();
    await page.keyboard.press('2');
    await page.getByTestId('rv-claim-timer').waitFor();
    await page.locator('#rv-item-title').evaluate((heading) => (heading as any).scrollIntoView());
    expect(await sticksOut(page)).toEqual([]);
    await checkScreen(page, 'reviews-narrow', checked, false);
    // Back to the first question before the run of five.
    await page.keyboard.press('h');
    await live(page).filter({ hasText: 'Answering intent.' }).waitFor();
    for (let n = 6; n <= 10; n++) await resolveByKeyboard(page, RUNS - n);
    expect(await page.locator('[data-testid="rv-queue"] tbody tr').count()).toBe(RUNS - 10);
    expect(await reviews('status=resolved')).toHaveLength(10);
    expect(await sticksOut(page)).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('is offered to Members and up beside their other screens', async () => {
    const page = await (await signedInContext(browser, ws)).newPage();
    watchProblems(page, problems);
    await page.goto('/reviews');
    await page.locator('[data-testid="rv-queue"] tbody tr').first().waitFor();
    expect(await page.locator('nav.side a[aria-current="page"]').innerText()).toBe('Reviews');
    expect(await page.locator('nav.side a').allInnerTexts()).toContain('Decisions');
    await page.context().close();
  }, 60_000);

  it('has no serious or critical accessibility violation in either theme, and logs no error (no CSP violation)', () => {
    expect(Object.keys(checked).sort()).toEqual([
      'reviews (dark)',
      'reviews (light)',
      'reviews-empty (dark)',
      'reviews-empty (light)',
      'reviews-narrow (dark)',
      'reviews-narrow (light)',
    ]);
    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  });
});

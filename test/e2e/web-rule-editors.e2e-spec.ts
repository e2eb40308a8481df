import { Browser, Page } from 'playwright-core';
import { call, createDecision, newWorkspace, scriptEngine, triageSchema, uniqueMarker } from './support/api';
import { checkScreen, launchChromium, signedInContext, sticksOut, watchProblems } from './support/browser';

/**
 * The policy, composite and destination forms in a real headless Chromium: a composite, two rules (one with two
 * conditions, moved above the other by keyboard) and a webhook destination with a secret header and a condition,
 * built without touching JSON; the JSON view shows the same draft, the save stores it, the draft then decides as
 * built (the engine simulator scripted), and the page fits 360 px.
 * axe-core on each screen in both themes; with WEB_SCREENSHOTS=<dir> it also writes their screenshots.
 */
let browser: Browser;
const problems: string[] = [];
const checked: Record<string, string[]> = {};

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** The control editing a draft path, by the id issues link to. */
const field = (page: Page, path: string) => page.locator(`#f-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`);

async function showSection(page: Page, id: string): Promise<void> {
  await page
    .locator(`#${id}`)
    .first()
    .evaluate((heading: any) => heading.scrollIntoView({ block: 'start' }));
  // The sticky editor bar covers the top of the viewport.
  await page.evaluate(() => (globalThis as any).scrollBy(0, -80));
}

describe('the rule, composite and destination forms', () => {
  it('build a composite, two rules and a webhook destination that the API stores as built', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const { id } = await createDecision(ws, `rules-${marker.slice(-8)}`, triageSchema(marker, { composites: [], policies: [] }));
    const context = await signedInContext(browser, ws);
    const page = await context.newPage();
    watchProblems(page, problems);
    await page.goto(`/decisions/${id}/editor`);
    await page.locator('#page-title').waitFor();

    // A composite: its first term starts on the first question (a choice, so an option is named).
    await page.getByRole('button', { name: 'Add composite' }).click();
    await field(page, 'composites.0.key').fill('risky');
    expect(await field(page, 'composites.0.terms.0.option').inputValue()).toBe('refund');
    await field(page, 'composites.0.terms.0.question').selectOption('fraud');
    // A probability question has no option to name.
    expect(await field(page, 'composites.0.terms.0.option').count()).toBe(0);
    await field(page, 'composites.0.terms.0.weight').fill('3');
    await page.getByRole('button', { name: 'Add a term (Composite 1 (risky))' }).click();
    await field(page, 'composites.0.terms.1.option').selectOption('exchange');

    // Rule 1: risky at least 0.6 and the intent's confidence at least 0.7 → block.
    await page.getByRole('button', { name: 'Add rule' }).click();
    const operand = field(page, 'policies.0.when.question');
    // Only operators that fit a choice answer are offered.
    expect(await field(page, 'policies.0.when.op').locator('option').allTextContents()).toEqual(['equals', 'differs from']);
    await operand.selectOption({ label: 'composite risky' });
    await field(page, 'policies.0.when.op').selectOption('gte');
    await field(page, 'policies.0.when.value').fill('0.6');
    await page.getByRole('button', { name: 'Add a condition (Rule 1)' }).click();
    await field(page, 'policies.0.and.0.question').selectOption({ label: 'confidence of intent' });
    expect(await field(page, 'policies.0.and.0.op').locator('option').count()).toBe(6);
    await field(page, 'policies.0.and.0.op').selectOption('gte');
    await field(page, 'policies.0.and.0.value').fill('0.7');
    await field(page, 'policies.0.action').selectOption('block');

    // Rule 2: urgency answered "furious" → escalate; then moved to the top with the keyboard alone.
    await page.getByRole('button', { name: 'Add rule' }).click();
    await field(page, 'policies.1.when.question').selectOption({ label: 'answer of urgency' });
    expect(await field(page, 'policies.1.when.value').locator('option').allTextContents()).toEqual(['calm', 'annoyed', 'furious']);
    await field(page, 'policies.1.when.value').selectOption('furious');
    await field(page, 'policies.1.action').selectOption('escalate');
    await page.locator('#f-policies_1-up').focus();
    await page.keyboard.press('Enter');
    // The focus follows the moved rule (to its Move down, since it cannot go further up).
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'f-policies_0-down');
    expect(await field(page, 'policies.0.when.value').inputValue()).toBe('furious');

    // A value the validator refuses is named beside its field.
    await field(page, 'policies.1.when.value').fill('1.5');
    await page
      .locator('#f-policies_1_when_value-issues')
      .getByText(/must be between/)
      .waitFor();
    expect(await field(page, 'policies.1.when.value').getAttribute('aria-invalid')).toBe('true');
    await field(page, 'policies.1.when.value').fill('0.6');
    await page.locator('#f-policies_1_when_value-issues').waitFor({ state: 'detached' });
    await showSection(page, 'sec-policies');
    await checkScreen(page, 'editor-policies', checked, false);

    // A webhook destination: plain http is flagged while editing, a secret header, sent when the action is block.
    await page.getByRole('button', { name: 'Add destination' }).click();
    await field(page, 'destinations.0.key').fill('ops');
    await field(page, 'destinations.0.url').fill('http://hooks.example.com/decisions');
    await page.locator('section[aria-labelledby=sec-destinations]').getByText('Deliveries go to https:// URLs only').waitFor();
    await field(page, 'destinations.0.url').fill('https://hooks.example.com/decisions');
    await page.locator('section[aria-labelledby=sec-destinations]').getByText('Deliveries go to https:// URLs only').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Add header (Destination 1 (ops))' }).click();
    await page.locator('#f-destinations_0_headers_X-Header_1-name').fill('Authorization');
    await field(page, 'destinations.0.headers.Authorization').fill('Bearer {{secrets.HOOK_TOKEN}}');
    await page.getByRole('button', { name: 'Add a condition (Destination 1 (ops))' }).click();
    await field(page, 'destinations.0.when.0.question').selectOption({ label: 'the action' });
    await field(page, 'destinations.0.when.0.value').selectOption('block');
    await showSection(page, 'f-destinations_0_url');
    await checkScreen(page, 'editor-destinations', checked, false);
    await showSection(page, 'sec-composites');
    await checkScreen(page, 'editor-composites', checked, false);

    const expected = {
      composites: [
        {
          key: 'risky',
          terms: [
            { question: 'fraud', weight: 3 },
            { question: 'intent', option: 'exchange', weight: 1 },
          ],
        },
      ],
      policies: [
        { when: { on: 'answer', question: 'urgency', op: 'eq', value: 'furious' }, action: 'escalate' },
        {
          when: { on: 'composite', composite: 'risky', op: 'gte', value: 0.6 },
          and: [{ on: 'confidence', question: 'intent', op: 'gte', value: 0.7 }],
          action: 'block',
        },
      ],
      destinations: [
        {
          key: 'ops',
          type: 'webhook',
          url: 'https://hooks.example.com/decisions',
          headers: { Authorization: 'Bearer {{secrets.HOOK_TOKEN}}' },
          when: [{ on: 'action', op: 'eq', value: 'block' }],
        },
      ],
    };

    await page.getByRole('button', { name: 'Save draft', exact: true }).click();
    await page.getByTestId('save-state').getByText('All changes saved').waitFor();
    const saved = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}`, { token: ws.session });
    expect(saved.status).toBe(200);
    const draft = saved.body.draft;
    expect(draft.composites).toEqual([{ ...expected.composites[0], description: null }]);
    expect(draft.policies).toEqual([{ ...expected.policies[0], and: [] }, expected.policies[1]]);
    expect(draft.destinations).toEqual([{ ...expected.destinations[0], description: null, params: {} }]);

    // The saved draft decides as built: the moved rule first, then the composite rule with its two conditions.
    const sure = (outcome: string, others: string[]) => Object.fromEntries([[outcome, 0.98], ...others.map((other) => [other, 0.02 / others.length])]);
    const answers = (urgency: string, fraud: string) => ({
      intent: sure('exchange', ['refund', 'other']),
      urgency: sure(
        urgency,
        ['calm', 'annoyed', 'furious'].filter((level) => level !== urgency),
      ),
      fraud: sure(fraud, fraud === 'yes' ? ['no'] : ['yes']),
    });
    await scriptEngine(marker, [{ answers: answers('calm', 'yes') }, { answers: answers('furious', 'yes') }, { answers: answers('calm', 'no') }]);
    const run = async () => {
      const reply = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}/playground`, {
        token: ws.session,
        body: { state: { message: 'I want another colour' } },
      });
      expect(reply.status).toBe(200);
      return { action: reply.body.action, destinations: reply.body.destinations.map((destination: { key: string }) => destination.key) };
    };
    // risky = (3 × 0.98 + 1 × 0.98) / 4 ≥ 0.6 and the intent is answered with confidence: block, and the webhook fires.
    expect(await run()).toEqual({ action: 'block', destinations: ['ops'] });
    // Furious matches the first rule before the composite one is tried.
    expect(await run()).toEqual({ action: 'escalate', destinations: [] });
    // No fraud: risky = (3 × 0.02 + 0.98) / 4 is below 0.6, no rule matches.
    expect(await run()).toEqual({ action: 'continue', destinations: [] });

    // 360 px: nothing in the forms runs off the side.
    await page.setViewportSize({ width: 360, height: 780 });
    await showSection(page, 'sec-policies');
    expect(await sticksOut(page)).toEqual([]);
    await checkScreen(page, 'editor-policies-narrow', checked, false);
    await showSection(page, 'sec-destinations');
    await checkScreen(page, 'editor-destinations-narrow', checked, false);
    await page.close();

    expect(Object.keys(checked).length).toBe(10);
    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});

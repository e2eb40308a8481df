import { Browser, Page } from 'playwright-core';
import { call, createDecision, newWorkspace, runDecision, scriptEngine, triageSchema, uniqueMarker } from './support/api';
import { checkScreen, launchChromium, signedInContext, sticksOut, watchProblems } from './support/browser';
import { waitFor } from './support/cluster';

/**
 * The policy, composite and destination forms in a real headless Chromium: a composite, three rules (one with a
 * composite and an extra condition; one moved up by keyboard, one dragged to the top with the mouse), a webhook
 * destination with a secret header and a condition, and an http destination whose body is a template over a param
 * from the state, built without touching JSON; the save stores the draft as
 * built, the deploy screen deploys it, and API calls with a key (the engine simulator scripted) see each rule decide
 * in the order built, the template rendered into the delivery's body; the page fits 360 px. The dragging raises no CSP violation.
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

const violations = (page: Page) => page.evaluate(() => (globalThis as any).cspViolations as string[]);

/** What the rule list's live region says last. */
const announced = (page: Page) => page.locator('section[aria-labelledby=sec-policies]').getByTestId('list-announcement').innerText();

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
  it('build a composite, three rules and a webhook destination that decide as built once deployed', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const slug = `rules-${marker.slice(-8)}`;
    const { id } = await createDecision(ws, slug, triageSchema(marker, { composites: [], policies: [] }));
    const context = await signedInContext(browser, ws);
    await context.addInitScript(() => {
      (globalThis as any).cspViolations = [];
      (globalThis as any).document.addEventListener('securitypolicyviolation', (event: any) =>
        (globalThis as any).cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`),
      );
    });
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
    await page.getByRole('button', { name: 'Add a condition to Rule 1' }).click();
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
    expect(await announced(page)).toBe('Rule 2 moved to position 1');

    // A value the validator refuses is named beside its field.
    await field(page, 'policies.1.when.value').fill('1.5');
    await page
      .locator('#f-policies_1_when_value-issues')
      .getByText(/must be between/)
      .waitFor();
    expect(await field(page, 'policies.1.when.value').getAttribute('aria-invalid')).toBe('true');
    await field(page, 'policies.1.when.value').fill('0.6');
    await page.locator('#f-policies_1_when_value-issues').waitFor({ state: 'detached' });

    // Rule 3: a refund asked with the weighted urgency at least 1.5 → fallback; dragged to the top by its grip.
    await page.getByRole('button', { name: 'Add rule' }).click();
    await field(page, 'policies.2.when.value').selectOption('refund');
    await page.getByRole('button', { name: 'Add a condition to Rule 3' }).click();
    await field(page, 'policies.2.and.0.question').selectOption({ label: 'weighted score of urgency' });
    // A weighted level runs from 1 to the number of levels.
    expect(await field(page, 'policies.2.and.0.value').getAttribute('max')).toBe('3');
    await field(page, 'policies.2.and.0.op').selectOption('gte');
    await field(page, 'policies.2.and.0.value').fill('1.5');
    await field(page, 'policies.2.action').selectOption('fallback');
    // The whole list in view, away from the window's edges, where it would scroll on its own.
    await page.setViewportSize({ width: 1280, height: 2000 });
    await showSection(page, 'sec-policies');
    await page.evaluate(() => (globalThis as any).scrollBy(0, -400));
    const grip = (await page.locator('section[aria-labelledby=sec-policies] [data-drag-handle="2"]').boundingBox())!;
    const first = (await field(page, 'policies.0').boundingBox())!;
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await page.mouse.down();
    await page.mouse.move(grip.x + grip.width / 2, grip.y - 20, { steps: 4 });
    await page.mouse.move(first.x + 40, first.y + 30, { steps: 12 });
    // The landing place is shown before the drop: a bar above the first rule.
    await page.locator('section[aria-labelledby=sec-policies] .rule-list > li').first().and(page.locator('[data-drop=before]')).waitFor();
    await checkScreen(page, 'editor-policies-drag', checked, false);
    await page.mouse.up();
    expect(await announced(page)).toBe('Rule 3 moved to position 1');
    expect(await field(page, 'policies.0.when.value').inputValue()).toBe('refund');
    expect(await field(page, 'policies.0.action').inputValue()).toBe('fallback');
    expect(await field(page, 'policies.1.when.value').inputValue()).toBe('furious');
    expect(await page.locator('[data-drop]').count()).toBe(0);
    // Renaming the composite carries the rule that names it along.
    await field(page, 'composites.0.key').fill('risky_mix');
    expect(await field(page, 'policies.2.when.composite').inputValue()).toBe('composite:risky_mix');
    expect(await page.locator('#f-policies_2_when_composite-issues').count()).toBe(0);
    await page.setViewportSize({ width: 1280, height: 860 });
    await showSection(page, 'sec-policies');
    await checkScreen(page, 'editor-policies', checked, false);

    // A webhook destination: plain http is flagged while editing, a secret header, sent when the action is block.
    await page.getByRole('button', { name: 'Add destination' }).click();
    await field(page, 'destinations.0.key').fill('ops');
    await field(page, 'destinations.0.url').fill('http://hooks.example.com/decisions');
    await page.locator('section[aria-labelledby=sec-destinations]').getByText('Deliveries go to https:// URLs only').waitFor();
    await field(page, 'destinations.0.url').fill('https://hooks.example.com/decisions');
    await page.locator('section[aria-labelledby=sec-destinations]').getByText('Deliveries go to https:// URLs only').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Add a header to Destination 1 (ops)' }).click();
    await page.locator('#f-destinations_0_headers_X-Header_1-name').fill('Authorization');
    await field(page, 'destinations.0.headers.Authorization').fill('Bearer {{secrets.HOOK_TOKEN}}');
    await page.getByRole('button', { name: 'Add a condition to Destination 1 (ops)' }).click();
    await field(page, 'destinations.0.when.0.question').selectOption({ label: 'the action' });
    await field(page, 'destinations.0.when.0.value').selectOption('block');

    // An http destination whose body is a template over a param taken from the state, sent on escalate.
    await page.getByRole('button', { name: 'Add destination' }).click();
    await field(page, 'destinations.1.key').fill('crm');
    await field(page, 'destinations.1.type').selectOption('http');
    await field(page, 'destinations.1.url').fill('https://crm.example.com/notes');
    await page.getByRole('button', { name: 'Add a param to Destination 2 (crm)' }).click();
    await field(page, 'destinations.1.params.param_1').fill('customer');
    await field(page, 'destinations.1.params.customer.from').fill('state.message');
    // The form offers the placeholders the declared params make.
    await page.locator('#f-destinations_1').getByText('{{params.customer}}').waitFor();
    await field(page, 'destinations.1.body').fill('{"note": "{{params.customer}}"}');
    await page.getByRole('button', { name: 'Add a condition to Destination 2 (crm)' }).click();
    await field(page, 'destinations.1.when.0.question').selectOption({ label: 'the action' });
    await field(page, 'destinations.1.when.0.value').selectOption('escalate');
    await showSection(page, 'f-destinations_0_url');
    await checkScreen(page, 'editor-destinations', checked, false);
    await showSection(page, 'sec-composites');
    await checkScreen(page, 'editor-composites', checked, false);

    const expected = {
      composites: [
        {
          key: 'risky_mix',
          terms: [
            { question: 'fraud', weight: 3 },
            { question: 'intent', option: 'exchange', weight: 1 },
          ],
        },
      ],
      policies: [
        {
          when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' },
          and: [{ on: 'score', question: 'urgency', op: 'gte', value: 1.5 }],
          action: 'fallback',
        },
        { when: { on: 'answer', question: 'urgency', op: 'eq', value: 'furious' }, action: 'escalate' },
        {
          when: { on: 'composite', composite: 'risky_mix', op: 'gte', value: 0.6 },
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
        {
          key: 'crm',
          type: 'http',
          url: 'https://crm.example.com/notes',
          method: 'POST',
          params: { customer: { from: 'state.message' } },
          body: '{"note": "{{params.customer}}"}',
          when: [{ on: 'action', op: 'eq', value: 'escalate' }],
        },
      ],
    };

    await page.getByRole('button', { name: 'Save draft', exact: true }).click();
    await page.getByTestId('save-state').getByText('All changes saved').waitFor();
    const saved = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}`, { token: ws.session });
    expect(saved.status).toBe(200);
    const draft = saved.body.draft;
    expect(draft.composites).toEqual([{ ...expected.composites[0], description: null }]);
    expect(draft.policies).toEqual([expected.policies[0], { ...expected.policies[1], and: [] }, expected.policies[2]]);
    expect(draft.destinations).toEqual([
      { ...expected.destinations[0], description: null, params: {} },
      // Stored normalised: a param says whether it is required.
      { ...expected.destinations[1], description: null, headers: {}, params: { customer: { from: 'state.message', required: false } } },
    ]);

    // Deployed from the deploy screen; then API calls with a key meet the rules in the order built.
    await page.getByRole('link', { name: 'Deploy', exact: true }).click();
    await page.getByRole('button', { name: 'Deploy the draft' }).click();
    await page.getByRole('dialog', { name: 'Deploy the draft as version 1?' }).getByRole('button', { name: 'Deploy the draft' }).click();
    await page.getByText('Deployed version 1.').waitFor();

    const sure = (outcome: string, others: string[]) => Object.fromEntries([[outcome, 0.98], ...others.map((other) => [other, 0.02 / others.length])]);
    const answers = (intent: string, urgency: string, fraud: string) => ({
      intent: sure(
        intent,
        ['refund', 'exchange', 'other'].filter((option) => option !== intent),
      ),
      urgency: sure(
        urgency,
        ['calm', 'annoyed', 'furious'].filter((level) => level !== urgency),
      ),
      fraud: sure(fraud, fraud === 'yes' ? ['no'] : ['yes']),
    });
    const runs = [
      // Refund and annoyed (weighted 2): the dragged rule, now first.
      answers('refund', 'annoyed', 'no'),
      // Furious would match the keyboard-moved rule too, but the dragged one comes first.
      answers('refund', 'furious', 'no'),
      // An exchange, furious: the second rule.
      answers('exchange', 'furious', 'no'),
      // risky = (3 × 0.98 + 1 × 0.98) / 4 ≥ 0.6 and the intent is answered with confidence: block, and the webhook fires.
      answers('exchange', 'calm', 'yes'),
      // No fraud: risky = (3 × 0.02 + 0.98) / 4 is below 0.6, no rule matches.
      answers('exchange', 'calm', 'no'),
    ];
    await scriptEngine(
      marker,
      runs.map((run) => ({ answers: run })),
    );
    const decided = [];
    for (let i = 0; i < runs.length; i++) {
      const reply = await runDecision(ws, slug, { message: 'I want another colour' });
      expect(reply.status).toBe(200);
      decided.push({
        action: reply.body.action,
        reason: reply.body.action_reason,
        destinations: reply.body.destinations.map((destination: { key: string }) => destination.key),
      });
      // The template, rendered with the run's state, is the body the delivery sends.
      const crm = reply.body.destinations.find((destination: { key: string }) => destination.key === 'crm');
      if (crm) {
        // The delivery service records it from the stream, a moment after the run answered.
        const read = () => call('GET', `/app/v1/workspaces/${ws.workspaceId}/deliveries/${crm.delivery_id}`, { token: ws.session });
        await waitFor(async () => (await read()).status === 200, 15_000, 'the crm delivery');
        expect((await read()).body.request.body).toBe('{"note": "I want another colour"}');
      }
    }
    expect(decided).toEqual([
      { action: 'fallback', reason: { type: 'policy', rule: 0 }, destinations: [] },
      { action: 'fallback', reason: { type: 'policy', rule: 0 }, destinations: [] },
      { action: 'escalate', reason: { type: 'policy', rule: 1 }, destinations: ['crm'] },
      { action: 'block', reason: { type: 'policy', rule: 2 }, destinations: ['ops'] },
      { action: 'continue', reason: { type: 'default' }, destinations: [] },
    ]);

    // The document so far (the drag included) is left for a fresh one: what it recorded is read first.
    const cspViolations = await violations(page);
    await page.goto(`/decisions/${id}/editor`);
    await page.locator('#sec-policies').waitFor();
    // 360 px: nothing in the forms runs off the side.
    await page.setViewportSize({ width: 360, height: 780 });
    await showSection(page, 'sec-policies');
    expect(await sticksOut(page)).toEqual([]);
    await checkScreen(page, 'editor-policies-narrow', checked, false);
    await showSection(page, 'sec-destinations');
    await checkScreen(page, 'editor-destinations-narrow', checked, false);
    cspViolations.push(...(await violations(page)));
    await page.close();

    expect(Object.keys(checked).length).toBe(12);
    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
    expect(cspViolations).toEqual([]);
  }, 180_000);
});

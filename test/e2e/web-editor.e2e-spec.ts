import { Browser, BrowserContext, Page } from 'playwright-core';
import { call, createDecision, deployedDecision, newWorkspace, runDecision, triageSchema, uniqueMarker, Workspace } from './support/api';
import { checkScreen, launchChromium, signedInContext, watchProblems } from './support/browser';

/**
 * The decision editor as a demanding author uses it, in a real headless Chromium against the shared cluster:
 * unsaved work guarded on a tab switch and kept over a reload, a kind change that asks and can be undone, two
 * tabs whose edits merge, options added above `other`, issues that wait for the first edit; and the switches that
 * affect callers: a breaking deploy, the endpoint, the own provider key. axe-core on each
 * screen in both themes; with WEB_SCREENSHOTS=<dir> it also writes their screenshots.
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

const signedIn = (ws: Workspace) => signedInContext(browser, ws);

async function open(context: BrowserContext, path: string): Promise<Page> {
  const page = await context.newPage();
  watchProblems(page, problems);
  await page.goto(path);
  await page.locator('#page-title').waitFor();
  return page;
}

const screen = (page: Page, name: string, scroll = true) => checkScreen(page, name, checked, scroll);

async function savedDraft(ws: Workspace, id: string): Promise<{ revision: number; draft: any }> {
  const reply = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${id}`, { token: ws.session });
  return reply.body;
}

const saveState = (page: Page) => page.getByTestId('save-state');

function schemaWithOther() {
  const schema = triageSchema(uniqueMarker()) as any;
  schema.questions[0].options.push({ value: 'other' });
  return schema;
}

describe('the editor keeps unsaved work', () => {
  it('asks before a tab switch, keeps the edits over a reload, and saves them on the way out', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, `guard-${uniqueMarker().slice(-8)}`, schemaWithOther());
    const context = await signedIn(ws);
    const page = await open(context, `/decisions/${id}/editor`);
    expect(await saveState(page).innerText()).toContain('All changes saved');

    await page.locator('#f-context').fill('Unsaved context');
    await saveState(page).getByText('Unsaved changes').waitFor();

    // Another tab of the decision: the application asks first, and "stay" stays.
    await page.getByRole('link', { name: 'Playground' }).click();
    const dialog = page.getByRole('dialog', { name: 'Leave with unsaved changes?' });
    await dialog.waitFor();
    await screen(page, 'editor-leave', false);
    await dialog.getByRole('button', { name: 'Stay and keep editing' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(new URL(page.url()).pathname).toBe(`/decisions/${id}/editor`);

    // A reload asks the browser's own question; the edits come back afterwards either way.
    const asked: string[] = [];
    page.once('dialog', (question) => {
      asked.push(question.type());
      void question.accept();
    });
    await page.reload();
    await page.locator('#page-title').waitFor();
    expect(asked).toEqual(['beforeunload']);
    expect(await page.locator('#f-context').inputValue()).toBe('Unsaved context');
    await page.getByText('were restored from this device').waitFor();
    expect((await savedDraft(ws, id)).draft.context).not.toBe('Unsaved context');

    // "Save and leave" saves, then goes: the playground runs what was saved.
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Save and leave' }).click();
    await page.waitForURL(`**/decisions/${id}/playground`);
    expect((await savedDraft(ws, id)).draft.context).toBe('Unsaved context');
    expect(await page.evaluate(() => Object.keys((globalThis as any).localStorage).filter((key) => key.startsWith('ds.draft.')))).toEqual([]);
    await page.close();
  }, 120_000);

  it('asks before a kind change throws options away, undoes and redoes it, and saves with Ctrl+S', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, `kind-${uniqueMarker().slice(-8)}`, schemaWithOther());
    const context = await signedIn(ws);
    const page = await open(context, `/decisions/${id}/editor`);
    const kind = page.locator('#f-questions_0_kind');
    const firstOption = page.locator('#f-questions_0_options_0_value');

    // One ArrowDown on the select: choice → score would remove three options, so it asks.
    await kind.focus();
    await page.keyboard.press('ArrowDown');
    const dialog = page.getByRole('dialog', { name: 'Change question 1 to score?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain('3 options will be removed');
    await screen(page, 'editor-kind', false);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await kind.inputValue()).toBe('choice');
    expect(await firstOption.inputValue()).toBe('refund');

    await kind.selectOption('score');
    await page.getByRole('dialog').getByRole('button', { name: 'Change kind' }).click();
    await page.locator('#f-questions_0_levels_0').waitFor();
    expect(await firstOption.count()).toBe(0);

    await page.keyboard.press('Control+z');
    expect(await firstOption.inputValue()).toBe('refund');
    expect(await kind.inputValue()).toBe('choice');
    await page.keyboard.press('Control+Shift+z');
    expect(await kind.inputValue()).toBe('score');
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    expect(await kind.inputValue()).toBe('choice');

    // A new option goes above the reserved `other`, which stays last: the schema stays valid.
    await page.getByRole('button', { name: 'Add Option value' }).first().click();
    const added = page.locator('#f-questions_0_options_2_value');
    expect(await added.evaluate((element) => element === (globalThis as any).document.activeElement)).toBe(true);
    await added.fill('repair');
    await page.getByText('The schema is valid.').waitFor();

    // Questions move and can be removed.
    await page.getByRole('button', { name: 'Move down intent' }).click();
    await page
      .locator('section[aria-labelledby=sec-questions] [data-testid=list-announcement]', { hasText: 'intent moved to position 2' })
      .waitFor({ state: 'attached' });
    expect(await page.locator('#f-questions_1_key').inputValue()).toBe('intent');
    // And by their grip: dragged back to the top, said in the list's live region, then moved down again by keyboard.
    // The whole list in view, away from the window's edges, where it would scroll on its own.
    const viewport = page.viewportSize()!;
    await page.setViewportSize({ width: viewport.width, height: 2000 });
    await page
      .locator('#sec-questions')
      .evaluate((heading) => (heading as unknown as { scrollIntoView(options: object): void }).scrollIntoView({ block: 'start' }));
    await page.evaluate(() => (globalThis as any).scrollBy(0, -200));
    const grip = (await page.locator('section[aria-labelledby=sec-questions] [data-drag-handle="1"]').boundingBox())!;
    const first = (await page.locator('#f-questions_0').boundingBox())!;
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await page.mouse.down();
    await page.mouse.move(grip.x + grip.width / 2, grip.y - 20, { steps: 4 });
    await page.mouse.move(first.x + 40, first.y + 20, { steps: 12 });
    await page.locator('section[aria-labelledby=sec-questions] .rule-list > li').first().and(page.locator('[data-drop=before]')).waitFor();
    await screen(page, 'editor-questions-drag', false);
    await page.mouse.up();
    await page.setViewportSize(viewport);
    // The drop renders after the mouse is up: wait for the list's words before reading the fields.
    await page
      .locator('section[aria-labelledby=sec-questions] [data-testid=list-announcement]', { hasText: 'intent moved to position 1' })
      .waitFor({ state: 'attached' });
    expect(await page.locator('#f-questions_0_key').inputValue()).toBe('intent');
    expect(await page.locator('section[aria-labelledby=sec-questions] [data-testid=list-announcement]').textContent()).toBe('intent moved to position 1');
    // From the keyboard: Enter on Move down moves it, and the focus stays on the moved question's Move down.
    await page.getByRole('button', { name: 'Move down intent' }).focus();
    await page.keyboard.press('Enter');
    // The move renders after the key press: the focus on the moved question's Move down says it has.
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'f-questions_1-down');
    expect(await page.locator('#f-questions_1_key').inputValue()).toBe('intent');
    expect(await page.locator('section[aria-labelledby=sec-questions] [data-testid=list-announcement]').textContent()).toBe('intent moved to position 2');

    await page.keyboard.press('Control+s');
    await page.getByText(/Saved revision \d+\./).waitFor();
    const saved = await savedDraft(ws, id);
    expect(saved.draft.questions[1].options.map((option: { value: string }) => option.value)).toEqual(['refund', 'exchange', 'repair', 'other']);
    expect(saved.draft.questions[0].key).toBe('urgency');
    await page.close();
  }, 120_000);

  it('turns human review on in the settings, asks for the kept inputs first, and saves what the author picked', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, `review-${uniqueMarker().slice(-8)}`, triageSchema(uniqueMarker()));
    const context = await signedIn(ws);
    const page = await open(context, `/decisions/${id}/editor`);

    await page.getByLabel('Send runs to review (needs Store input and Store output)').check();
    // Review needs the state a reviewer reads: without stored inputs the form says so under the setting.
    await page.locator('#f-settings_review').locator('xpath=ancestor::fieldset[1]').getByText(/input/i).first().waitFor();
    await page.getByLabel('Store input', { exact: true }).check();
    await page.getByLabel('block', { exact: true }).check();
    await page.getByLabel('Review runs decided on low confidence').uncheck();
    await page.getByLabel('Audit share of the other runs (0 to 1)').fill('0.1');
    await page.getByText('The schema is valid.').waitFor();
    await screen(page, 'editor-review-settings', false);

    await page.keyboard.press('Control+s');
    await page.getByText(/Saved revision \d+\./).waitFor();
    const saved = await savedDraft(ws, id);
    expect(saved.draft.settings.review).toEqual({
      when: { actions: ['escalate', 'block'], lowConfidence: false, engineError: false },
      auditRate: 0.1,
      dueMinutes: 240,
    });
    await page.close();
  }, 120_000);

  it('shows a new question’s issues only after an edit or a save, in the form’s words, with links that focus the field', async () => {
    const ws = await newWorkspace();
    const schema = schemaWithOther();
    schema.destinations = [{ key: 'ops', type: 'webhook', url: 'http://127.0.0.1:9/hook' }];
    const { id } = await createDecision(ws, `issues-${uniqueMarker().slice(-8)}`, schema);
    const context = await signedIn(ws);
    const page = await open(context, `/decisions/${id}/editor`);
    // A plain-http webhook is valid for the schema but refused at delivery: said while editing.
    // Both in the list above the form and beside the URL field.
    await page.getByText('Deliveries go to https:// URLs only').first().waitFor();
    expect(await page.getByText('Deliveries go to https:// URLs only').count()).toBe(2);

    await page.getByRole('button', { name: 'Add question' }).click();
    const criterion = page.locator('#f-questions_3_criterion');
    await criterion.waitFor();
    expect(await criterion.getAttribute('aria-invalid')).toBeNull();
    await page.getByText('they show once you edit those fields or save').waitFor();

    await page.getByRole('button', { name: 'Save draft' }).click();
    const link = page.locator('#editor-issues a', { hasText: 'Question 4 (question_4) › Criterion' });
    await link.waitFor();
    await link.click();
    // The link focuses its field once the form has been drawn (a timer after the click).
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'f-questions_3_criterion');
    expect(await criterion.getAttribute('aria-invalid')).toBe('true');
    await screen(page, 'editor-issues-new');
    await page.close();
  }, 120_000);

  it('merges two tabs’ edits to different fields, showing what each changed', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, `merge-${uniqueMarker().slice(-8)}`, schemaWithOther());
    const context = await signedIn(ws);
    const mine = await open(context, `/decisions/${id}/editor`);
    const theirs = await open(context, `/decisions/${id}/editor`);
    const before = (await savedDraft(ws, id)).revision;

    await mine.locator('#f-context').fill('Context from my tab');
    await theirs.locator('#f-fallbackAction').selectOption('continue');
    await theirs.getByRole('button', { name: 'Save draft' }).click();
    await theirs.getByText(`Saved revision ${before + 1}.`).waitFor();

    await mine.getByRole('button', { name: 'Save draft' }).click();
    const conflict = mine.getByTestId('conflict');
    await conflict.waitFor();
    const text = await conflict.innerText();
    expect(text).toContain('Fallback action');
    expect(text).toContain('Context');
    expect(text).toContain('touch different places');
    await screen(mine, 'editor-conflict');
    // Merging is the offered way; overwriting theirs needs a second, deliberate step.
    expect(await conflict.getByRole('button', { name: 'Keep both (merge)' }).getAttribute('class')).toBe('primary');
    await conflict.getByRole('button', { name: 'Keep both (merge)' }).click();
    await mine.getByRole('button', { name: 'Save draft' }).click();
    await mine.getByText(`Saved revision ${before + 2}.`).waitFor();
    const saved = await savedDraft(ws, id);
    expect({ context: saved.draft.context, fallbackAction: saved.draft.fallbackAction }).toEqual({
      context: 'Context from my tab',
      fallbackAction: 'continue',
    });
    await Promise.all([mine.close(), theirs.close()]);
  }, 120_000);
});

describe('safe deploys and switches', () => {
  it('marks a deploy that breaks callers, asks for the slug typed, and disables Deploy once nothing changed', async () => {
    const ws = await newWorkspace();
    const slug = `breaking-${uniqueMarker().slice(-8)}`;
    const schema = triageSchema(uniqueMarker()) as any;
    const decisionId = await deployedDecision(ws, slug, schema);
    const current = await savedDraft(ws, decisionId);
    schema.state.fields.order_id = { type: 'string', required: true };
    const saved = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/draft`, {
      token: ws.session,
      body: { schema, revision: current.revision },
    });
    expect(saved.status).toBe(200);

    const context = await signedIn(ws);
    const page = await open(context, `/decisions/${decisionId}/deploy`);
    await page.getByText('New required state field order_id: calls without it are refused.').first().waitFor();
    await page.getByRole('button', { name: 'Deploy the draft' }).click();
    const dialog = page.getByRole('dialog', { name: 'Deploy the draft as version 2?' });
    const confirm = dialog.getByRole('button', { name: 'Deploy, breaking callers' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(`Type ${slug} to confirm`).fill(slug);
    await screen(page, 'deploy-breaking', false);
    await confirm.click();
    await page.getByText('Deployed version 2.').waitFor();
    await page.getByText('The draft is the same as the active version 2: nothing to deploy.').waitFor();
    expect(await page.getByRole('button', { name: 'Deploy the draft' }).isDisabled()).toBe(true);
    expect((await runDecision(ws, slug, { message: 'no order id' })).status).toBe(422);
    await page.close();
  }, 120_000);

  it('asks before the endpoint is switched off, then shows the decision as Disabled', async () => {
    const ws = await newWorkspace();
    const slug = `switch-${uniqueMarker().slice(-8)}`;
    const decisionId = await deployedDecision(ws, slug, triageSchema(uniqueMarker()));
    const context = await signedIn(ws);
    const page = await open(context, `/decisions/${decisionId}/deploy`);
    const enabled = page.getByLabel('Endpoint enabled');

    await enabled.click();
    const dialog = page.getByRole('dialog', { name: `Turn off the endpoint of ${slug}?` });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await enabled.isChecked()).toBe(true);
    expect(await page.getByTestId('disabled-badge').count()).toBe(0);
    expect((await runDecision(ws, slug, { message: 'still on' })).status).toBe(200);

    await enabled.click();
    await page.getByRole('dialog').getByRole('button', { name: 'Turn off' }).click();
    await page.getByTestId('disabled-badge').waitFor();
    expect(await enabled.isChecked()).toBe(false);
    expect((await runDecision(ws, slug, { message: 'now off' })).status).toBe(409);
    await screen(page, 'deploy-disabled');
    await page.close();
  }, 120_000);

  it('lets a workspace use its own provider key only once a key that passed a test call is saved', async () => {
    const ws = await newWorkspace();
    const base = `/app/v1/workspaces/${ws.workspaceId}`;
    const refused = await call('PUT', `${base}/engine-settings`, { token: ws.session, body: { use_own_key: true } });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 409, code: 'CONFLICT' });

    const context = await signedIn(ws);
    const page = await open(context, '/settings');
    const useOwn = page.getByLabel("Run with this workspace's own provider key");
    expect(await useOwn.isDisabled()).toBe(true);

    // A key for a provider this service does not speak fails its test and is not saved.
    await page.locator('select[name=provider]').selectOption('anthropic');
    await page.getByLabel('Provider API key').fill('sk-ant-test-12345678');
    await page.getByRole('button', { name: 'Test and save key' }).click();
    await page.getByTestId('key-test').filter({ hasText: 'did not pass a test call' }).waitFor();
    expect((await call('GET', `${base}/provider-key`, { token: ws.session })).status).toBe(404);
    expect(await useOwn.isDisabled()).toBe(true);

    await page.locator('select[name=provider]').selectOption('openai');
    await page.getByLabel('Provider API key').fill('sk-own-test-12345678');
    await page.getByRole('button', { name: 'Test and save key' }).click();
    await page.getByTestId('key-test').filter({ hasText: 'The key works' }).waitFor();
    await page.getByText('…5678').waitFor();
    expect((await call('GET', `${base}/provider-key`, { token: ws.session })).body).toEqual({ provider: 'openai', last4: '5678' });
    expect(await useOwn.isDisabled()).toBe(false);
    await page.getByRole('button', { name: 'Test the key' }).click();
    await page.getByTestId('key-test').filter({ hasText: 'The key works' }).waitFor();
    await screen(page, 'settings-key-tested');
    await page.close();

    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});

import { Browser, Page } from 'playwright-core';
import { createDecision, newWorkspace, triageSchema, uniqueMarker } from './support/api';
import { checkScreen, launchChromium, signedInContext, watchProblems } from './support/browser';
import { waitFor } from './support/cluster';

/**
 * The editor's JSON view in a real headless Chromium: CodeMirror with line numbers under the app's strict CSP (no
 * violation reported, neither on the console nor as a securitypolicyviolation event), the validator's issues and a
 * syntax error listed with their line, a list entry that puts the cursor on that line, Tab that leaves the editor.
 * axe-core in both themes and at 360 px; with WEB_SCREENSHOTS=<dir> it also writes the screenshots.
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
const cursorLine = (page: Page) => page.locator('.cm-lineNumbers .cm-activeLineGutter').innerText();

describe('the JSON view', () => {
  it('numbers the lines, lists issues and syntax errors by line, jumps to them, and keeps the CSP', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, `json-${uniqueMarker().slice(-8)}`, triageSchema(uniqueMarker()));
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

    // An object field with two sub-fields, added through the form.
    await page.getByRole('button', { name: 'Add field', exact: true }).click();
    await page.locator('#f-state_fields_field_3').fill('address');
    const address = page.locator('fieldset.row', { has: page.locator('#f-state_fields_address') });
    await address.getByLabel('Type').first().selectOption('object');
    await address.getByRole('button', { name: 'Add sub-field address' }).click();
    await page.locator('#f-state_fields_address_fields_field_1').fill('street');
    await address.getByRole('button', { name: 'Add sub-field address' }).click();
    await page.locator('#f-state_fields_address_fields_field_2').fill('City');
    await page.locator('#f-state_fields_address_fields_street_required').check();

    // An issue of a sub-field is beside it and linked from the list in the form's words.
    const city = page.locator('#f-state_fields_address_fields_City');
    expect(await city.getAttribute('aria-invalid')).toBe('true');
    const link = page.locator('#editor-issues li[data-path="state.fields.address.fields.City"] a');
    expect(await link.innerText()).toBe('State › Field address › Field City');
    await page.locator('#f-context').focus();
    await link.click();
    // The link moves the focus once the form has shown the field, in a task of its own.
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'f-state_fields_address_fields_City');
    await address.scrollIntoViewIfNeeded();
    await checkScreen(page, 'editor-sub-fields', checked, false);

    // The JSON view shows them, numbers its lines, and marks the issue at its line.
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    const content = page.locator('.cm-content');
    await content.waitFor();
    expect(await content.getAttribute('aria-label')).toBe('JSON');
    expect(await page.locator('.cm-lineNumbers .cm-gutterElement').count()).toBeGreaterThan(20);
    // CodeMirror draws only the lines in view: the state comes first, so its lines are there with the top in view.
    // Scrolling redraws on the next frame, so wait until line 1 and the three fields are all drawn: only then is a
    // line's index in the drawn text its line number.
    await page.locator('#schema-json-label').evaluate((label) => label.scrollIntoView({ block: 'start' }));
    let lines: string[] = [];
    await waitFor(
      async () => {
        lines = (await content.innerText()).split('\n');
        return lines[0] === '{' && ['"address"', '"street"', '"City"'].every((needle) => lines.some((line) => line.includes(needle)));
      },
      10_000,
      'the JSON view drawn from its first line',
    );
    const lineOf = (needle: string) => lines.findIndex((line) => line.includes(needle)) + 1;
    expect(lineOf('"street"')).toBeGreaterThan(lineOf('"address"'));
    expect(lineOf('"City"')).toBeGreaterThan(lineOf('"street"'));
    const cityEntry = page.locator('.json-problems li').filter({ hasText: `Line ${lineOf('"City"')},` });
    expect(await cityEntry.innerText()).toContain('State › Field address › Field City');
    await cityEntry.getByRole('button').click();
    expect(await cursorLine(page)).toBe(String(lineOf('"City"')));
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.className)).toBe('json-host');

    // Broken JSON: the error names its line, and its entry puts the cursor there.
    await page.keyboard.press('ControlOrMeta+Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    await page.keyboard.type(' oops');
    const entry = page.locator('.json-problems li').first();
    await entry.filter({ hasText: /^Go to line 3 Line 3, column \d+: / }).waitFor();
    await page.locator('#editor-issues').getByText('The JSON does not parse').waitFor();
    await page.keyboard.press('ControlOrMeta+End');
    expect(await cursorLine(page)).not.toBe('3');
    await entry.getByRole('button', { name: 'Go to line 3' }).click();
    expect(await cursorLine(page)).toBe('3');
    await page.locator('.cm-lint-marker-error').first().waitFor();
    await checkScreen(page, 'editor-json-error', checked);

    // Tab leaves the editor for the next control, as from any text field.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.className)).not.toBe('json-host');

    // Mending the text clears the syntax error; the sub-field's issue is listed again.
    await content.click();
    await page.keyboard.press('ControlOrMeta+Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    for (let i = 0; i < ' oops'.length; i++) await page.keyboard.press('Backspace');
    await cityEntry.waitFor();
    expect(await page.locator('.json-problems li').count()).toBe(1);

    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.locator('.json-problems').evaluate((list) => list.scrollIntoView({ block: 'end' }));
    await checkScreen(page, 'editor-json-narrow', checked, false);

    expect(await violations(page)).toEqual([]);
    expect(Object.entries(checked).filter(([, found]) => found.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});

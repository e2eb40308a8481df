import { Browser, Page } from 'playwright-core';
import { call, deploy, deployedDecision, newWorkspace, runDecision, scriptEngine, triageSchema, uniqueMarker } from './support/api';
import { checkScreen, launchChromium, signedInContext, watchProblems } from './support/browser';

/**
 * Changing a decision safely, as an author does it in a real headless Chromium: the History tab lists the deployed
 * versions with their changes, a rollback asks first and deploys a copy of the chosen version as the next one,
 * and an execution's view shows its rule trace as a table. axe in both themes, no console error (a CSP violation
 * included). With WEB_SCREENSHOTS=<dir> it also writes the screenshots.
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

describe('versions in the web application', () => {
  it('rolls back to an earlier version after asking, and reads an execution’s rule trace', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const slug = `versions-${marker.slice(-8)}`;
    const first = triageSchema(marker);
    const decisionId = await deployedDecision(ws, slug, first);
    // Version 2 blocks from a lower fraud probability.
    const second = { ...first, policies: [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.5 }, action: 'block' }] };
    const saved = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/draft`, {
      token: ws.session,
      body: { schema: second, revision: 1 },
    });
    expect(saved.status).toBe(200);
    expect(await deploy(ws, decisionId)).toBe(2);

    const page: Page = await (await signedInContext(browser, ws)).newPage();
    watchProblems(page, problems);
    await page.goto(`/decisions/${slug}/history`);
    await page.getByRole('heading', { name: 'Deployed versions', level: 2 }).waitFor();
    await checkScreen(page, 'history', checked);
    // Version 1 is not active: rolling back to it asks first, and "no" changes nothing.
    await page.getByRole('button', { name: 'Roll back Version 1' }).click();
    const asked = page.getByRole('dialog', { name: 'Roll back to version 1?' });
    await asked.getByText('Deploy a copy of version 1 as the next version?').waitFor();
    await asked.getByText('Rule 1: condition fraud ≥ 0.5 → fraud ≥ 0.9').waitFor();
    await asked.getByRole('button', { name: 'Cancel' }).click();
    expect((await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`, { token: ws.session })).body.active_version).toBe(2);
    await page.getByRole('button', { name: 'Roll back Version 1' }).click();
    await page.getByRole('dialog', { name: 'Roll back to version 1?' }).getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByText('Deployed version 3, a copy of version 1.').waitFor();
    const after = (await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`, { token: ws.session })).body;
    expect(after.active_version).toBe(3);
    await page.getByText('rollback to version 1').waitFor();

    // A run of version 3 blocks only at 0.9 again; its trace says which rule decided and why.
    await scriptEngine(marker, [
      { answers: { intent: { refund: 0.8, exchange: 0.2, other: 0 }, urgency: { calm: 1, annoyed: 0, furious: 0 }, fraud: { yes: 0.95, no: 0.05 } } },
    ]);
    const run = await runDecision(ws, slug, { message: 'Refund please' });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ version: 3, action: 'block' });
    await page.goto(`/executions/${run.body.execution_id}`);
    const trace = page.locator('section.trace');
    await trace.getByRole('heading', { name: 'Rule trace', level: 2 }).waitFor();
    expect(await trace.locator('p').first().innerText()).toContain('block');
    expect(await trace.getByText('0.95').count()).toBeGreaterThan(0);
    await checkScreen(page, 'execution-trace', checked);

    expect(problems).toEqual([]);
    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
  });

  it('reviews a deploy in the form’s words: a rule inserted at the top is one change, a missing secret is named, and rollback and compare read the same', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    const slug = `review-${marker.slice(-8)}`;
    const rule = (value: number, action: string) => ({ when: { on: 'answer', question: 'fraud', op: 'gte', value }, action });
    const hook = { key: 'crm_hook', type: 'webhook', url: 'https://crm.example.com/hook', headers: { Authorization: 'Bearer {{secrets.CRM_TOKEN}}' } };
    const first = triageSchema(marker, { policies: [rule(0.9, 'block'), rule(0.7, 'escalate'), rule(0.5, 'continue')], destinations: [hook] });
    const decisionId = await deployedDecision(ws, slug, first);
    const inserted = {
      when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' },
      and: [{ on: 'score', question: 'urgency', op: 'gte', value: 3 }],
      action: 'escalate',
    };
    const saved = await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/draft`, {
      token: ws.session,
      body: { schema: { ...first, policies: [inserted, ...first.policies] }, revision: 1 },
    });
    expect(saved.status).toBe(200);

    const page: Page = await (await signedInContext(browser, ws)).newPage();
    watchProblems(page, problems);
    await page.goto(`/decisions/${slug}/deploy`);
    await page.getByRole('heading', { name: 'What the deploy changes against the active version', level: 2 }).waitFor();
    const note = page.getByTestId('missing-secrets');
    await note.getByText('Destination crm_hook: header Authorization names CRM_TOKEN, which is not set.').waitFor();
    const review = page.getByTestId('review');
    expect(await review.getByTestId('review-summary').innerText()).toBe('1 change');
    expect(await review.locator('li').allInnerTexts()).toEqual(['added Rule added at position 1: when intent = refund and score of urgency ≥ 3 → escalate']);
    expect(await review.getByRole('heading', { level: 3 }).allInnerTexts()).toEqual(['Rules']);
    await checkScreen(page, 'deploy-review', checked);

    // The confirmation says it again, then the deploy goes ahead.
    await page.getByRole('button', { name: 'Deploy the draft' }).click();
    const dialog = page.getByRole('dialog', { name: 'Deploy the draft as version 2?' });
    await dialog.getByTestId('missing-secrets').waitFor();
    await dialog.getByRole('button', { name: 'Deploy the draft' }).click();
    await page.getByText('Deployed version 2.').waitFor();

    // History: version 1 says what it holds; compare reads in the same words; a rollback reviews before it deploys.
    await page.goto(`/decisions/${slug}/history`);
    await page.getByText('The first version: 3 questions (intent, urgency, fraud), 1 composite (risk), 3 rules, 1 destination (crm_hook).').waitFor();
    const compare = page.getByRole('region', { name: 'Compare two versions' });
    await compare.getByRole('button', { name: 'Compare' }).click();
    await compare.getByText('Rule added at position 1: when').waitFor();
    expect(await compare.getByTestId('review').locator('li').count()).toBe(1);
    await compare.getByTestId('missing-secrets').waitFor();
    await compare.scrollIntoViewIfNeeded();
    await checkScreen(page, 'compare', checked, false);

    await page.getByRole('button', { name: 'Roll back Version 1' }).click();
    const asked = page.getByRole('dialog', { name: 'Roll back to version 1?' });
    await asked.getByText('Against the active version 2, the rollback changes:').waitFor();
    expect(await asked.getByTestId('review').locator('li').allInnerTexts()).toEqual([
      'removed Rule removed from position 1: when intent = refund and score of urgency ≥ 3 → escalate',
    ]);
    await checkScreen(page, 'rollback-review', checked, false);
    await asked.getByRole('button', { name: 'Cancel' }).click();

    // A shadow of a draft that breaks callers is allowed, and says what promoting it would break.
    const breaking = { ...first, state: { type: 'object', fields: { ...first.state.fields, order_id: { type: 'string', required: true } } } };
    expect(
      (
        await call('PUT', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/draft`, {
          token: ws.session,
          body: { schema: breaking, revision: 2 },
        })
      ).status,
    ).toBe(200);
    await page.reload();
    const shadow = page.getByRole('region', { name: 'Shadow a candidate on live traffic' });
    await shadow.getByText('The draft breaks callers').waitFor();
    await shadow.getByText('New required state field order_id: calls without it are refused.').waitFor();

    expect(problems).toEqual([]);
    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
  });
});

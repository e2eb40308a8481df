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
    await page.getByText('Deploy a copy of version 1 as the next version?').waitFor();
    await page.getByRole('button', { name: 'No' }).click();
    expect((await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}`, { token: ws.session })).body.active_version).toBe(2);
    await page.getByRole('button', { name: 'Roll back Version 1' }).click();
    await page.getByRole('button', { name: 'Yes' }).click();
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
});

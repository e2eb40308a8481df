import { Browser, Page } from 'playwright-core';
import { call, deployedDecision, expectError, roomyWorkspace, runDecision, triageSchema, uniqueMarker, Workspace } from './support/api';
import { axisScale } from '../../apps/web/src/charts/scale';
import { chartTable, checkScreen, launchChromium, signedInContext, sticksOut, watchProblems } from './support/browser';

/**
 * The decision overview in a real headless Chromium against the shared cluster: a decision with a few hundred runs
 * of mixed actions, errors and fallbacks, live and playground; the charts' numbers (their table view) equal the
 * executions the API lists. axe-core in both themes, no console error (a CSP violation included), 360 px.
 * With WEB_SCREENSHOTS=<dir> it also writes the screenshots.
 */
const LIVE_RUNS = 240;
const INVALID_RUNS = 24;
const PLAYGROUND_RUNS = 6;
/** Live runs of a second decision, so that the usage per decision has two rows to add up. */
const OTHER_RUNS = 5;
/** Runs that all fall in one minute, a fifth of them invalid states (errors): one bucket of an hour's sixty. */
const ONE_MINUTE_RUNS = 20;
const ONE_MINUTE_ERRORS = 4;

let browser: Browser;
const problems: string[] = [];
const checked: Record<string, string[]> = {};

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

async function signedIn(ws: Workspace): Promise<Page> {
  const page = await (await signedInContext(browser, ws)).newPage();
  watchProblems(page, problems);
  // Stricter than the console alone: a chart must not ask for anything that fails, and the response names it.
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  return page;
}

const screen = (page: Page, name: string) => checkScreen(page, name, checked);

/** Every execution of the decision, read through the API's paging. */
async function executionsOf(ws: Workspace, slug: string): Promise<Array<{ status: string; action: string | null; livemode: boolean }>> {
  const all: Array<{ status: string; action: string | null; livemode: boolean }> = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: typeof all; next_cursor: string | null } } = await call(
      'GET',
      `/app/v1/workspaces/${ws.workspaceId}/executions?decision=${slug}&source=all&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      { token: ws.session },
    );
    all.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor);
  return all;
}

function tally<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

describe('the decision overview', () => {
  it('draws runs by action, errors and fallbacks whose numbers equal the executions, live and playground apart', async () => {
    const ws = await roomyWorkspace();
    const slug = `overview-${uniqueMarker().slice(-8)}`;
    const schema = triageSchema(uniqueMarker(), {
      policies: [
        { when: { on: 'answer', question: 'intent', op: 'eq', value: 'refund' }, action: 'block' },
        { when: { on: 'answer', question: 'urgency', op: 'eq', value: 'furious' }, action: 'escalate' },
      ],
    });
    // A demanding minimum on one question makes some runs fall back.
    (schema.questions[1] as Record<string, unknown>).minConfidence = 0.6;
    const decisionId = await deployedDecision(ws, slug, schema);
    for (let wave = 0; wave < LIVE_RUNS; wave += 8) {
      await Promise.all(Array.from({ length: 8 }, (_, i) => runDecision(ws, slug, { message: `Order ${wave + i}: the screen is cracked and I am upset` })));
    }
    for (let i = 0; i < INVALID_RUNS; i += 1) expect((await runDecision(ws, slug, { amount: i })).status).toBe(422);
    for (let i = 0; i < PLAYGROUND_RUNS; i += 1) {
      const played = await call('POST', `/app/v1/workspaces/${ws.workspaceId}/decisions/${decisionId}/playground`, {
        token: ws.session,
        body: { version: null, state: { message: `Playground ${i}` } },
      });
      expect(played.status).toBe(200);
    }

    const executions = await executionsOf(ws, slug);
    const live = executions.filter((execution) => execution.livemode);
    expect(live).toHaveLength(LIVE_RUNS + INVALID_RUNS);
    const liveActions = tally(
      live.filter((execution) => execution.status === 'success'),
      (execution) => execution.action!,
    );
    // The mix the journey needs: several actions and some errors.
    expect(Object.keys(liveActions).length).toBeGreaterThanOrEqual(2);

    // The endpoint refuses a range it cannot draw, in the one error shape.
    expectError(await call('GET', `/app/v1/workspaces/${ws.workspaceId}/decisions/${slug}/overview?from=soon`, { token: ws.session }), 400, 'INVALID_REQUEST');

    const page = await signedIn(ws);
    await page.goto(`/decisions/${slug}/overview?range=hour`);
    await page.getByRole('heading', { name: 'Runs by action', level: 3 }).waitFor();
    expect(await page.getByRole('link', { name: 'Overview' }).getAttribute('aria-current')).toBe('page');
    expect(await page.getByTestId('ov-runs').innerText()).toBe(String(LIVE_RUNS + INVALID_RUNS));

    // The runs chart's table: per bucket, one column per action and one for errors; the sums equal the log.
    const runsChart = page.locator('figure', { has: page.getByRole('heading', { name: 'Runs by action', level: 3 }) });
    await runsChart.getByRole('button', { name: 'Table' }).click();
    const columns = await runsChart.locator('thead th').allInnerTexts();
    await runsChart.getByRole('button', { name: 'Table' }).click();
    const rows = await chartTable(page, 'Runs by action');
    const sums: Record<string, number> = {};
    for (const row of rows) columns.slice(1).forEach((column, i) => (sums[column] = (sums[column] ?? 0) + Number(row[i + 1])));
    const { Errors: errors, ...byAction } = sums;
    expect(errors).toBe(INVALID_RUNS);
    expect(byAction).toEqual(liveActions);

    // Fallbacks (low confidence on urgency) as the executions' reasons say.
    const reasons = await chartTable(page, 'Top action reasons');
    const lowConfidence = reasons.find((row) => row[0] === 'Low confidence: urgency');
    const allReasons = tally(
      live.filter((execution) => execution.status === 'success'),
      (execution) => (execution as unknown as { action_reason: { type: string } }).action_reason.type,
    );
    expect(Number(lowConfidence?.[1] ?? 0)).toBe(allReasons.low_confidence ?? 0);
    await screen(page, 'overview');

    // Test traffic apart: the playground's runs.
    await page.getByRole('button', { name: 'Test and playground' }).click();
    await page.waitForURL(/traffic=test/);
    await page
      .getByTestId('ov-runs')
      .filter({ hasText: String(PLAYGROUND_RUNS) })
      .waitFor();

    // The range and traffic are in the URL: a fresh tab shows the same view.
    const shared = await signedIn(ws);
    await shared.goto(page.url());
    expect(await shared.getByTestId('ov-runs').innerText()).toBe(String(PLAYGROUND_RUNS));
    expect(await shared.getByRole('button', { name: 'Last hour' }).getAttribute('aria-pressed')).toBe('true');

    // 360 px: nothing runs off the side.
    await page.getByRole('button', { name: 'Live' }).click();
    await page.setViewportSize({ width: 360, height: 780 });
    await page
      .getByTestId('ov-runs')
      .filter({ hasText: String(LIVE_RUNS + INVALID_RUNS) })
      .waitFor();
    // Named by what sticks out, so that a failure says where to look.
    expect(await sticksOut(page)).toEqual([]);
    await screen(page, 'overview-narrow');

    // A second decision billed a few times: the usage per decision has two rows.
    const otherSlug = `other-${uniqueMarker().slice(-8)}`;
    const otherId = await deployedDecision(ws, otherSlug, triageSchema(uniqueMarker()));
    for (let i = 0; i < OTHER_RUNS; i += 1) expect((await runDecision(ws, otherSlug, { message: `Other ${i}: where is my parcel?` })).status).toBe(200);

    // The usage screen: the ledger's figures, equal to /v1/me, per day and per decision adding up to the period's total.
    const me = await call('GET', '/v1/me', { token: ws.apiKey });
    expect(me.status).toBe(200);
    expect(me.body.usage.used).toBe(LIVE_RUNS + OTHER_RUNS);
    const usage = await call('GET', `/app/v1/workspaces/${ws.workspaceId}/usage`, { token: ws.session });
    expect(usage.body.account.usage).toEqual(me.body.usage);
    expect(usage.body.decisions).toEqual([
      { decision_id: decisionId, billed: LIVE_RUNS, credits_microcents: 0 },
      { decision_id: otherId, billed: OTHER_RUNS, credits_microcents: 0 },
    ]);
    const billing = await signedIn(ws);
    await billing.goto('/billing');
    await billing
      .getByTestId('usage-used')
      .filter({ hasText: String(me.body.usage.used) })
      .waitFor();
    const daily = await chartTable(billing, 'Billed decisions per day');
    expect(daily.reduce((sum, row) => sum + Number(row[1]), 0)).toBe(me.body.usage.used);
    // Per decision, named from the decisions list: the table and the chart's table say the same and add up to used.
    const perDecision = await billing
      .getByRole('table', { name: 'Usage per decision' })
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Array.from((tr as any).children as ArrayLike<{ textContent: string }>, (cell) => cell.textContent)));
    expect(perDecision.map((row) => [row[0], Number(row[1])])).toEqual([
      [`Decision ${slug}`, LIVE_RUNS],
      [`Decision ${otherSlug}`, OTHER_RUNS],
    ]);
    expect(perDecision.reduce((sum, row) => sum + Number(row[1]), 0)).toBe(me.body.usage.used);
    expect(await chartTable(billing, 'Billed decisions per decision')).toEqual(perDecision);
    // Names longer than the axis are wrapped onto lines there, whole and inside the chart, never cut.
    const nameAxis = billing
      .locator('figure', { has: billing.getByRole('heading', { name: 'Billed decisions per decision', level: 3 }) })
      .locator('.recharts-yAxis-tick-labels text');
    await nameAxis.first().waitFor();
    const nameTicks = await nameAxis.evaluateAll((ticks) =>
      ticks.map((tick) => {
        const svg = (tick as any).ownerSVGElement.getBoundingClientRect();
        const lines = Array.from((tick as any).querySelectorAll('tspan') as ArrayLike<{ textContent: string }>, (line) => line.textContent);
        return { lines, inside: (tick as any).getBoundingClientRect().left >= svg.left };
      }),
    );
    // Lines joined again, spaces aside: every character of the name is drawn.
    expect(nameTicks.map((tick) => ({ name: tick.lines.join(''), inside: tick.inside }))).toEqual([
      { name: `Decision${slug}`, inside: true },
      { name: `Decision${otherSlug}`, inside: true },
    ]);
    expect(nameTicks.every((tick) => tick.lines.length >= 1 && tick.lines.every((line) => !line.includes('…')))).toBe(true);
    // The per-decision part at the top of the screenshot, without the tooltip the last click left.
    await billing.mouse.move(0, 0);
    await billing
      .getByRole('heading', { name: 'Usage per decision', level: 3 })
      .evaluate((heading) => (heading as unknown as { scrollIntoView(options: object): void }).scrollIntoView({ block: 'start' }));
    await checkScreen(billing, 'usage-per-decision', checked, false);
    await screen(billing, 'usage');
    await billing.setViewportSize({ width: 360, height: 780 });
    const usageOverflow = await billing.evaluate(
      () => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).document.documentElement.clientWidth,
    );
    expect(usageOverflow).toBe(0);
  }, 180_000);

  it('draws every chart of runs that all fell in one minute: lone points dotted, axes fitted to the data, names whole, the range shown', async () => {
    const ws = await roomyWorkspace();
    const slug = `minute-${uniqueMarker().slice(-8)}`;
    await deployedDecision(
      ws,
      slug,
      triageSchema(uniqueMarker(), { policies: [{ when: { on: 'answer', question: 'intent', op: 'neq', value: 'other' }, action: 'block' }] }),
    );
    // All in one minute: wait for the start of a minute when this one is nearly over.
    if (new Date().getSeconds() > 30) await new Promise((resolve) => setTimeout(resolve, (61 - new Date().getSeconds()) * 1000));
    const started = new Date();
    const replies = await Promise.all([
      ...Array.from({ length: ONE_MINUTE_RUNS - ONE_MINUTE_ERRORS }, (_, i) => runDecision(ws, slug, { message: `Minute ${i}: my parcel is late` })),
      ...Array.from({ length: ONE_MINUTE_ERRORS }, (_, i) => runDecision(ws, slug, { amount: i })),
    ]);
    expect(new Date().getMinutes()).toBe(started.getMinutes());
    expect(replies.filter((reply) => reply.status === 422)).toHaveLength(ONE_MINUTE_ERRORS);

    const page = await signedIn(ws);
    await page.goto(`/decisions/${slug}/overview?range=hour`);
    await page
      .getByTestId('ov-runs')
      .filter({ hasText: String(ONE_MINUTE_RUNS) })
      .waitFor();
    const chartOf = (title: string) => page.locator('figure', { has: page.getByRole('heading', { name: title, level: 3 }) });

    // Every chart with data draws a mark with a geometry: a bar, a line of two points or more, or a lone point's dot.
    const titles = ['Runs by action', 'Error and fallback rate', 'Latency p50 and p95', 'Input tokens', 'Engine cost', 'Top action reasons'];
    const marks: Record<string, number> = {};
    for (const title of titles) {
      marks[title] = await chartOf(title)
        .locator('.recharts-wrapper > svg.recharts-surface')
        .evaluate((svg) => {
          const shapes = Array.from(
            (svg as any).querySelectorAll('.recharts-bar-rectangle path, path.recharts-rectangle, path.recharts-curve, circle') as ArrayLike<any>,
          );
          return shapes.filter((shape) => {
            if (shape.tagName === 'circle') return Number(shape.getAttribute('r')) > 0 && Number.isFinite(Number(shape.getAttribute('cy')));
            const box = shape.getBBox();
            // A line drawn through one point has a path with no extent; a bar or a line of two points has one.
            return /\d/.test(shape.getAttribute('d') ?? '') && box.width + box.height > 0;
          }).length;
        });
    }
    expect(Object.entries(marks).filter(([, count]) => count === 0)).toEqual([]);
    // The rates and latencies of the one busy minute are dots: one per series.
    expect(await chartOf('Error and fallback rate').locator('circle.chart-lone-point').count()).toBe(2);
    expect(await chartOf('Latency p50 and p95').locator('circle.chart-lone-point').count()).toBe(2);

    // The cost axis ends at the first round tick above the minute's cost (or at its floor when it cost nothing).
    // Read once drawn: the chart is drawn again after its table is closed, and measures its box before its axes.
    const ticksOf = async (title: string) => {
      const labels = chartOf(title).locator('.recharts-yAxis-tick-labels text');
      await labels.first().waitFor();
      return (await labels.allTextContents()).map(Number);
    };
    const costTable = await chartTable(page, 'Engine cost');
    const minuteCost = Math.max(...costTable.map((row) => Number(String(row[1]).replace('$', ''))));
    const costTicks = await ticksOf('Engine cost');
    expect(costTicks).toEqual(axisScale([minuteCost], { minSpan: 0.001 }).ticks);
    expect(Math.max(...costTicks)).toBeLessThanOrEqual(Math.max(minuteCost * 2, 0.001));
    // The rate axis: the minute's rates (a fifth of errors) under an axis ending near them, not at 100.
    const rateTable = await chartTable(page, 'Error and fallback rate');
    const rates = rateTable.flatMap((row) => row.slice(1).map((cell) => Number(String(cell).replace(' %', '')))).filter(Number.isFinite);
    expect(rates).toContain((100 * ONE_MINUTE_ERRORS) / ONE_MINUTE_RUNS);
    const rateTicks = await ticksOf('Error and fallback rate');
    expect(rateTicks).toEqual(axisScale(rates, { minSpan: 10 }).ticks);
    expect(Math.max(...rateTicks)).toBeLessThan(Math.max(...rates) * 2);

    // No text of any chart is cut; the rule is named by its version and condition.
    const chartTexts = await page.locator('.charts svg text').allTextContents();
    expect(chartTexts.filter((text) => text.includes('…'))).toEqual([]);
    const reasons = await chartTable(page, 'Top action reasons');
    expect(reasons.map((row) => row[0])).toContain('v1 · rule 1: intent ≠ other → block');

    // The From and To fields show the hour drawn, not a week.
    const [from, to] = await page.locator('input[type="datetime-local"]').evaluateAll((inputs) => inputs.map((input) => (input as any).value as string));
    const minutes = (new Date(to!).getTime() - new Date(from!).getTime()) / 60_000;
    // The hour widened to whole minutes, as the runner answers and the charts draw it.
    expect(minutes).toBeGreaterThanOrEqual(60);
    expect(minutes).toBeLessThanOrEqual(61);
    expect(Math.abs(new Date(to!).getTime() - Date.now())).toBeLessThan(3 * 60_000);

    // Without the tooltip the table toggles' clicks left over the runs chart.
    await page.mouse.move(0, 0);
    await screen(page, 'overview-minute');
    // The charts below the first two: latency's dots, the cost axis, the reasons named whole.
    await page.mouse.move(0, 0);
    await page
      .getByRole('heading', { name: 'Latency p50 and p95', level: 3 })
      .evaluate((heading) => (heading as unknown as { scrollIntoView(options: object): void }).scrollIntoView({ block: 'start' }));
    await checkScreen(page, 'overview-minute-charts', checked, false);
  }, 180_000);

  it('has no serious or critical accessibility violation in either theme, and logs no error (no CSP violation)', () => {
    expect(Object.keys(checked).sort()).toEqual([
      'overview (dark)',
      'overview (light)',
      'overview-minute (dark)',
      'overview-minute (light)',
      'overview-minute-charts (dark)',
      'overview-minute-charts (light)',
      'overview-narrow (dark)',
      'overview-narrow (light)',
      'usage (dark)',
      'usage (light)',
      'usage-per-decision (dark)',
      'usage-per-decision (light)',
    ]);
    expect(Object.entries(checked).filter(([, violations]) => violations.length > 0)).toEqual([]);
    expect(problems).toEqual([]);
  });
});

import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { baseUrl, Workspace } from './api';

/**
 * What the browser tests share: Debian's headless Chromium, axe-core on a screen in both themes (serious and
 * critical violations only), screenshots when WEB_SCREENSHOTS=<dir> is set, and the console errors and uncaught page
 * errors a page logs.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SCREENSHOTS = process.env.WEB_SCREENSHOTS ? resolve(process.env.WEB_SCREENSHOTS) : null;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** Records the page's console errors and uncaught errors in `problems`; a refused call's "Failed to load resource" is the screen's to show. */
export function watchProblems(page: Page, problems: string[]): void {
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
}

export async function axe(page: Page): Promise<string[]> {
  const violations = await page.evaluate(async (source: string) => {
    if (!(globalThis as any).axe) (0, eval)(source);
    const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return result.violations as Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }>;
  }, AXE_SOURCE);
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

/**
 * Checks the screen as it is in light and dark into `checked`, and writes its screenshots when asked to. `scroll`
 * false keeps the scroll position (a dialog open over a scrolled page).
 */
export async function checkScreen(page: Page, name: string, checked: Record<string, string[]>, scroll = true): Promise<void> {
  if (scroll) await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
  for (const theme of ['light', 'dark'] as const) {
    await page.evaluate((value) => ((globalThis as any).document.documentElement.dataset.theme = value), theme);
    checked[`${name} (${theme})`] = await axe(page);
    if (SCREENSHOTS) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, `${name}-${theme}.png`), fullPage: false });
    }
  }
  await page.evaluate(() => ((globalThis as any).document.documentElement.dataset.theme = 'system'));
}

/** A browser context signed in as the workspace's owner, in that workspace, at 1280 × 860. */
export async function signedInContext(browser: Browser, ws: Workspace): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: baseUrl(), viewport: { width: 1280, height: 860 } });
  context.setDefaultTimeout(20_000);
  await context.addInitScript(
    ([token, workspace]) => {
      (globalThis as any).localStorage.setItem('ds.session', token);
      (globalThis as any).localStorage.setItem('ds.workspace', workspace);
    },
    [ws.session, ws.workspaceId],
  );
  return context;
}

/**
 * What sticks out sideways past the page's width, outside any box that scrolls or clips on its own, named by tag,
 * id and classes so that a failure says where to look. Empty when the layout fits (360 px must).
 */
export function sticksOut(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const document = (globalThis as any).document;
    const width = document.documentElement.clientWidth;
    return [...document.querySelectorAll('body *')]
      .filter((element: any) => element.getBoundingClientRect().right > width + 0.5)
      .filter((element: any) => {
        for (let box = element.parentElement; box && box !== document.body; box = box.parentElement) {
          if ((globalThis as any).getComputedStyle(box).overflowX !== 'visible') return false;
        }
        return true;
      })
      .map(
        (element: any) =>
          `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}.${String(element.className?.baseVal ?? element.className).replace(/ /g, '.')}`,
      )
      .slice(0, 10);
  });
}

/**
 * A row of links that scrolls sideways inside itself (the navigation, a decision's tabs): whether it is wider than its
 * box, whether its current link lies wholly inside the box, which edges fade as having more behind them, and how wide
 * the document is (the page itself must not scroll sideways).
 */
export function stripState(page: Page, selector: string): Promise<{ scrolls: boolean; currentInView: boolean; fades: string[]; documentWidth: number }> {
  return page.locator(selector).evaluate((strip: any) => {
    const box = strip.getBoundingClientRect();
    const current = strip.querySelector('[aria-current="page"]').getBoundingClientRect();
    return {
      scrolls: strip.scrollWidth > strip.clientWidth,
      currentInView: current.left >= box.left - 0.5 && current.right <= box.right + 0.5,
      fades: ['start', 'end'].filter((edge) => strip.hasAttribute(`data-more-${edge}`)),
      documentWidth: (globalThis as any).document.documentElement.scrollWidth,
    };
  });
}

/** Whether the page itself scrolls sideways. */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth > (globalThis as any).innerWidth);
}

/** The table behind a chart (its frame's Table button): its body rows as text cells. */
export async function chartTable(page: Page, title: string): Promise<string[][]> {
  const chart = page.locator('figure', { has: page.getByRole('heading', { name: title, level: 3 }) });
  await chart.getByRole('button', { name: 'Table' }).click();
  const rows = chart.locator('tbody tr');
  await rows.first().waitFor();
  const cells = await rows.evaluateAll((trs) =>
    trs.map((tr) => Array.from((tr as any).children as ArrayLike<{ textContent: string }>, (cell) => cell.textContent)),
  );
  await chart.getByRole('button', { name: 'Table' }).click();
  return cells;
}

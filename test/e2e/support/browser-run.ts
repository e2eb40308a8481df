import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { baseUrl } from './api';

/**
 * A headless Chromium against the shared cluster, for browser tests: tabs signed in or not, console and page errors
 * collected, and each screen checked by axe-core in both themes (screenshots written when WEB_SCREENSHOTS=<dir>).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SCREENSHOTS = process.env.WEB_SCREENSHOTS ? resolve(process.env.WEB_SCREENSHOTS) : null;

export class BrowserRun {
  /** Console errors and page errors seen in any tab. */
  readonly problems: string[] = [];
  /** Serious and critical axe-core violations per screen and theme. */
  readonly checked: Record<string, string[]> = {};
  private browser: Browser | null = null;
  private readonly contexts: BrowserContext[] = [];

  async start(): Promise<void> {
    this.browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  }

  async close(): Promise<void> {
    await this.browser?.close();
  }

  /** A new tab, in a context of its own; with `session`, signed in with it (and in `workspace`, if given). */
  async tab(options: { session?: string; workspace?: string; width?: number } = {}): Promise<Page> {
    const context = await this.browser!.newContext({ baseURL: baseUrl(), viewport: { width: options.width ?? 1280, height: 860 } });
    context.setDefaultTimeout(20_000);
    this.contexts.push(context);
    if (options.session) {
      await context.addInitScript(
        ([token, workspace]) => {
          (globalThis as any).localStorage.setItem('ds.session', token);
          if (workspace) (globalThis as any).localStorage.setItem('ds.workspace', workspace);
        },
        [options.session, options.workspace ?? ''],
      );
    }
    const page = await context.newPage();
    page.on('console', (message) => {
      // A refused call is logged by Chromium as a failed resource; the screen shows it.
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) this.problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.problems.push(`page error: ${error.message}`));
    return page;
  }

  /** Checks the screen with axe-core in light and dark, and writes its screenshots when asked to. */
  async screen(page: Page, name: string): Promise<void> {
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((value) => ((globalThis as any).document.documentElement.dataset.theme = value), theme);
      this.checked[`${name} (${theme})`] = await axe(page);
      if (SCREENSHOTS) {
        mkdirSync(SCREENSHOTS, { recursive: true });
        await page.screenshot({ path: join(SCREENSHOTS, `${name}-${theme}.png`), fullPage: false });
      }
    }
    await page.evaluate(() => ((globalThis as any).document.documentElement.dataset.theme = 'system'));
  }
}

async function axe(page: Page): Promise<string[]> {
  const violations = await page.evaluate(async (source: string) => {
    if (!(globalThis as any).axe) (0, eval)(source);
    const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return result.violations as Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }>;
  }, AXE_SOURCE);
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

/** Whether the page scrolls sideways (the layout must fit 360 px). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth > (globalThis as any).innerWidth);
}

import { Browser, BrowserContext, Page } from 'playwright-core';
import { baseUrl } from './api';
import { checkScreen, launchChromium, watchProblems } from './browser';

export { scrollsSideways } from './browser';

/**
 * A headless Chromium against the shared cluster, for journeys that open several tabs (signed in or not) and check
 * each screen with axe-core in both themes: the shared helpers of ./browser, with the tabs and findings kept together.
 */
export class BrowserRun {
  /** Console errors and page errors seen in any tab. */
  readonly problems: string[] = [];
  /** Serious and critical axe-core violations per screen and theme. */
  readonly checked: Record<string, string[]> = {};
  private browser: Browser | null = null;
  private readonly contexts: BrowserContext[] = [];

  async start(): Promise<void> {
    this.browser = await launchChromium();
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
    watchProblems(page, this.problems);
    return page;
  }

  /** Checks the screen with axe-core in light and dark, and writes its screenshots when asked to. */
  screen(page: Page, name: string): Promise<void> {
    return checkScreen(page, name, this.checked);
  }
}

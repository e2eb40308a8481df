import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { baseUrl, createDecision, newWorkspace, triageSchema, uniqueMarker } from './support/api';
import { checkScreen, launchChromium, signedInContext, watchProblems } from './support/browser';
import { ROOT } from './support/cluster';

/**
 * The web application loaded by route, in a real headless Chromium against the shared cluster: each route fetches the
 * entry and its own screen's files as the build's manifest lists them, and nothing of another screen (no charts,
 * CodeMirror or drag and drop where they are not used); a screen on its way shows the shared loading line inside the
 * shell, and one that cannot be fetched the error with a reload; the lazy files come from 'self' under the strict CSP,
 * cached for a year. With WEB_SCREENSHOTS=<dir> it writes the screenshots of a lazy screen loading and loaded.
 */
let browser: Browser;
const problems: string[] = [];
const checked: Record<string, string[]> = {};

interface ManifestChunk {
  file: string;
  name?: string;
  imports?: string[];
  dynamicImports?: string[];
}
const manifest = JSON.parse(readFileSync(join(ROOT, 'dist', 'apps', 'web', '.vite', 'manifest.json'), 'utf8')) as Record<string, ManifestChunk>;

/** The chunk of a screen's source file (a chunk shared by two lazy screens is keyed by its file name, with its name). */
function chunkOf(source: string): string {
  if (manifest[source]) return source;
  const name = source.replace(/^.*\//, '').replace(/\.tsx$/, '');
  const key = Object.keys(manifest).find((candidate) => manifest[candidate]!.name === name);
  if (!key) throw new Error(`no chunk for ${source}`);
  return key;
}

/** The files (`/assets/…`) of the entry and the given screens, with everything they import statically. */
function filesOf(...sources: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = ['index.html', ...sources.map(chunkOf)];
  while (queue.length > 0) {
    const key = queue.shift()!;
    if (seen.has(key)) continue;
    seen.add(key);
    queue.push(...(manifest[key]!.imports ?? []));
  }
  return new Set([...seen].map((key) => `/${manifest[key]!.file}`));
}

const fileOf = (source: string) => `/${manifest[chunkOf(source)]!.file}`;
const CHARTS = fileOf('src/charts/charts.tsx');
const CODEMIRROR = fileOf('src/editors/json-view.tsx');
const EDITOR = fileOf('src/screens/editor.tsx');

/** The script files the page fetches from now on. */
function scriptsFetched(page: Page): Set<string> {
  const fetched = new Set<string>();
  page.on('request', (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname.endsWith('.js')) fetched.add(url.pathname);
  });
  return fetched;
}

async function cspWatched(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    (globalThis as any).cspViolations = [];
    (globalThis as any).document.addEventListener('securitypolicyviolation', (event: any) =>
      (globalThis as any).cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`),
    );
  });
}
const violations = (page: Page) => page.evaluate(() => (globalThis as any).cspViolations as string[]);

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('screens loaded by route', () => {
  it('signs in with the entry and the sign-in screen alone: no chart, CodeMirror or drag and drop file', async () => {
    const context = await browser.newContext({ baseURL: baseUrl(), viewport: { width: 1280, height: 860 } });
    try {
      await cspWatched(context);
      const page = await context.newPage();
      watchProblems(page, problems);
      const fetched = scriptsFetched(page);
      await page.goto('/sign-in');
      await page.getByLabel('Password').waitFor();
      await page.waitForLoadState('networkidle');
      expect([...fetched].sort()).toEqual([...filesOf('src/screens/auth.tsx')].sort());
      for (const heavy of [CHARTS, CODEMIRROR, EDITOR]) expect({ heavy, fetched: fetched.has(heavy) }).toEqual({ heavy, fetched: false });
      expect(await violations(page)).toEqual([]);
      await checkScreen(page, 'sign-in', checked);
    } finally {
      await context.close();
    }
  });

  it('brings the editor without CodeMirror until the JSON view is opened, and the charts only with the overview', async () => {
    const ws = await newWorkspace();
    const { id } = await createDecision(ws, `routes-${uniqueMarker().slice(-8)}`, triageSchema(uniqueMarker()));
    const context = await signedInContext(browser, ws);
    try {
      await cspWatched(context);
      const page = await context.newPage();
      watchProblems(page, problems);
      const fetched = scriptsFetched(page);
      await page.goto(`/decisions/${id}/editor`);
      await page.getByRole('button', { name: 'JSON', exact: true }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(fetched.has(EDITOR)).toBe(true);
      expect(fetched.has(CODEMIRROR)).toBe(false);
      expect(fetched.has(CHARTS)).toBe(false);

      await page.getByRole('button', { name: 'JSON', exact: true }).click();
      await page.locator('.cm-content').waitFor();
      expect(fetched.has(CODEMIRROR)).toBe(true);

      const charts = page.waitForResponse((response) => new URL(response.url()).pathname === CHARTS);
      await page.getByRole('link', { name: 'Overview' }).click();
      expect((await charts).status()).toBe(200);
      expect(await violations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows the shared loading line inside the shell while a screen is on its way, then the screen', async () => {
    const ws = await newWorkspace();
    const context = await signedInContext(browser, ws);
    try {
      const page = await context.newPage();
      watchProblems(page, problems);
      // The API keys screen's file is held until the loading state has been looked at.
      let release: () => void = () => undefined;
      const held = new Promise<void>((done) => (release = done));
      await page.route(`**${fileOf('src/screens/keys.tsx')}`, async (route) => {
        await held;
        await route.continue();
      });
      await page.goto('/keys');
      const loading = page.locator('main#main').getByRole('status');
      await loading.waitFor();
      expect(await loading.textContent()).toBe('Loading…');
      // The shell is drawn around it: the navigation is there to leave by.
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).getAttribute('aria-current')).toBe('page');
      await checkScreen(page, 'lazy-screen-loading', checked);
      release();
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      // The screen then reads its keys, under the same loading line, and lists them.
      await page.locator('main#main .loading').waitFor({ state: 'detached' });
      await checkScreen(page, 'lazy-screen-loaded', checked);
    } finally {
      await context.close();
    }
  });

  it('says so, with a reload, when a screen’s file cannot be fetched, and the reload brings the screen', async () => {
    const ws = await newWorkspace();
    const context = await signedInContext(browser, ws);
    try {
      const page = await context.newPage();
      const members = `**${fileOf('src/screens/members.tsx')}`;
      await page.route(members, (route) => route.abort());
      await page.goto('/members');
      const alert = page.locator('main#main').getByRole('alert');
      await alert.waitFor();
      expect(await alert.innerText()).toContain('Something failed in the application. Reload the page and try again.');
      await page.unroute(members);
      await alert.getByRole('button', { name: 'Try again' }).click();
      await page.getByRole('heading', { name: 'Members' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('serves every lazy file from its own origin, cached for a year, as a script, compressed', async () => {
    const lazy = Object.values(manifest)
      .map((chunk) => `/${chunk.file}`)
      .filter((file) => file.endsWith('.js'));
    expect(lazy.length).toBeGreaterThan(10);
    for (const file of lazy) {
      const reply = await fetch(`${baseUrl()}${file}`, { headers: { 'accept-encoding': 'br' } });
      expect({ file, status: reply.status }).toEqual({ file, status: 200 });
      expect({ file, caching: reply.headers.get('cache-control') }).toEqual({ file, caching: 'public, max-age=31536000, immutable' });
      expect({ file, type: reply.headers.get('content-type') }).toEqual({ file, type: 'text/javascript; charset=utf-8' });
      expect({ file, coding: reply.headers.get('content-encoding') }).toEqual({ file, coding: 'br' });
      await reply.arrayBuffer();
    }
    // The manifest itself is the size report's, never served.
    expect((await fetch(`${baseUrl()}/.vite/manifest.json`)).status).toBe(404);
  });

  afterAll(() => {
    expect(problems.filter((problem) => !problem.includes('Failed to fetch dynamically imported module'))).toEqual([]);
    expect(Object.entries(checked).filter(([, found]) => found.length > 0)).toEqual([]);
  });
});

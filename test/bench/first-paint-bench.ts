import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium } from 'playwright-core';
import { ROOT, startOwnCluster } from '../e2e/support/cluster';
import { intEnv, say } from './bench-support';

/**
 * `npm run bench:first-paint`: loads /sign-in in Debian's headless Chromium, each time in a fresh browser context
 * (nothing cached), under Chromium's own network throttling, and prints the median first contentful paint and the
 * time the sign-in form is on screen (the script fetched, run and drawn), with the bundle served compressed as
 * browsers ask and with `Accept-Encoding: identity`. BENCH_REPEATS loads per case (default 5).
 */
const REPEATS = intEnv('BENCH_REPEATS', 5);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

interface Network {
  name: string;
  /** Network.emulateNetworkConditions' parameters: latency in ms, throughputs in bytes per second. */
  latency: number;
  downloadThroughput: number;
  uploadThroughput: number;
}

const NETWORKS: Network[] = [
  // DevTools' "Fast 3G" preset: 1.6 Mbit/s down, 750 kbit/s up, 150 ms RTT, scaled as DevTools scales its presets
  // (throughput x 0.9, latency x 3.75) to stand for what a real 3G link delivers.
  { name: 'Fast 3G', latency: 150 * 3.75, downloadThroughput: ((1.6 * 1000 * 1000) / 8) * 0.9, uploadThroughput: ((750 * 1000) / 8) * 0.9 },
  { name: '10 Mbit/s', latency: 40, downloadThroughput: (10 * 1000 * 1000) / 8, uploadThroughput: (5 * 1000 * 1000) / 8 },
];

const CODINGS = [
  { name: 'br (as browsers ask)', acceptEncoding: null },
  { name: 'none (identity)', acceptEncoding: 'identity' },
] as const;

interface Load {
  firstPaint: number;
  formShown: number;
  transferred: number;
  scriptCoding: string;
}

async function load(browser: Browser, url: string, network: Network, acceptEncoding: string | null): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  try {
    const page = await context.newPage();
    // Runs in the page before its own script, as the browser's (not the page's) code, so the CSP does not apply.
    await page.addInitScript(() => {
      const scope = globalThis as any;
      new scope.MutationObserver((_: unknown, observer: any) => {
        if (scope.document.querySelector('input[type="password"]')) {
          scope.formShownAt = scope.performance.now();
          observer.disconnect();
        }
      }).observe(scope.document, { childList: true, subtree: true });
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: network.latency,
      downloadThroughput: network.downloadThroughput,
      uploadThroughput: network.uploadThroughput,
    });
    if (acceptEncoding) await cdp.send('Network.setExtraHTTPHeaders', { headers: { 'Accept-Encoding': acceptEncoding } });
    let transferred = 0;
    let scriptCoding = '';
    cdp.on('Network.loadingFinished', (event) => (transferred += event.encodedDataLength));
    cdp.on('Network.responseReceived', (event) => {
      if (/\/assets\/[^/]+\.js$/.test(event.response.url)) {
        const headers = Object.fromEntries(Object.entries(event.response.headers).map(([key, value]) => [key.toLowerCase(), value]));
        scriptCoding = String(headers['content-encoding'] ?? 'none');
      }
    });
    await page.goto(url, { waitUntil: 'commit', timeout: 120_000 });
    await page.waitForFunction(() => (globalThis as any).formShownAt !== undefined, undefined, { timeout: 120_000, polling: 100 });
    const timings = await page.evaluate(() => {
      const scope = globalThis as any;
      const paint = scope.performance.getEntriesByType('paint').find((entry: any) => entry.name === 'first-contentful-paint');
      return { firstPaint: paint ? paint.startTime : NaN, formShown: scope.formShownAt as number };
    });
    return { ...timings, transferred, scriptCoding };
  } finally {
    await context.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const ms = (value: number) => `${Math.round(value).toLocaleString('en-US')} ms`;
const kb = (bytes: number) => `${(bytes / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 })} kB`;

function bundleSizes(): void {
  const dir = join(ROOT, 'dist', 'apps', 'web', 'assets');
  const size = (name: string) => {
    try {
      return kb(statSync(join(dir, name)).size);
    } catch {
      return 'not built';
    }
  };
  say('the bundle as built (raw / gzip / brotli):');
  for (const name of readdirSync(dir).filter((file) => /\.(js|css)$/.test(file)))
    say(`  ${name}: ${size(name)} / ${size(`${name}.gz`)} / ${size(`${name}.br`)}`);
}

async function main(): Promise<void> {
  bundleSizes();
  const own = await startOwnCluster('first-paint-bench');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const url = `${own.cluster.baseUrl}/sign-in`;
    // One load first: the gateway and Chromium each do work once (module loading, JIT) that no later load repeats.
    await load(browser, url, NETWORKS[1]!, null);
    say(`\n/sign-in, median of ${REPEATS} loads each, empty cache; times from the start of navigation`);
    say(
      `${'network'.padEnd(11)}${'coding'.padEnd(22)}${'first paint'.padStart(13)}${'sign-in form'.padStart(14)}${'transferred'.padStart(13)}  script sent as`,
    );
    for (const network of NETWORKS) {
      for (const coding of CODINGS) {
        const loads: Load[] = [];
        for (let i = 0; i < REPEATS; i++) loads.push(await load(browser, url, network, coding.acceptEncoding));
        const codings = [...new Set(loads.map((one) => one.scriptCoding))].join(', ');
        say(
          `${network.name.padEnd(11)}${coding.name.padEnd(22)}${ms(median(loads.map((one) => one.firstPaint))).padStart(13)}${ms(median(loads.map((one) => one.formShown))).padStart(14)}${kb(median(loads.map((one) => one.transferred))).padStart(13)}  ${codings}`,
        );
      }
    }
    say(
      `\nFast 3G: ${NETWORKS[0]!.latency} ms latency, ${NETWORKS[0]!.downloadThroughput} B/s down, ${NETWORKS[0]!.uploadThroughput} B/s up (DevTools' preset)`,
    );
  } finally {
    await browser.close();
    await own.stop();
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});

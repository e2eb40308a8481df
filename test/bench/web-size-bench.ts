import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { say } from './bench-support';

/**
 * `npm run web:size`: what each route of the web application makes the browser download, from the build's manifest
 * (`dist/apps/web/.vite/manifest.json`, written by `build.manifest` in apps/web/vite.config.mts): the entry script,
 * the screen's files fetched by `import()`, and every file those import statically, each counted once. Sizes are the
 * files on disk: raw, and the gzip (level 9) and brotli (quality 11) copies the build wrote beside them, which is what
 * the gateway sends to a browser that takes that coding. Budgets: the sign-in route at most 200 kB of JavaScript
 * compressed (gzip, the larger of the two), and no file over 500 kB compressed; over either, the script says which and
 * exits 1.
 */

const SIGN_IN_BUDGET = 200_000;
const CHUNK_BUDGET = 500_000;

interface ManifestChunk {
  file: string;
  name?: string;
  src?: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}
type Manifest = Record<string, ManifestChunk>;

/**
 * Each route and the screen files it fetches, outermost first (the decision page, then its tab), named by their
 * source file under apps/web: the same `import()` calls as apps/web/src/app.tsx and screens/decision.tsx make.
 */
const ROUTES: Array<[route: string, screens: string[]]> = [
  ['/sign-in, /sign-up', ['src/screens/auth.tsx']],
  ['/invitations/accept', ['src/screens/invitations.tsx']],
  ['/workspaces', ['src/screens/workspaces.tsx']],
  ['/account', ['src/screens/account.tsx']],
  ['/decisions, /decisions/new', ['src/screens/decisions.tsx']],
  ['/decisions/{id}/overview', ['src/screens/decision.tsx', 'src/screens/overview.tsx']],
  ['/decisions/{id}/quality', ['src/screens/decision.tsx', 'src/screens/quality.tsx']],
  ['/decisions/{id}/editor (form)', ['src/screens/decision.tsx', 'src/screens/editor.tsx']],
  ['/decisions/{id}/editor (JSON)', ['src/screens/decision.tsx', 'src/screens/editor.tsx', 'src/editors/json-view.tsx']],
  ['/decisions/{id}/playground', ['src/screens/decision.tsx', 'src/screens/playground.tsx']],
  ['/decisions/{id}/deploy', ['src/screens/decision.tsx']],
  ['/decisions/{id}/executions', ['src/screens/decision.tsx', 'src/screens/execution-list.tsx']],
  ['/decisions/{id}/deliveries', ['src/screens/decision.tsx', 'src/screens/deliveries.tsx']],
  ['/decisions/{id}/secret-url', ['src/screens/decision.tsx', 'src/screens/secret-url.tsx']],
  ['/decisions/{id}/history', ['src/screens/decision.tsx', 'src/screens/history.tsx']],
  ['/decisions/{id}/replay', ['src/screens/decision.tsx', 'src/screens/replay.tsx']],
  ['/executions', ['src/screens/execution-list.tsx']],
  ['/executions/{id}', ['src/screens/executions.tsx']],
  ['/reviews', ['src/screens/reviews.tsx']],
  ['/deliveries, /deliveries/{id}, /signing-secret', ['src/screens/deliveries.tsx']],
  ['/keys', ['src/screens/keys.tsx']],
  ['/members', ['src/screens/members.tsx']],
  ['/secrets', ['src/screens/secrets.tsx']],
  ['/billing', ['src/screens/billing.tsx']],
  ['/settings', ['src/screens/settings.tsx']],
];

interface Sizes {
  raw: number;
  gzip: number;
  brotli: number;
}

function findRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'apps'))) return dir;
  throw new Error(`no repository above ${from}`);
}

/**
 * The manifest key of `source`'s chunk. A module that is both fetched by `import()` and imported statically by
 * another lazy screen (account.tsx, which the invitation page uses) becomes a shared chunk keyed by its hashed file
 * name, without `src`; it is then found among the importer's `import()` targets by its chunk name.
 */
function chunkKey(manifest: Manifest, source: string, importer: string): string {
  if (manifest[source]) return source;
  const name = source.replace(/^.*\//, '').replace(/\.[^.]+$/, '');
  const key = (manifest[importer]?.dynamicImports ?? []).find((candidate) => manifest[candidate]?.name === name);
  if (!key) throw new Error(`${source} is not fetched by import() from ${importer} in this build: the route table above is out of date`);
  return key;
}

/** The keys of `start` and of every chunk it imports statically, transitively. */
function closure(manifest: Manifest, start: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...start];
  while (queue.length > 0) {
    const key = queue.shift()!;
    if (seen.has(key)) continue;
    seen.add(key);
    queue.push(...(manifest[key]?.imports ?? []));
  }
  return seen;
}

function sizesOf(dir: string, file: string): Sizes {
  const size = (name: string, fallback: number) => (existsSync(join(dir, name)) ? statSync(join(dir, name)).size : fallback);
  const raw = size(file, 0);
  // The build writes no copy that would not be smaller; the gateway then sends the file itself.
  return { raw, gzip: size(`${file}.gz`, raw), brotli: size(`${file}.br`, raw) };
}

const sum = (all: Sizes[]): Sizes =>
  all.reduce((a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip, brotli: a.brotli + b.brotli }), { raw: 0, gzip: 0, brotli: 0 });
const kb = (bytes: number) => `${(bytes / 1000).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} kB`;
const row = (label: string, width: number, sizes: Sizes, extra = '') =>
  `${label.padEnd(width)}${kb(sizes.raw).padStart(12)}${kb(sizes.gzip).padStart(11)}${kb(sizes.brotli).padStart(11)}${extra}`;

function main(): void {
  const root = findRoot(__dirname);
  const dist = join(root, 'dist', 'apps', 'web');
  const manifestFile = join(dist, '.vite', 'manifest.json');
  if (!existsSync(manifestFile)) throw new Error(`${manifestFile} is missing: run npm run build first`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  const entry = Object.keys(manifest).find((key) => manifest[key]!.isEntry);
  if (!entry) throw new Error('the manifest names no entry');
  const sizes = new Map(Object.values(manifest).map((chunk) => [chunk.file, sizesOf(dist, chunk.file)]));

  const covered = new Set<string>();
  const width = Math.max(...ROUTES.map(([route]) => route.length)) + 2;
  say(`JavaScript per route: the entry, the screen's files and what they import (${Object.keys(manifest).length} chunks in the build)`);
  say(`${'route'.padEnd(width)}${'raw'.padStart(12)}${'gzip'.padStart(11)}${'brotli'.padStart(11)}  files`);
  const problems: string[] = [];
  for (const [route, screens] of ROUTES) {
    let importer = entry;
    const keys = [entry];
    for (const screen of screens) {
      const key = chunkKey(manifest, screen, importer);
      keys.push(key);
      covered.add(key);
      importer = key;
    }
    const files = [...closure(manifest, keys)].map((key) => manifest[key]!.file);
    const total = sum(files.map((file) => sizes.get(file)!));
    say(row(route, width, total, `  ${files.length}`));
    if (route.startsWith('/sign-in') && total.gzip > SIGN_IN_BUDGET)
      problems.push(`the sign-in route needs ${kb(total.gzip)} gzip, over ${kb(SIGN_IN_BUDGET)}`);
  }
  const lazy = Object.keys(manifest).filter((key) => manifest[key]!.isDynamicEntry && !covered.has(key));
  if (lazy.length > 0) problems.push(`files fetched by import() that no route above names: ${lazy.join(', ')}`);

  say('\nThe largest files');
  const largest = [...sizes.entries()].sort(([, a], [, b]) => b.gzip - a.gzip);
  const fileWidth = Math.max(...largest.map(([file]) => file.length)) + 2;
  for (const [file, size] of largest.slice(0, 8)) say(row(file, fileWidth, size));
  for (const [file, size] of largest) if (size.gzip > CHUNK_BUDGET) problems.push(`${file} is ${kb(size.gzip)} gzip, over ${kb(CHUNK_BUDGET)}`);
  const all = sum([...sizes.values()]);
  say(row('every file', fileWidth, all));
  const css = [...new Set(Object.values(manifest).flatMap((chunk) => chunk.css ?? []))];
  for (const file of css) say(row(file, fileWidth, sizesOf(dist, file), '  (stylesheet, every route)'));

  if (problems.length > 0) {
    for (const problem of problems) say(`over budget: ${problem}`);
    process.exitCode = 1;
  } else say(`\nWithin budget: the sign-in route at most ${kb(SIGN_IN_BUDGET)} gzip, no file over ${kb(CHUNK_BUDGET)} gzip.`);
}

main();

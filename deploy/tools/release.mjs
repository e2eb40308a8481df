#!/usr/bin/env node
// Cuts a release in one command:
//
//   npm run release -- 0.2.0
//
// 1. bumps `version` in package.json (and package-lock.json) and `version`/`appVersion` in the chart;
// 2. writes the release's section at the top of CHANGELOG.md from the commits since the last release,
//    sorted into Keep a Changelog's sections by what each subject says it did;
// 3. commits that as "Release vX.Y.Z" and makes the annotated tag vX.Y.Z on it;
// 4. records the release commit in deploy/releases.json in a commit of its own. A tag does not travel with
//    every clone (CI clones, shallow fetches), so that file is what the upgrade check reads.
//
// A release whose versions are already in package.json and the chart (the first one) commits only the
// changelog. The working tree must be clean and the version greater than the last recorded one.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const paths = {
  pkg: join(root, 'package.json'),
  lock: join(root, 'package-lock.json'),
  chart: join(root, 'helm', 'decision-service', 'Chart.yaml'),
  changelog: join(root, 'CHANGELOG.md'),
  releases: join(root, 'deploy', 'releases.json'),
};

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
const fail = (message) => {
  console.error(`release: ${message}`);
  process.exit(1);
};

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const compare = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
};

const version = (process.argv[2] ?? '').replace(/^v/, '');
if (!SEMVER.test(version)) fail('usage: npm run release -- X.Y.Z (a version such as 0.2.0)');
if (git('status', '--porcelain', '--untracked-files=no') !== '') fail('commit or stash your changes first');

const releases = existsSync(paths.releases) ? JSON.parse(readFileSync(paths.releases, 'utf8')) : { releases: [] };
const last = releases.releases.at(-1);
if (last && compare(version, last.version) <= 0) fail(`v${version} is not after the last release, v${last.version}`);
if (git('tag', '--list', `v${version}`) !== '') fail(`the tag v${version} exists already`);

/** Keep a Changelog's sections, chosen from what a subject says it did; the first that matches wins. */
const SECTIONS = [
  ['Security', /\b(security|secret|redact|leak|attacker|privilege|csrf|xss|injection)/i],
  ['Removed', /^(remove|drop|delete)s?\b|\b(is|are) (removed|gone)\b/i],
  ['Fixed', /\b(fix|fixes|fixed|mend|mends|no longer|bug|crash|500|regression|flaky|instead of)\b/i],
  ['Deprecated', /\bdeprecat/i],
  ['Added', /^(add|adds|new|introduce)\b|\b(adds?|gets?|gains?|learns?)\b/i],
  ['Changed', /./],
];
const ORDER = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];

const range = last ? `${last.commit}..HEAD` : 'HEAD';
const subjects = git('log', '--reverse', '--no-merges', '--format=%s', range)
  .split('\n')
  .filter((s) => s !== '' && !/^Release v\d/.test(s) && !/^Record the release commit/.test(s));
if (subjects.length === 0) fail(`no commits since v${last.version}`);

const bySection = new Map(ORDER.map((s) => [s, []]));
for (const subject of subjects) bySection.get(SECTIONS.find(([, re]) => re.test(subject))[0]).push(subject);

const today = new Date().toISOString().slice(0, 10);
const section = [
  `## [${version}] - ${today}`,
  '',
  ...ORDER.filter((s) => bySection.get(s).length > 0).flatMap((s) => [
    `### ${s}`,
    '',
    ...bySection.get(s).map((subject) => `- ${subject}`),
    '',
  ]),
].join('\n');

const HEADER = [
  '# Changelog',
  '',
  'Every release of the decision service, newest first. The format follows Keep a Changelog',
  '(https://keepachangelog.com/en/1.1.0/) and versions follow Semantic Versioning. Each release is cut with',
  '`npm run release -- X.Y.Z`; its commit is recorded in `deploy/releases.json`, and `docs/upgrading.md` says',
  'which releases upgrade to which.',
  '',
].join('\n');
const previous = existsSync(paths.changelog) ? readFileSync(paths.changelog, 'utf8') : HEADER;
const firstRelease = previous.indexOf('\n## [');
const changelog =
  firstRelease < 0
    ? `${previous.trimEnd()}\n\n${section}`
    : `${previous.slice(0, firstRelease + 1)}${section}\n${previous.slice(firstRelease + 1)}`;
writeFileSync(paths.changelog, changelog.trimEnd() + '\n');

const pkg = JSON.parse(readFileSync(paths.pkg, 'utf8'));
pkg.version = version;
writeFileSync(paths.pkg, JSON.stringify(pkg, null, 2) + '\n');
if (existsSync(paths.lock)) {
  const lock = JSON.parse(readFileSync(paths.lock, 'utf8'));
  lock.version = version;
  if (lock.packages?.['']) lock.packages[''].version = version;
  writeFileSync(paths.lock, JSON.stringify(lock, null, 2) + '\n');
}
const chart = readFileSync(paths.chart, 'utf8')
  .replace(/^version: .*$/m, `version: ${version}`)
  .replace(/^appVersion: .*$/m, `appVersion: "${version}"`);
writeFileSync(paths.chart, chart);

git('add', '--', paths.changelog, paths.pkg, paths.chart, ...(existsSync(paths.lock) ? [paths.lock] : []));
git('commit', '--quiet', '-m', `Release v${version}`);
const commit = git('rev-parse', 'HEAD');
git('tag', '--annotate', `v${version}`, '--message', `Release v${version}`, commit);

releases.releases.push({ version, commit, date: today });
writeFileSync(
  paths.releases,
  JSON.stringify(
    {
      $comment:
        'Every release and the commit it was cut at, oldest first: written by `npm run release`, read by the upgrade check.',
      releases: releases.releases,
    },
    null,
    2,
  ) + '\n',
);
git('add', '--', paths.releases);
git('commit', '--quiet', '-m', `Record the release commit of v${version}`);

console.log(`release: v${version} at ${commit.slice(0, 12)} (${subjects.length} commits in CHANGELOG.md)`);
console.log(`release: push it with: git push --follow-tags`);

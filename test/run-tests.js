// Runs every jest project and ends with one plain line, `N passed, N failed`, that any CI can read.
const { spawnSync } = require('node:child_process');
const { mkdirSync, readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');

const resultsFile = join(__dirname, '..', '.data', 'jest-results.json');
mkdirSync(join(__dirname, '..', '.data'), { recursive: true });
// A failed start must not be reported with the figures of an earlier run.
rmSync(resultsFile, { force: true });
const args = ['jest', ...process.argv.slice(2), '--json', `--outputFile=${resultsFile}`];
const run = spawnSync('npx', args, { stdio: 'inherit' });
let summary = 'tests: 0 passed, 0 failed';
try {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  summary = `tests: ${results.numPassedTests} passed, ${results.numFailedTests + results.numRuntimeErrorTestSuites} failed`;
  if (results.numPendingTests > 0) summary += `, ${results.numPendingTests} skipped`;
} catch {
  // jest did not get far enough to write results; the exit code below says so
}
process.stdout.write(`${summary}\n`);
process.exit(run.status ?? 1);

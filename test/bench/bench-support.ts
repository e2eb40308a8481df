import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon, { Result } from 'autocannon';

/** What `npm run bench` and `npm run bench:anchor` share: settings, the body, the load and reading its result. */

export function intEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

export const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 50);
export const DURATION_S = intEnv('BENCH_DURATION_S', 10);
/**
 * Long enough for the services' hot code to reach V8's optimising tier: with 3 s the first measured phase ran
 * 10 to 25 % below the same load measured a minute later.
 */
export const WARMUP_S = intEnv('BENCH_WARMUP_S', 10);
export const SAMPLES = intEnv('BENCH_SAMPLES', 300);

export function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** A 1 KB run body, like the measurements in PERFORMANCE.md. */
export function runBody(): string {
  const base = { state: { message: '', amount: 120 } };
  const pad = 1024 - JSON.stringify(base).length;
  return JSON.stringify({ state: { message: 'My order arrived broken and nobody answers my e-mails. '.repeat(20).slice(0, pad), amount: 120 } });
}

/** A node process whose output goes to `<logDir>/<name>.log`, the first 100 kB of it also kept for checks. */
export function spawnLogged(logDir: string, name: string, args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; output: () => string } {
  const log = createWriteStream(join(logDir, `${name}.log`));
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      if (seen.length < 100_000) seen += chunk.toString();
    });
    stream.pipe(log);
  }
  return { child, output: () => seen };
}

export function stopChild(child: ChildProcess | undefined): Promise<void> {
  return new Promise((done) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return done();
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill('SIGTERM');
  });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  // The rank is clamped to 0..length-1 and the array is not empty, so the element exists.
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * One autocannon run; connection i sends the headers `perConnection[i % n]` (for example the API key of
 * one of several workspaces), and `onBody` sees every response body (every phase reads them, so that the
 * load generator does the same work whatever it measures).
 */
export function load(
  url: string,
  perConnection: Array<Record<string, string>>,
  body: string,
  seconds: number,
  onBody: (body: string) => void = () => undefined,
  connections = CONNECTIONS,
): Promise<Result> {
  let next = 0;
  return autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...perConnection[0] },
    body,
    connections,
    duration: seconds,
    timeout: 30,
    setupClient: (client) => client.setHeaders({ 'content-type': 'application/json', ...perConnection[next++ % perConnection.length] }),
    verifyBody: (text) => {
      onBody(text);
      return true;
    },
  });
}

export type Summary = ReturnType<typeof summary>;

export function summary(result: Result) {
  const stats: Record<string, { count: number }> = result.statusCodeStats;
  const total = Object.values(stats).reduce((sum, { count }) => sum + Number(count), 0);
  return {
    requests_per_second: Math.round(total / result.duration),
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    total,
    non_2xx: result.non2xx,
    errors: result.errors,
    statuses: Object.fromEntries(Object.entries(stats).map(([status, { count }]) => [status, Number(count)])),
  };
}

/**
 * The same load split between several addresses (replicas of the gateway), the connections shared out, at the
 * same time; one summary: requests added up, each percentile the worst of the parts.
 */
export async function loadSplit(
  urls: string[],
  perConnection: Array<Record<string, string>>,
  body: string,
  seconds: number,
  onBody: (body: string) => void = () => undefined,
): Promise<Summary> {
  const parts = (await Promise.all(urls.map((url) => load(url, perConnection, body, seconds, onBody, Math.max(1, Math.round(CONNECTIONS / urls.length)))))).map(
    summary,
  );
  const worst = (pick: (part: Summary) => number) => Math.max(...parts.map(pick));
  return {
    requests_per_second: parts.reduce((sum, part) => sum + part.requests_per_second, 0),
    latency_ms: {
      p50: worst((part) => part.latency_ms.p50),
      p90: worst((part) => part.latency_ms.p90),
      p99: worst((part) => part.latency_ms.p99),
      max: worst((part) => part.latency_ms.max),
    },
    total: parts.reduce((sum, part) => sum + part.total, 0),
    non_2xx: parts.reduce((sum, part) => sum + part.non_2xx, 0),
    errors: parts.reduce((sum, part) => sum + part.errors, 0),
    statuses: parts.reduce<Record<string, number>>((all, part) => {
      for (const [status, count] of Object.entries(part.statuses)) all[status] = (all[status] ?? 0) + count;
      return all;
    }, {}),
  };
}

/** What a process has used of the CPU so far (user + system), in ms, from /proc; 0 when it is gone. */
export function procCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    // The command name in parentheses may hold spaces; the fields after it are fixed.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const ticksPerSecond = 100;
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return 0;
  }
}

/**
 * Labelled executions of the triage decision drawn in SQL, for the benches that read outcomes (quality, neighbours):
 * `p` is the engine's top probability for intent, `l` urgency's, `y` p(yes) for fraud, drawn per execution, and the
 * truth drawn to be right a little less often than the engine says. `LABELLED_DRAWS(count)` is the FROM clause
 * giving `i` and the draws; the two expressions use them.
 */
export const LABELLED_DISTRIBUTIONS = `jsonb_build_object('model', jsonb_build_object(
                'intent', jsonb_build_object('refund', p, 'exchange', 1 - p, 'other', 0),
                'urgency', jsonb_build_object('calm', (1 - l) / 2, 'annoyed', l, 'furious', (1 - l) / 2),
                'fraud', jsonb_build_object('yes', y, 'no', 1 - y)))`;
export const LABELLED_ANSWERS = `jsonb_build_object('intent', CASE WHEN r1 < p * 0.85 THEN 'refund' ELSE 'exchange' END,
                                 'urgency', CASE WHEN r2 < l * 0.85 THEN 'annoyed' ELSE 'calm' END,
                                 'fraud', r3 < y * 0.85)`;
export function LABELLED_DRAWS(count: string): string {
  return `(SELECT i, 0.5 + random() * 0.5 AS p, 0.34 + random() * 0.66 AS l, random() AS y, random() AS r1, random() AS r2, random() AS r3
             FROM generate_series(1, ${count}) AS i) AS draws`;
}

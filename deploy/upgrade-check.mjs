#!/usr/bin/env node
// A zero-downtime upgrade from the latest release before HEAD to HEAD under load, and the rollback after it:
//
//   npm run upgrade:check          (after npm run build: HEAD runs from dist/)
//
// 1. The release: the newest one in deploy/releases.json whose commit is an ancestor of HEAD (not HEAD itself),
//    exported with `git archive` into .data/upgrade-check/<commit> and built there once (node_modules is this
//    checkout's when package-lock.json is the same, else `npm ci`).
// 2. The cluster at the release on a fresh database, a private nats-server, the machine's Redis and the engine
//    simulator: its migrations, then every service twice as processes (ports of their own), and a balancer in
//    this script in front of the two gateways that sends a request only to a gateway whose /readyz answered 200 at
//    its last poll (every POLL_MS, as a Kubernetes Service follows readiness) and that is not being terminated; it
//    never retries, so a refused or reset connection is a failed request.
// 3. Steady load through the balancer: runs with idempotency keys (each key sent twice: the second answer must be
//    the first's), a webhook per run to a receiver here, an outcome per run, a read, and a replay of past runs.
// 4. The upgrade as a Helm rolling update makes it: the new version's migrations first while the old services
//    serve, then service by service each replica in turn: start the new one, wait until ready, stop the old one
//    and wait until it has exited (status 0). A gateway whose version knows SHUTDOWN_DELAY_MS just gets SIGTERM
//    and must leave the balancer by readiness alone; an older one is stopped as Kubernetes stops a pod (out of
//    the endpoints, the preStop sleep, SIGTERM).
// 5. The same from HEAD back to the release (a rollback: no down-migrations, as `helm rollback` runs none).
// Passes when no request failed (every answer 200 and what it would have been without the upgrade), every run
// billed once (the usage the ledger reports equals the runs), every webhook received exactly once by id, the
// replays finished, and every stopped process exited 0. Prints each phase's figures.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync, createWriteStream } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import {
  call,
  CheckFailed,
  dropDatabase,
  expect,
  freePort,
  freshDatabase,
  query,
  REDIS_URL,
  ROOT,
  seconds,
  seedWorkspace,
  SERVICES,
  sleep,
  startNats,
  startReceiver,
  startSimulator,
  stepper,
  triageSchema,
  waitFor,
} from './lib/check-support.mjs';

const POLL_MS = 250;
/** HEAD's services keep taking work this long after SIGTERM while their readiness answers 503 (several polls). */
const SHUTDOWN_DELAY_MS = 1_500;
/** The chart's preStop sleep (5 s), shortened: four polls of the balancer. */
const PRESTOP_MS = 1_000;
const WORKERS = Number(process.env.UPGRADE_CHECK_WORKERS ?? 4);
const ENGINE_DELAY_MS = 30;
const HISTORY = 60;
/** The webhook backlog counts as stuck after this long without one arriving. */
const WEBHOOK_QUIET_MS = 20_000;
const step = stepper('upgrade-check');
const started = Date.now();
const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const cleanups = [];
const logDir = join(ROOT, '.data', 'upgrade-check', 'logs');

// 1 ------------------------------------------------------------------------------------------------------------
function latestRelease() {
  const { releases } = JSON.parse(readFileSync(join(ROOT, 'deploy', 'releases.json'), 'utf8'));
  const head = git('rev-parse', 'HEAD');
  const before = releases.filter((release) => {
    if (release.commit === head) return false;
    try {
      execFileSync('git', ['merge-base', '--is-ancestor', release.commit, 'HEAD'], { cwd: ROOT, stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  if (before.length === 0) {
    const missing = releases.filter((release) => release.commit !== head && !hasCommit(release.commit));
    throw new CheckFailed(
      missing.length > 0
        ? `this clone lacks the commit of ${missing.map((release) => `v${release.version} (${release.commit.slice(0, 7)})`).join(', ')}: fetch the history (git fetch --unshallow)`
        : 'deploy/releases.json names no release before HEAD',
    );
  }
  return before[before.length - 1];
}

function hasCommit(commit) {
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function run(command, args, cwd, what) {
  try {
    execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    throw new CheckFailed(`${what} failed:\n${String(error.stdout ?? '').slice(-3000)}${String(error.stderr ?? '').slice(-3000)}`);
  }
}

function buildRelease(release) {
  const dir = join(ROOT, '.data', 'upgrade-check', release.commit);
  const built = join(dir, '.built');
  if (existsSync(built)) return { dir, note: 'cached' };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git archive --format=tar "${release.commit}" | tar -x -C "${dir}"`], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const sameLock = readFileSync(join(dir, 'package-lock.json'), 'utf8') === readFileSync(join(ROOT, 'package-lock.json'), 'utf8');
  if (sameLock && existsSync(join(ROOT, 'node_modules'))) symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'));
  else run('npm', ['ci', '--no-audit', '--no-fund'], dir, `npm ci at ${release.version}`);
  run('npm', ['run', 'build', '--silent'], dir, `the build of ${release.version}`);
  writeFileSync(built, `${release.version} ${release.commit}\n`);
  return { dir, note: sameLock ? 'node_modules shared (same package-lock.json)' : 'npm ci' };
}

/** Whether a build's services keep taking work for SHUTDOWN_DELAY_MS after SIGTERM while readiness answers 503. */
function knowsShutdownDelay(dir) {
  return readFileSync(join(dir, 'dist', 'libs', 'platform', 'src', 'config.js'), 'utf8').includes('SHUTDOWN_DELAY_MS');
}

// 2 ------------------------------------------------------------------------------------------------------------
class Replica {
  constructor(service, version, dir, env) {
    Object.assign(this, { service, version, dir, env, child: null, opsPort: 0, port: 0, exitCode: undefined, terminating: false });
  }

  async start() {
    this.opsPort = await freePort();
    this.port = this.service === 'gateway' ? await freePort() : 0;
    const entry = join(this.dir, 'dist', 'apps', this.service, 'src', 'main.js');
    const log = createWriteStream(join(logDir, `${this.service}-${this.version}-${this.opsPort}.log`));
    this.child = spawn(process.execPath, [entry], {
      env: { ...process.env, ...this.env, OPS_PORT: String(this.opsPort), ...(this.port ? { PORT: String(this.port) } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout.pipe(log);
    this.child.stderr.pipe(log);
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve((this.exitCode = code ?? signal))));
    const t = Date.now();
    await waitFor(
      async () => {
        if (this.exitCode !== undefined) throw new CheckFailed(`${this.service} ${this.version} exited with ${this.exitCode} before it was ready`);
        return this.ready();
      },
      120_000,
      `${this.service} ${this.version} ready`,
    ).catch((error) => {
      if (this.exitCode !== undefined) throw new CheckFailed(`${this.service} ${this.version} exited with ${this.exitCode} before it was ready`);
      throw error;
    });
    this.readyMs = Date.now() - t;
    return this;
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  async ready() {
    if (this.exitCode !== undefined) return false;
    const reply = await fetch(`http://127.0.0.1:${this.opsPort}/readyz`, { signal: AbortSignal.timeout(1_000) }).catch(() => null);
    return reply?.status === 200;
  }

  async stop() {
    if (this.exitCode === undefined) this.child.kill('SIGTERM');
    return this.exited;
  }
}

/**
 * Routes each request to the next gateway that, at the balancer's last poll, was not being terminated and whose
 * readiness answered 200: what a Kubernetes Service's endpoints hold. Never retries: a refused or reset connection
 * is a failed request.
 */
async function startBalancer() {
  const backends = new Set();
  const ready = new Set();
  const counts = { noBackend: 0 };
  let next = 0;
  let polling = true;
  void (async () => {
    while (polling) {
      await Promise.all([...backends].map(async (replica) => (!replica.terminating && (await replica.ready()) ? ready.add(replica) : ready.delete(replica))));
      for (const replica of ready) if (!backends.has(replica)) ready.delete(replica);
      await sleep(POLL_MS);
    }
  })();
  const pick = () => {
    const live = [...ready];
    return live.length === 0 ? null : live[next++ % live.length];
  };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = (replica) => {
        if (!replica) {
          counts.noBackend++;
          res.writeHead(503, { 'content-type': 'text/plain' }).end('no ready gateway');
          return;
        }
        const upstream = httpRequest(
          { host: '127.0.0.1', port: replica.port, method: req.method, path: req.url, headers: { ...req.headers, connection: 'close' }, agent: false },
          (answer) => {
            res.writeHead(answer.statusCode, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on('error', (error) => {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`balancer: ${error.code ?? error.message}`);
          else res.destroy();
        });
        upstream.end(body);
      };
      forward(pick());
    });
  });
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    add: (replica) => backends.add(replica),
    remove: (replica) => (backends.delete(replica), ready.delete(replica)),
    waitReady: (replica) => waitFor(async () => ready.has(replica), 10_000, 'the balancer to route to the new gateway', 50),
    close: async () => {
      polling = false;
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// 3 ------------------------------------------------------------------------------------------------------------
/** Runs, repeats, outcomes and reads on WORKERS loops until stopped; every answer is checked as it arrives. */
function startLoad(base, ws) {
  const stats = { requests: 0, runs: 0, repeats: 0, outcomes: 0, failures: [], executions: new Map() };
  let running = true;
  const fail = (what, reply) => stats.failures.push(`${what}: ${reply.status} ${reply.text.slice(0, 200)}`);
  const worker = async (w) => {
    for (let i = 0; running; i++) {
      const key = randomUUID();
      const state = { message: `load ${w}-${i} ${key}` };
      const first = await call(base, 'POST', `/v1/decisions/${ws.slug}`, { token: ws.apiKey, body: { state }, headers: { 'idempotency-key': key } });
      stats.requests++;
      if (first.status !== 200 || !first.body?.execution_id) {
        fail('run', first);
        continue;
      }
      stats.runs++;
      const id = first.body.execution_id;
      stats.executions.set(id, first.body.destinations?.[0]?.delivery_id ?? null);
      const again = await call(base, 'POST', `/v1/decisions/${ws.slug}`, { token: ws.apiKey, body: { state }, headers: { 'idempotency-key': key } });
      stats.requests++;
      if (again.status !== 200 || again.text !== first.text) fail('repeated run (same idempotency key)', again);
      else stats.repeats++;
      const outcome = await call(base, 'POST', `/v1/executions/${id}/outcome`, {
        token: ws.apiKey,
        body: { answers: { intent: 'refund' }, action: 'continue' },
      });
      stats.requests++;
      if (outcome.status !== 200 || outcome.body?.execution_id !== id) fail('outcome', outcome);
      else stats.outcomes++;
      const read = await call(base, 'GET', '/v1/executions?limit=5', { token: ws.apiKey });
      stats.requests++;
      if (read.status !== 200 || !Array.isArray(read.body?.data) || read.body.data.length === 0) fail('executions read', read);
    }
  };
  const done = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  return {
    stats,
    stop: async () => {
      running = false;
      await done;
      return stats;
    },
  };
}

async function startReplay(base, ws) {
  const path = `/app/v1/workspaces/${ws.workspaceId}/decisions/${ws.decisionId}/replays`;
  const reply = await call(base, 'POST', path, { token: ws.session, body: { version: null, last: HISTORY } });
  if (reply.status !== 201) throw new CheckFailed(`starting a replay answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  return `${path}/${reply.body.id}`;
}

async function replayFinished(base, ws, path) {
  let last = null;
  await waitFor(
    async () => {
      last = await call(base, 'GET', path, { token: ws.session });
      return last.status === 200 && last.body.status !== 'running';
    },
    120_000,
    'the replay to finish',
    500,
  );
  expect(last.body.status === 'completed' && last.body.progress.failed === 0, `the replay ended ${last.body.status}: ${JSON.stringify(last.body.progress)}`);
  return last.body.progress;
}

// 4 ------------------------------------------------------------------------------------------------------------
async function migrate(dir, env, version) {
  for (const service of SERVICES) {
    await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(dir, 'dist', 'apps', service, 'src', 'main.js'), 'migrate'], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new CheckFailed(`the migrations of ${service} ${version} failed (${code}): ${stderr.slice(-1000)}`)),
      );
    });
  }
}

/**
 * Replaces every replica of every service with one of `to`, one at a time, as a rolling update with maxSurge 1 and
 * maxUnavailable 0 does. A gateway of a version whose readiness turns before its listener closes (SHUTDOWN_DELAY_MS)
 * just gets SIGTERM: the balancer must see it leave by readiness alone. An older one is stopped as Kubernetes stops a
 * pod: taken out of the endpoints, then the chart's preStop sleep (shortened here), then SIGTERM.
 */
async function rollingUpdate(cluster, balancer, from, to) {
  const stops = [];
  for (const service of SERVICES) {
    for (let i = 0; i < cluster[service].length; i++) {
      const old = cluster[service][i];
      const fresh = await new Replica(service, to.version, to.dir, to.env(service)).start();
      if (service === 'gateway') {
        balancer.add(fresh);
        await balancer.waitReady(fresh);
      }
      cluster[service][i] = fresh;
      if (service === 'gateway' && !from.leavesByReadiness) {
        old.terminating = true;
        await sleep(PRESTOP_MS);
      }
      const code = await old.stop();
      if (service === 'gateway') balancer.remove(old);
      stops.push(`${service} ${old.version}: ${code}`);
      expect(code === 0, `${service} ${old.version} exited with ${code} on SIGTERM (see ${logDir})`);
    }
  }
  return stops;
}

// ------------------------------------------------------------------------------------------------------------
async function main() {
  const release = latestRelease();
  const head = { version: `HEAD ${git('rev-parse', '--short', 'HEAD')}`, dir: ROOT };
  expect(existsSync(join(ROOT, 'dist', 'apps', 'gateway', 'src', 'main.js')), 'dist/ is missing: run npm run build first');
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  const old = { version: `v${release.version}`, dir: '' };
  await step(`build v${release.version} (${release.commit.slice(0, 7)})`, async () => {
    const built = buildRelease(release);
    old.dir = built.dir;
    return built.note;
  });

  const [databaseUrl, nats, simulator, receiver] = await Promise.all([freshDatabase('ds_upgrade_check'), startNats(), startSimulator(), startReceiver()]);
  cleanups.push(
    () => dropDatabase(databaseUrl),
    () => nats.stop(),
    () => simulator.close(),
    () => receiver.close(),
  );
  const adminToken = `upgrade-check-${randomBytes(12).toString('hex')}`;
  const key = () => `check:${randomBytes(32).toString('base64')}`;
  const common = {
    DATABASE_URL: databaseUrl,
    NATS_URL: nats.url,
    REDIS_URL,
    RATE_LIMIT_STORE: 'redis',
    RATE_LIMIT_KEY_PREFIX: `upgrade-check-${randomBytes(4).toString('hex')}`,
    ADMIN_TOKEN: adminToken,
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: 'warn',
    OPS_HOST: '127.0.0.1',
    DATABASE_POOL_SIZE: '4',
    PASSWORD_SCRYPT_N: '16384',
    ENGINE_DEFAULT: 'llm',
    ENGINE_LLM_PROVIDER: 'openai',
    ENGINE_LLM_BASE_URL: `${simulator.url}/v1`,
    ENGINE_LLM_API_KEY: 'sim-key',
    ENGINE_LLM_MODEL: 'sim-standard',
    ENGINE_CREDENTIALS_KEY: key(),
    DELIVERY_SECRETS_KEY: key(),
    RUNNER_SECRETS_KEY: key(),
    DELIVERY_ALLOW_PRIVATE_TARGETS: 'true',
    // The load makes more than a workspace's 600 deliveries a minute; the window would hold them back for minutes,
    // and what is checked is that each arrives once, not the window (it counts 600 a second here).
    DELIVERY_WINDOW_MS: '1000',
  };
  for (const version of [old, head]) {
    version.leavesByReadiness = knowsShutdownDelay(version.dir);
    version.env = () => (version.leavesByReadiness ? { ...common, SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS) } : common);
  }

  const cluster = {};
  const balancer = await startBalancer();
  cleanups.push(async () => {
    await balancer.close();
    await Promise.all(
      Object.values(cluster)
        .flat()
        .map((replica) => replica.stop()),
    );
  });
  await step(`cluster at ${old.version}: migrations, every service twice, a balancer in front of the gateways`, async () => {
    await migrate(old.dir, common, old.version);
    for (const service of SERVICES) {
      cluster[service] = await Promise.all([0, 1].map(() => new Replica(service, old.version, old.dir, old.env(service)).start()));
    }
    for (const gateway of cluster.gateway) {
      balancer.add(gateway);
      await balancer.waitReady(gateway);
    }
    return SERVICES.map((service) => `${service} ${seconds(Math.max(...cluster[service].map((replica) => replica.readyMs)))}`).join(', ');
  });

  const base = balancer.url;
  await step('a workspace, a decision with a webhook, past runs and a draft to replay', async () => {
    const seeded = await seedWorkspace({ base, adminToken, databaseUrl, webhookUrl: receiver.url });
    const delay = await call(simulator.url, 'POST', '/_sim/scripts', { body: { match: seeded.marker, steps: [{ delayMs: ENGINE_DELAY_MS }], repeat: true } });
    expect(delay.status === 201, `scripting the simulator answered ${delay.status}`);
    for (let i = 0; i < HISTORY; i++) {
      const reply = await call(base, 'POST', `/v1/decisions/${seeded.slug}`, { token: seeded.apiKey, body: { state: { message: `history ${i}` } } });
      expect(reply.status === 200, `a past run answered ${reply.status}: ${reply.text.slice(0, 200)}`);
      history.set(reply.body.execution_id, reply.body.destinations?.[0]?.delivery_id ?? null);
    }
    const draft = triageSchema(seeded.marker, [{ key: 'hook', type: 'webhook', url: receiver.url }]);
    draft.policies = [{ when: { on: 'answer', question: 'fraud', op: 'gte', value: 0.5 }, action: 'block' }];
    const saved = await call(base, 'PUT', `/app/v1/workspaces/${seeded.workspaceId}/decisions/${seeded.decisionId}/draft`, {
      token: seeded.session,
      body: { schema: draft, revision: 1 },
    });
    expect(saved.status === 200, `saving the draft answered ${saved.status}: ${saved.text.slice(0, 200)}`);
    seededWorkspace = seeded;
    return `${HISTORY} runs`;
  });
  const ws = seededWorkspace;

  const phases = [];
  const all = new Map(history);
  for (const [from, to, name] of [
    [old, head, 'upgrade'],
    [head, old, 'rollback'],
  ]) {
    await step(`${name} ${from.version} → ${to.version} under load`, async () => {
      const t = Date.now();
      const load = startLoad(base, ws);
      await sleep(2_000);
      const replay = await startReplay(base, ws);
      const migrationStarted = Date.now();
      const requestsBefore = load.stats.requests;
      await migrate(to.dir, common, to.version);
      await sleep(1_000);
      const duringMigrations = { requests: load.stats.requests - requestsBefore, ms: Date.now() - migrationStarted };
      const stops = await rollingUpdate(cluster, balancer, from, to);
      await sleep(2_000);
      const stats = await load.stop();
      const progress = await replayFinished(base, ws, replay);
      for (const [id, delivery] of stats.executions) all.set(id, delivery);
      const figures = {
        name,
        from: from.version,
        to: to.version,
        requests: stats.requests,
        runs: stats.runs,
        failures: stats.failures.length,
        gatewaysLeft: from.leavesByReadiness ? 'by readiness alone' : 'out of the endpoints, preStop, then SIGTERM',
        noBackend: balancer.counts.noBackend,
        duringMigrations,
        replay: progress,
        ms: Date.now() - t,
        stops,
      };
      phases.push(figures);
      expect(
        stats.failures.length === 0,
        `${stats.failures.length} of ${stats.requests} requests failed during the ${name}; the first: ${stats.failures.slice(0, 5).join(' | ')} (logs in ${logDir})`,
      );
      return `${stats.requests} requests (${stats.runs} runs, each sent twice with its key, ${stats.outcomes} outcomes), 0 failed, ${duringMigrations.requests} while the migrations ran, replay of ${progress.total} completed; ${from.version} gateways left ${figures.gatewaysLeft}`;
    });
  }

  await step('every run billed once, every webhook delivered once', async () => {
    const runs = all.size;
    const counted = async () =>
      Number(
        (await query(databaseUrl, `SELECT count(*)::int AS n FROM decision_runner.executions WHERE workspace_id = $1 AND source = 'api'`, [ws.workspaceId]))[0]
          .n,
      );
    const executions = await counted();
    expect(executions === runs, `${executions} runs recorded, ${runs} answered`);
    let usage = null;
    await waitFor(
      async () => {
        usage = (await call(base, 'GET', '/v1/me', { token: ws.apiKey })).body?.usage;
        return usage?.used === runs && usage?.reserved === 0;
      },
      // The last runs reach the usage the ledger reports 20 to 30 s after the load stops on the development machine.
      120_000,
      'the ledger to settle every run',
      500,
    ).catch(() => {
      throw new CheckFailed(`the ledger reports ${JSON.stringify(usage)} for ${runs} runs`);
    });
    const ids = [...all.values()].filter(Boolean);
    expect(ids.length === runs, `${runs - ids.length} runs queued no webhook`);
    // The backlog drains at the workspace's delivery pace, so how long it takes grows with how many runs the load
    // made: the check waits as long as webhooks keep arriving, and gives up after WEBHOOK_QUIET_MS without one.
    const missing = () => ids.filter((id) => !receiver.byId.has(id)).length;
    for (let left = missing(), quietSince = Date.now(); left > 0; left = missing()) {
      if (Date.now() - quietSince > WEBHOOK_QUIET_MS) throw new CheckFailed(`${left} of ${ids.length} webhooks never arrived`);
      await sleep(250);
      if (missing() < left) quietSince = Date.now();
    }
    // Replays send no webhooks; anything beyond one per run would be a duplicate.
    await sleep(2_000);
    const twice = ids.filter((id) => receiver.byId.get(id) !== 1);
    expect(twice.length === 0, `${twice.length} webhooks arrived more than once`);
    expect(receiver.total() === ids.length, `the receiver got ${receiver.total()} requests for ${ids.length} deliveries`);
    return `${runs} runs, ledger used ${usage.used}, ${ids.length} webhooks each received once`;
  });

  for (const phase of phases) {
    console.log(
      `upgrade-check: ${phase.name} ${phase.from} → ${phase.to}: ${phase.requests} requests over ${seconds(phase.ms)}, ${phase.failures} failed, ` +
        `${phase.duringMigrations.requests} during the migrations (${seconds(phase.duringMigrations.ms)}), ${phase.from} gateways left ${phase.gatewaysLeft}, ` +
        `replay ${phase.replay.done}/${phase.replay.total}; stopped: ${phase.stops.join(', ')}`,
    );
  }
  console.log(`upgrade-check: OK in ${seconds(Date.now() - started)}`);
}

const history = new Map();
let seededWorkspace = null;

let code = 0;
process.once('SIGINT', () => void cleanUp().then(() => process.exit(130)));
async function cleanUp() {
  for (const cleanup of cleanups.reverse())
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
  cleanups.length = 0;
}
try {
  await main();
} catch (error) {
  console.error(`upgrade-check: ${error instanceof CheckFailed ? error.message : (error?.stack ?? String(error))}`);
  code = 1;
} finally {
  await cleanUp();
}
process.exit(code);

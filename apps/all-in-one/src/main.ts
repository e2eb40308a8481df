import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVICE_NAMES, ServiceName } from '@ds/contracts';
import { startEngineSimulator } from '@ds/engine-simulator';
import { DEFAULT_OPS_PORTS, redact } from '@ds/platform';
import { DemoSetupError, seedDemo } from './demo';
import { linkAddresses } from './link-addresses';
import { DEFAULT_RESTART_POLICY, RestartPolicyOptions } from './restart-policy';
import { SupervisedService } from './supervisor';
import { choosePort, ensureNats, ensurePostgres, listening, Started, waitUntil } from './dependencies';
import { choosesPorts, takeStartLock } from './start-lock';

/**
 * All-in-one mode: every service on one machine, each in its own process exactly as in a cluster, with
 * PostgreSQL, NATS and an engine found or started here. `--target NAME` runs one service alone,
 * `--migrate-only` applies every service's migrations and exits, `--demo` seeds a demo workspace.
 */
const SERVICE_ENTRY = (name: ServiceName) => resolve(__dirname, '..', '..', name, 'src', 'main.js');

/**
 * Secrets each service seals at rest, and the switch that lets it start on the public development key: a laptop
 * needs no key of its own, while a service started alone (`--target`, a pod) still refuses to start without one.
 */
const SEALED_AT_REST = [
  { what: 'provider keys', key: 'ENGINE_CREDENTIALS_KEY', devSwitch: 'ENGINE_CREDENTIALS_DEV_KEY' },
  { what: 'signing secrets', key: 'DELIVERY_SECRETS_KEY', devSwitch: 'DELIVERY_SECRETS_DEV_KEY' },
  { what: 'secret-URL secrets', key: 'RUNNER_SECRETS_KEY', devSwitch: 'RUNNER_SECRETS_DEV_KEY' },
] as const;

interface Options {
  demo: boolean;
  migrateOnly: boolean;
  target: ServiceName | null;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { demo: false, migrateOnly: false, target: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--demo') options.demo = true;
    else if (arg === '--migrate-only') options.migrateOnly = true;
    else if (arg === '--target') {
      const target = argv[++i] as ServiceName;
      if (!SERVICE_NAMES.includes(target)) fail(`--target must be one of ${SERVICE_NAMES.join(', ')}`);
      options.target = target;
    } else fail(`unknown argument ${arg}; use --demo, --migrate-only or --target NAME`);
  }
  return options;
}

function fail(message: string): never {
  process.stderr.write(`all-in-one: ${message}\n`);
  process.exit(1);
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function run(entry: string, args: string[], env: NodeJS.ProcessEnv, nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, entry, ...args], { env: withYoungGenerationBound(env), stdio: ['ignore', 'inherit', 'inherit'] });
}

/**
 * V8's young generation grows to 3 × 16 MB under load; 4 MB semi-spaces keep each service's resident size
 * under 150 MB for about the same collector time (docs/performance.md). The image sets the same in its
 * NODE_OPTIONS; a NODE_OPTIONS that already names a size keeps it.
 */
function withYoungGenerationBound(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const current = env.NODE_OPTIONS ?? '';
  if (current.includes('--max-semi-space-size')) return env;
  return { ...env, NODE_OPTIONS: `${current} --max-semi-space-size=4`.trim() };
}

/**
 * `CPU_PROFILE_DIR` makes every service write a V8 CPU profile named after it when it stops (Node does not
 * take `--cpu-prof` from NODE_OPTIONS, so the launcher passes it).
 */
function profilingArgs(name: ServiceName): string[] {
  const dir = process.env.CPU_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(dir)}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
}

/** The supervisor's backoff and crash-loop limit, from the environment (documented in the README). */
function restartPolicyFromEnv(): RestartPolicyOptions {
  const number = (name: string, fallback: number) => {
    const raw = process.env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) fail(`${name} must be a non-negative integer, not ${JSON.stringify(raw)}`);
    return value;
  };
  return {
    ...DEFAULT_RESTART_POLICY,
    firstDelayMs: number('RESTART_DELAY_MS', DEFAULT_RESTART_POLICY.firstDelayMs),
    maxDelayMs: number('RESTART_MAX_DELAY_MS', DEFAULT_RESTART_POLICY.maxDelayMs),
    crashLoopLimit: Math.max(1, number('CRASH_LOOP_LIMIT', DEFAULT_RESTART_POLICY.crashLoopLimit)),
  };
}

/** A port number from the environment, or null when the variable is not set. */
function portFromEnv(name: string): number | null {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return null;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) fail(`${name} must be a port from 1 to 65535, not ${JSON.stringify(raw)}`);
  return port;
}

/**
 * The demo is a convenience on top of a running cluster: when it cannot be set up, the API keeps serving and one
 * line says what failed and how to start the demo afresh.
 */
async function announceDemo(baseUrl: string, dataDir: string, embeddedDatabase: boolean): Promise<void> {
  try {
    say(await seedDemo(baseUrl, dataDir));
  } catch (error) {
    const what = error instanceof DemoSetupError ? error.message : `failed: ${error instanceof Error ? error.message : String(error)}`;
    const holds = embeddedDatabase ? 'the demo and the embedded database' : `the demo's user and key (${join(dataDir, 'demo-user.json')})`;
    process.stderr.write(
      `all-in-one: demo set-up ${what}; the services keep running; to start the demo afresh, stop the launcher and delete DATA_DIR (${dataDir}, which holds ${holds})\n`,
    );
  }
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  if (options.target) {
    // One service alone: the same process a Kubernetes pod runs.
    const child = run(SERVICE_ENTRY(options.target), [], process.env);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => child.kill(signal));
    child.once('exit', (code) => process.exit(code ?? 1));
    return;
  }

  // Every setting is read before anything starts, so that a malformed one stops nothing half-started.
  const ports = { postgres: portFromEnv('EMBEDDED_POSTGRES_PORT'), opsBase: portFromEnv('OPS_PORT_BASE'), api: portFromEnv('PORT') ?? 3000 };
  const restartPolicy = restartPolicyFromEnv();
  const dataDir = resolve(process.env.DATA_DIR ?? '.data');
  // Not private as a whole: run as root, the embedded PostgreSQL runs as the postgres user and must reach its folder.
  // The file that holds secrets (the demo's password and key) is private on its own.
  mkdirSync(dataDir, { recursive: true });
  const started: Started[] = [];
  let stopping: Promise<void> | null = null;
  let releaseStartLock = () => undefined as void;
  const waiting = new AbortController();
  // What started is stopped in the reverse order: the services before the nats-server and PostgreSQL they use.
  const stopAll = () =>
    (stopping ??= (async () => {
      waiting.abort();
      releaseStartLock();
      for (const dependency of started.reverse()) await dependency.stop().catch(() => undefined);
    })());
  const shutdown = async (code: number) => {
    if (stopping) return;
    await stopAll();
    process.exit(code);
  };
  // From the first moment, so that a signal during start-up still stops what was started.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutdown(0));
  const register = (dependency: Started) => void started.push(dependency);

  try {
    if (choosesPorts(process.env, ports)) {
      releaseStartLock = await takeStartLock({
        signal: waiting.signal,
        onWait: (pid) => say(`all-in-one: waiting for the launcher ${pid} on this machine to bind the ports it chose before choosing ours`),
      });
      process.once('exit', releaseStartLock);
    }
    const postgres = await ensurePostgres(process.env.DATABASE_URL, dataDir, ports.postgres, register);
    say(`all-in-one: database: ${postgres.description}`);
    const nats = await ensureNats(process.env.NATS_URL || undefined, dataDir, register);
    say(`all-in-one: messaging: ${nats.description}`);
    const natsUrl = nats.url;

    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: postgres.url, NATS_URL: natsUrl, DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? '5' };
    for (const sealed of SEALED_AT_REST) {
      if (process.env[sealed.key]) continue;
      env[sealed.devSwitch] = 'true';
      say(`all-in-one: ${sealed.what} at rest: sealed with the public development key (set ${sealed.key} to keep real ones)`);
    }
    const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    if (process.env.REDIS_URL || (await listening(new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379)))) {
      Object.assign(env, { REDIS_URL: redisUrl, RATE_LIMIT_STORE: process.env.RATE_LIMIT_STORE ?? 'redis' });
      say(`all-in-one: rate-limit and delivery windows: Redis at ${redact(redisUrl)}`);
    } else {
      env.RATE_LIMIT_STORE = 'memory';
      say('all-in-one: rate-limit and delivery windows: in the gateway and delivery processes (no Redis at REDIS_URL or 127.0.0.1:6379)');
    }
    if (options.migrateOnly) {
      for (const name of SERVICE_NAMES) {
        const code = await new Promise<number | null>((done) => run(SERVICE_ENTRY(name), ['migrate'], env).once('exit', done));
        if (code !== 0) throw new Error(`migrations of ${name} failed`);
      }
      say('all-in-one: migrations applied');
      await stopAll();
      return;
    }

    if (options.demo && !process.env.ENGINE_LLM_API_KEY && !process.env.ENGINE_CHECKPOINT_BASE_URL) {
      const simulator = await startEngineSimulator({ port: 0 });
      register({ description: 'engine simulator', stop: () => simulator.close() });
      Object.assign(env, {
        ENGINE_DEFAULT: 'llm',
        ENGINE_LLM_PROVIDER: 'openai',
        ENGINE_LLM_BASE_URL: `${simulator.url}/v1`,
        ENGINE_LLM_API_KEY: 'simulator',
        ENGINE_LLM_MODEL: 'sim-standard',
      });
      say(`all-in-one: engine: the built-in engine simulator at ${simulator.url} (deterministic answers; set ENGINE_LLM_API_KEY for a real provider)`);
    } else {
      say(
        `all-in-one: engine: ${env.ENGINE_LLM_API_KEY ? `${env.ENGINE_LLM_PROVIDER ?? 'anthropic'} at ${redact(env.ENGINE_LLM_BASE_URL ?? 'its default address')}` : env.ENGINE_CHECKPOINT_BASE_URL ? `checkpoint at ${env.ENGINE_CHECKPOINT_BASE_URL}` : 'none configured (runs answer 424 ENGINE_NOT_CONFIGURED; use --demo for the simulator)'}`,
      );
    }

    const opsPorts = {} as Record<ServiceName, number>;
    for (const [i, name] of SERVICE_NAMES.entries()) {
      opsPorts[name] = await choosePort(
        `the ops port of ${name}`,
        { port: ports.opsBase === null ? null : ports.opsBase + i, move: 'set OPS_PORT_BASE to the first of six free ports' },
        DEFAULT_OPS_PORTS[name],
      );
    }
    const port = await choosePort('the API', { port: ports.api, move: 'set PORT to a free port' }, 3000);
    const links = linkAddresses(process.env, port);
    if (links.derived.length > 0) {
      say(
        `all-in-one: links (invitations, e-mails, secret URLs) point to http://localhost:${port}; set ${links.derived.join(' and ')} to the address people reach this at`,
      );
    }
    // Probes, metrics and the route table are for this machine unless asked otherwise; a pod's probes come from outside.
    const opsHost = process.env.OPS_HOST || '127.0.0.1';
    const opsAddress = opsHost === '0.0.0.0' || opsHost === '::' ? '127.0.0.1' : opsHost.includes(':') ? `[${opsHost}]` : opsHost;
    const readyz = (name: ServiceName) => async () => (await fetch(`http://${opsAddress}:${opsPorts[name]}/readyz`).catch(() => null))?.ok === true;
    const services = SERVICE_NAMES.map(
      (name) =>
        new SupervisedService(
          name,
          () =>
            run(
              SERVICE_ENTRY(name),
              [],
              { ...env, APP_URL: links.APP_URL, BASE_URL: links.BASE_URL, PORT: String(port), OPS_PORT: String(opsPorts[name]), OPS_HOST: opsHost },
              profilingArgs(name),
            ),
          readyz(name),
          {
            say: (line) => process.stderr.write(`${line}\n`),
            giveUp: (message) => {
              if (stopping) return;
              process.stderr.write(`all-in-one: ${message}\n`);
              void shutdown(1);
            },
          },
          restartPolicy,
        ),
    );
    for (const service of services) service.start();
    register({ description: 'services', stop: async () => void (await Promise.all(services.map((service) => service.stop()))) });

    // Six Node processes and their migrations on a busy two-core laptop can take minutes; a service that exits is
    // reported at once whatever this says.
    await Promise.all(SERVICE_NAMES.map((name) => waitUntil(readyz(name), 180_000, name)));
    await waitUntil(() => listening('127.0.0.1', port), 10_000, 'gateway');
    releaseStartLock();
    const baseUrl = `http://127.0.0.1:${port}`;
    for (const service of services) service.arm();
    say(`all-in-one: ready: API at ${baseUrl}, probes and metrics on ${opsHost} at ${SERVICE_NAMES.map((name) => `${name} :${opsPorts[name]}`).join(', ')}`);
    say(`all-in-one: processes: ${services.map((service) => `${service.name} ${service.pid}`).join(', ')} (a service that crashes is restarted)`);
    if (options.demo) await announceDemo(baseUrl, dataDir, !process.env.DATABASE_URL);
  } catch (error) {
    // A signal during start-up makes the waits fail; the shutdown it began ends the process.
    if (stopping) return;
    await stopAll();
    fail(error instanceof Error ? error.message : String(error));
  }
}

void main();

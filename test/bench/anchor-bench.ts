import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon, { Result } from 'autocannon';
import Fastify from 'fastify';
import Redis from 'ioredis';
import { connect, Msg, RetentionPolicy, StorageType } from 'nats';
import { Pool } from 'pg';
import { Agent } from 'undici';
import { dropDatabase, freePort, freshDatabase, NatsServer, ROOT, startNats, waitFor } from '../e2e/support/cluster';

/**
 * `npm run bench:anchor`: the floor under the run path on this machine. It measures, in one run and with the
 * same load as `npm run bench`, the pipelines `../shared/design/PERFORMANCE.md` takes its anchors from, built
 * from the bare libraries with none of the service's work in them:
 *
 * - a bare Fastify JSON echo;
 * - Fastify → NATS request/reply → process A → NATS request/reply → process B, where A also writes the request
 *   body as a row by group commit (a multi-row INSERT when none is in flight, else the rows wait for the next)
 *   before it answers: two hops and one batched INSERT, the shape of a run without its budget, windows,
 *   settlement or engine call;
 * - the same with a second A and a second B in the same queue groups;
 * - the run's own shape with none of its work: Fastify with one Redis script (the windows) → NATS → R, which
 *   runs one Redis script (a budget), asks E over NATS, writes a row by group commit and publishes an event to
 *   JetStream, waiting for its acknowledgement, before it answers; E takes a Redis slot, makes an HTTP call to a
 *   bare Fastify server standing for the provider and gives the slot back: the floor under a run whose step 6
 *   is counted in Redis;
 * - each of them alone, one request at a time.
 *
 * Whatever the run path cannot reach below these figures, no change to the service's own code can reach.
 */

const LOG_DIR = join(ROOT, '.data', 'bench-anchor');
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 50);
const DURATION_S = intEnv('BENCH_DURATION_S', 10);
const WARMUP_S = intEnv('BENCH_WARMUP_S', 3);
const SAMPLES = intEnv('BENCH_SAMPLES', 300);
const RUN_LIMIT_MS = 4 * 60_000;
const HOP_TIMEOUT_MS = 30_000;
/** Rows one INSERT carries at most. */
const GROUP_MAX = 256;

function intEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** The same 1 KB body as `npm run bench`. */
function body(): string {
  const base = { state: { message: '', amount: 120 } };
  const pad = 1024 - JSON.stringify(base).length;
  return JSON.stringify({ state: { message: 'My order arrived broken and nobody answers my e-mails. '.repeat(20).slice(0, pad), amount: 120 } });
}

function spawnRole(name: string, args: string[]): { child: ChildProcess; output: () => string } {
  const log = createWriteStream(join(LOG_DIR, `${name}.log`));
  const child = spawn(process.execPath, [__filename, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      if (seen.length < 100_000) seen += chunk.toString();
    });
    stream.pipe(log);
  }
  return { child, output: () => seen };
}

/** The processes whose CPU time is read, by role. */
const roles = new Map<string, ChildProcess>();

async function startRole(name: string, args: string[], children: ChildProcess[]): Promise<void> {
  const role = spawnRole(name, args);
  children.push(role.child);
  roles.set(name, role.child);
  await waitFor(async () => role.output().includes('ready'), 15_000, name);
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** CPU time (user + system) of each started process so far, in ms, from /proc. */
function cpuTimes(): Map<string, number> {
  const ticksPerSecond = 100;
  const times = new Map<string, number>();
  for (const [name, child] of roles) {
    try {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      times.set(name, ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond);
    } catch {
      times.set(name, NaN);
    }
  }
  return times;
}

function cpuPerRequest(before: Map<string, number>, after: Map<string, number>, requests: number): string {
  return [...after]
    .filter(([name]) => before.has(name))
    .map(([name, ms]) => `${name} ${((ms - before.get(name)!) / requests).toFixed(3)}`)
    .join(', ');
}

function load(url: string, text: string, seconds: number): Promise<Result> {
  return autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
    // `npm run bench` reads every body; so does this, so the load generator does the same work.
    verifyBody: () => true,
  });
}

function summary(result: Result) {
  const stats: Record<string, { count: number }> = result.statusCodeStats;
  const total = Object.values(stats).reduce((sum, { count }) => sum + Number(count), 0);
  return {
    requests_per_second: Math.round(total / result.duration),
    latency_ms: { p50: result.latency.p50, p99: result.latency.p99 },
    non_2xx: result.non2xx,
    errors: result.errors,
  };
}

async function alone(url: string, text: string): Promise<{ p50: number; p99: number }> {
  const post = async () => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    await response.text();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  };
  for (let i = 0; i < 50; i++) await post();
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await post();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]!;
  return { p50: Number(at(50).toFixed(2)), p99: Number(at(99).toFixed(2)) };
}

async function main(): Promise<void> {
  mkdirSync(LOG_DIR, { recursive: true });
  const children: ChildProcess[] = [];
  let nats: NatsServer | undefined;
  let databaseUrl: string | undefined;
  const cleanup = async () => {
    for (const child of children.reverse()) await stopChild(child);
    await nats?.stop().catch(() => undefined);
    if (databaseUrl) await dropDatabase(databaseUrl).catch(() => undefined);
  };
  const limit = setTimeout(() => {
    say(`bench:anchor: still running after ${RUN_LIMIT_MS / 1000} s; stopping`);
    void cleanup().finally(() => process.exit(1));
  }, RUN_LIMIT_MS);
  try {
    say(
      `bench:anchor: machine ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    say(`bench:anchor: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ${DURATION_S} s measured, 1 KB bodies`);
    nats = await startNats();
    databaseUrl = await freshDatabase('ds_anchor');
    const setup = new Pool({ connectionString: databaseUrl, max: 1 });
    await setup.query(`CREATE TABLE anchor_rows (id text PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    await setup.end();

    const [echoPort, frontPort] = await Promise.all([freePort(), freePort()]);
    await startRole('echo', ['--echo', String(echoPort)], children);
    await startRole('hop-b', ['--hop-b', nats.url], children);
    await startRole('hop-a', ['--hop-a', nats.url, databaseUrl], children);
    await startRole('front', ['--front', String(frontPort), nats.url], children);
    const [shapeFrontPort, providerPort] = await Promise.all([freePort(), freePort()]);
    const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    await startRole('provider', ['--provider', String(providerPort)], children);
    await startRole('shape-e', ['--shape-e', nats.url, redisUrl, String(providerPort)], children);
    await startRole('shape-r', ['--shape-r', nats.url, redisUrl, databaseUrl], children);
    await startRole('shape-front', ['--shape-front', String(shapeFrontPort), nats.url, redisUrl], children);

    const text = body();
    const echoUrl = `http://127.0.0.1:${echoPort}/echo`;
    const anchorUrl = `http://127.0.0.1:${frontPort}/run`;
    const shapeUrl = `http://127.0.0.1:${shapeFrontPort}/run`;
    await load(echoUrl, text, WARMUP_S);
    await load(anchorUrl, text, WARMUP_S);
    await load(shapeUrl, text, WARMUP_S);
    say('bench:anchor: bare Fastify echo');
    const echo = summary(await load(echoUrl, text, DURATION_S));
    say('bench:anchor: two hops and a batched INSERT');
    let before = cpuTimes();
    const anchor = summary(await load(anchorUrl, text, DURATION_S));
    const loadedCpu = cpuPerRequest(before, cpuTimes(), anchor.requests_per_second * DURATION_S);
    say("bench:anchor: the run's shape");
    before = cpuTimes();
    const shape = summary(await load(shapeUrl, text, DURATION_S));
    const shapeLoadedCpu = cpuPerRequest(before, cpuTimes(), shape.requests_per_second * DURATION_S);
    say(`bench:anchor: ${SAMPLES} sequential requests to each`);
    const echoAlone = await alone(echoUrl, text);
    before = cpuTimes();
    const anchorAlone = await alone(anchorUrl, text);
    const aloneCpu = cpuPerRequest(before, cpuTimes(), SAMPLES + 50);
    before = cpuTimes();
    const shapeAlone = await alone(shapeUrl, text);
    const shapeAloneCpu = cpuPerRequest(before, cpuTimes(), SAMPLES + 50);
    await startRole('hop-b-2', ['--hop-b', nats.url], children);
    await startRole('hop-a-2', ['--hop-a', nats.url, databaseUrl], children);
    await load(anchorUrl, text, WARMUP_S);
    say('bench:anchor: the same with a second A and a second B');
    const replicas = summary(await load(anchorUrl, text, DURATION_S));

    const results = {
      machine: { cpus: cpus().length, load: loadavg() },
      connections: CONNECTIONS,
      echo,
      anchor,
      anchor_ratio: Number((anchor.requests_per_second / echo.requests_per_second).toFixed(3)),
      anchor_with_replicas: replicas,
      shape,
      shape_ratio: Number((shape.requests_per_second / echo.requests_per_second).toFixed(3)),
      alone: { echo: echoAlone, anchor: anchorAlone, shape: shapeAlone },
      cpu_per_request_ms: { loaded: loadedCpu, alone: aloneCpu, shape_loaded: shapeLoadedCpu, shape_alone: shapeAloneCpu },
    };
    writeFileSync(join(LOG_DIR, 'results.json'), JSON.stringify(results, null, 2));
    const row = (name: string, result: ReturnType<typeof summary>) =>
      say(
        `  ${name.padEnd(44)} ${String(result.requests_per_second).padStart(7)} req/s   p50 ${String(result.latency_ms.p50).padStart(4)} ms   p99 ${String(result.latency_ms.p99).padStart(4)} ms${result.non_2xx + result.errors > 0 ? `   (${result.non_2xx} non-2xx, ${result.errors} errors)` : ''}`,
      );
    say();
    row('bare Fastify echo', echo);
    row('two hops + batched INSERT', anchor);
    row('two hops + batched INSERT, second A and B', replicas);
    row("the run's shape, none of its work", shape);
    say(`  ratio to the echo: two hops + batched INSERT ${results.anchor_ratio.toFixed(3)}, the run's shape ${results.shape_ratio.toFixed(3)}`);
    say(
      `  alone, round trip p50 / p99: echo ${echoAlone.p50} / ${echoAlone.p99} ms, two hops + batched INSERT ${anchorAlone.p50} / ${anchorAlone.p99} ms, the run's shape ${shapeAlone.p50} / ${shapeAlone.p99} ms`,
    );
    say(`  CPU per request (ms), two hops + batched INSERT at ${CONNECTIONS} connections: ${loadedCpu}`);
    say(`  CPU per request (ms), the same alone: ${aloneCpu}`);
    say(`  CPU per request (ms), the run's shape at ${CONNECTIONS} connections: ${shapeLoadedCpu}`);
    say(`  CPU per request (ms), the same alone: ${shapeAloneCpu}`);
    say(`results: ${join(LOG_DIR, 'results.json')}`);
  } finally {
    clearTimeout(limit);
    await cleanup();
  }
}

/** The echo, as in `npm run bench`. */
async function echoRole(port: number): Promise<void> {
  const app = Fastify({ logger: false });
  app.post('/echo', async (request) => request.body);
  await app.listen({ port, host: '127.0.0.1' });
  say('ready');
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

/** Fastify forwarding the body it received, as bytes, and answering with the bytes it gets back. */
async function frontRole(port: number, natsUrl: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, payload, done) => done(null, payload));
  app.post('/run', async (request, reply) => {
    const answer = await nc.request('anchor.a', request.body as Buffer, { timeout: HOP_TIMEOUT_MS });
    return reply.header('content-type', 'application/json').send(Buffer.from(answer.data));
  });
  await app.listen({ port, host: '127.0.0.1' });
  say('ready');
  process.once(
    'SIGTERM',
    () =>
      void app
        .close()
        .then(() => nc.drain())
        .then(() => process.exit(0)),
  );
}

/** Asks B, writes the body as a row by group commit, then answers. */
async function hopARole(natsUrl: string, databaseUrl: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  const writer = new GroupInsert(pool);
  let next = 0;
  const prefix = `${process.pid}-`;
  nc.subscribe('anchor.a', {
    queue: 'anchor-a',
    callback: (_error, message: Msg) => {
      void (async () => {
        const answer = await nc.request('anchor.b', message.data, { timeout: HOP_TIMEOUT_MS });
        await writer.insert(`${prefix}${next++}`, Buffer.from(message.data).toString('utf8'));
        message.respond(answer.data);
      })().catch((error: unknown) => {
        say(`hop A failed: ${String(error)}`);
        message.respond(new TextEncoder().encode('{"error":true}'));
      });
    },
  });
  say('ready');
  process.once(
    'SIGTERM',
    () =>
      void nc
        .drain()
        .then(() => pool.end())
        .then(() => process.exit(0)),
  );
}

/** Answers a small JSON object. */
async function hopBRole(natsUrl: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  const answer = new TextEncoder().encode(JSON.stringify({ result: 'refund', confidence: 0.92, action: 'approve' }));
  nc.subscribe('anchor.b', { queue: 'anchor-b', callback: (_error, message: Msg) => message.respond(answer) });
  say('ready');
  process.once('SIGTERM', () => void nc.drain().then(() => process.exit(0)));
}

/** Counts one request against a window, as the gateway's script does for its three. */
const WINDOW_SCRIPT = `local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n`;
/** Takes one unit of a budget when there is room, as step 6 counted in Redis would. */
const BUDGET_SCRIPT = `local left = tonumber(redis.call('GET', KEYS[1]) or ARGV[1]) if left <= 0 then return 0 end redis.call('SET', KEYS[1], left - 1) return 1`;
/** Takes a slot when fewer than ARGV[1] are taken. */
const SLOT_SCRIPT = `local n = redis.call('INCR', KEYS[1]) if n > tonumber(ARGV[1]) then redis.call('DECR', KEYS[1]) return 0 end return 1`;

async function shapeFrontRole(port: number, natsUrl: string, redisUrl: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  const redis = new Redis(redisUrl, { enableAutoPipelining: true });
  redis.defineCommand('window', { numberOfKeys: 1, lua: WINDOW_SCRIPT });
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, payload, done) => done(null, payload));
  app.post('/run', async (request, reply) => {
    await (redis as unknown as { window(key: string, ms: number): Promise<number> }).window(
      `anchor:${process.pid}:window:${Math.floor(Date.now() / 60_000)}`,
      60_000,
    );
    const answer = await nc.request('shape.r', request.body as Buffer, { timeout: HOP_TIMEOUT_MS });
    return reply.header('content-type', 'application/json').send(Buffer.from(answer.data));
  });
  await app.listen({ port, host: '127.0.0.1' });
  say('ready');
  process.once(
    'SIGTERM',
    () =>
      void app
        .close()
        .then(() => nc.drain())
        .then(() => redis.quit())
        .then(() => process.exit(0)),
  );
}

async function shapeRunnerRole(natsUrl: string, redisUrl: string, databaseUrl: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  const manager = await nc.jetstreamManager();
  await manager.streams.add({ name: 'ANCHOR_EVENTS', subjects: ['anchor.events.>'], retention: RetentionPolicy.Limits, storage: StorageType.File });
  const jetstream = nc.jetstream();
  const redis = new Redis(redisUrl, { enableAutoPipelining: true });
  redis.defineCommand('budget', { numberOfKeys: 1, lua: BUDGET_SCRIPT });
  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  const writer = new GroupInsert(pool);
  let next = 0;
  const prefix = `${process.pid}-`;
  nc.subscribe('shape.r', {
    queue: 'shape-r',
    callback: (_error, message: Msg) => {
      void (async () => {
        const id = `${prefix}${next++}`;
        const taken = await (redis as unknown as { budget(key: string, initial: number): Promise<number> }).budget(`anchor:${process.pid}:budget`, 1e12);
        if (taken !== 1) throw new Error('no budget');
        const answer = await nc.request('shape.e', message.data, { timeout: HOP_TIMEOUT_MS });
        await Promise.all([
          writer.insert(id, Buffer.from(message.data).toString('utf8')),
          jetstream.publish('anchor.events.settled', new TextEncoder().encode(`{"id":"${id}","billable":true}`), { msgID: id }),
        ]);
        message.respond(answer.data);
      })().catch((error: unknown) => {
        say(`R failed: ${String(error)}`);
        message.respond(new TextEncoder().encode('{"error":true}'));
      });
    },
  });
  say('ready');
  process.once(
    'SIGTERM',
    () =>
      void nc
        .drain()
        .then(() => pool.end())
        .then(() => redis.quit())
        .then(() => process.exit(0)),
  );
}

async function shapeEngineRole(natsUrl: string, redisUrl: string, providerPort: number): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  const redis = new Redis(redisUrl, { enableAutoPipelining: true });
  redis.defineCommand('slot', { numberOfKeys: 1, lua: SLOT_SCRIPT });
  // The same client and settings as engine-proxy's provider calls.
  const agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 });
  const slotKey = `anchor:${process.pid}:slots`;
  const ask = async (body: Uint8Array) => {
    const response = await agent.request({
      origin: `http://127.0.0.1:${providerPort}`,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(body),
    });
    return await response.body.text();
  };
  nc.subscribe('shape.e', {
    queue: 'shape-e',
    callback: (_error, message: Msg) => {
      void (async () => {
        const slot = await (redis as unknown as { slot(key: string, limit: number): Promise<number> }).slot(slotKey, 1_000);
        if (slot !== 1) throw new Error('no slot');
        try {
          const completion = JSON.parse(await ask(message.data)) as { choices: Array<{ message: { content: string } }> };
          message.respond(new TextEncoder().encode(completion.choices[0]!.message.content));
        } finally {
          void redis.decr(slotKey);
        }
      })().catch((error: unknown) => {
        say(`E failed: ${String(error)}`);
        message.respond(new TextEncoder().encode('{"error":true}'));
      });
    },
  });
  say('ready');
  process.once(
    'SIGTERM',
    () =>
      void nc
        .drain()
        .then(() => redis.quit())
        .then(() => process.exit(0)),
  );
}

/** Stands for the provider: a fixed chat completion. */
async function providerRole(port: number): Promise<void> {
  const app = Fastify({ logger: false });
  const completion = {
    id: 'chatcmpl-anchor',
    object: 'chat.completion',
    model: 'anchor',
    choices: [
      { index: 0, message: { role: 'assistant', content: JSON.stringify({ result: 'refund', confidence: 0.92, action: 'approve' }) }, finish_reason: 'stop' },
    ],
    usage: { prompt_tokens: 300, completion_tokens: 20, total_tokens: 320 },
  };
  app.post('/v1/chat/completions', async () => completion);
  await app.listen({ port, host: '127.0.0.1' });
  say('ready');
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

/** One INSERT when none is in flight; rows that arrive meanwhile go together in the next. */
class GroupInsert {
  private waiting: Array<{ id: string; body: string; done: () => void; failed: (error: unknown) => void }> = [];
  private flushing = false;

  constructor(private readonly pool: Pool) {}

  insert(id: string, body: string): Promise<void> {
    return new Promise((done, failed) => {
      this.waiting.push({ id, body, done, failed });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, GROUP_MAX);
      try {
        await this.pool.query({
          name: 'anchor-insert',
          text: 'INSERT INTO anchor_rows (id, body) SELECT * FROM unnest($1::text[], $2::jsonb[])',
          values: [group.map((row) => row.id), group.map((row) => row.body)],
        });
        for (const row of group) row.done();
      } catch (error) {
        for (const row of group) row.failed(error);
      }
    }
    this.flushing = false;
  }
}

const [role, ...args] = process.argv.slice(2);
if (role === '--echo') void echoRole(Number(args[0]));
else if (role === '--front') void frontRole(Number(args[0]), args[1]!);
else if (role === '--hop-a') void hopARole(args[0]!, args[1]!);
else if (role === '--hop-b') void hopBRole(args[0]!);
else if (role === '--shape-front') void shapeFrontRole(Number(args[0]), args[1]!, args[2]!);
else if (role === '--shape-r') void shapeRunnerRole(args[0]!, args[1]!, args[2]!);
else if (role === '--shape-e') void shapeEngineRole(args[0]!, args[1]!, Number(args[2]));
else if (role === '--provider') void providerRole(Number(args[0]));
else
  main().catch((error: unknown) => {
    say(`bench:anchor failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });

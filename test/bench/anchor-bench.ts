import { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import Redis from 'ioredis';
import { connect, Msg, NatsConnection, RetentionPolicy, StorageType } from 'nats';
import { Pool } from 'pg';
import { Agent } from 'undici';
import { dropDatabase, freePort, freshDatabase, NatsServer, ROOT, startNats, waitFor } from '../e2e/support/cluster';
import {
  CONNECTIONS,
  DURATION_S,
  load,
  percentile,
  procCpuMs,
  runBody,
  SAMPLES,
  say,
  spawnLogged,
  stopChild,
  Summary,
  summary,
  WARMUP_S,
} from './bench-support';

/**
 * `npm run bench:anchor`: the floor under the run path on this machine. It measures, in one run and with the
 * same load as `npm run bench`, pipelines built from the bare libraries with none of the service's work in them:
 *
 * - a bare Fastify JSON echo;
 * - two hops + batched INSERT: Fastify → NATS request/reply → A → NATS request/reply → B, where A also writes
 *   the request body as a row by group commit (one multi-row INSERT when none is in flight, else the rows wait
 *   for the next) before it answers: the pipeline `../shared/design/PERFORMANCE.md` takes its anchors from;
 * - the same with a second A and a second B in the same queue groups;
 * - the run's shape with none of its work: Fastify with one Redis script (the windows) → NATS → R, which runs one
 *   Redis script (a budget: step 6 counted in Redis, so no ledger hop), asks E over NATS, writes a row by group
 *   commit and publishes an event to JetStream (waiting for its acknowledgement) before it answers; E takes a
 *   Redis slot, calls a bare Fastify server standing for the provider through undici, and gives the slot back;
 * - the first two and the run's shape alone, one request at a time.
 *
 * Whatever these pipelines cannot reach, no change to the service's own code can.
 */

const LOG_DIR = join(ROOT, '.data', 'bench-anchor');
const RUN_LIMIT_MS = 4 * 60_000;
const HOP_TIMEOUT_MS = 30_000;
/** Rows one INSERT carries at most. */
const GROUP_MAX = 256;
const encoder = new TextEncoder();

/** The processes started, by role, whose CPU time is read. */
const roles = new Map<string, ChildProcess>();

async function startRole(name: string, args: string[]): Promise<void> {
  const role = spawnLogged(LOG_DIR, name, [__filename, ...args]);
  roles.set(name, role.child);
  await waitFor(async () => role.output().includes('ready'), 15_000, name);
}

function cpuTimes(): Map<string, number> {
  return new Map([...roles].map(([name, child]) => [name, procCpuMs(child.pid)]));
}

/** CPU per request of the roles that did work in a phase, in ms. */
function cpuPerRequest(before: Map<string, number>, requests: number): string {
  return [...cpuTimes()]
    .map(([name, ms]) => [name, (ms - (before.get(name) ?? ms)) / requests] as const)
    .filter(([, perRequest]) => perRequest >= 0.001)
    .map(([name, perRequest]) => `${name} ${perRequest.toFixed(3)}`)
    .join(', ');
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
  return { p50: Number(percentile(times, 50).toFixed(2)), p99: Number(percentile(times, 99).toFixed(2)) };
}

async function main(): Promise<void> {
  mkdirSync(LOG_DIR, { recursive: true });
  let nats: NatsServer | undefined;
  let databaseUrl: string | undefined;
  const cleanup = async () => {
    for (const child of [...roles.values()].reverse()) await stopChild(child);
    await nats?.stop().catch(() => undefined);
    if (databaseUrl) await dropDatabase(databaseUrl).catch(() => undefined);
  };
  const limit = setTimeout(() => {
    say(`bench:anchor: still running after ${RUN_LIMIT_MS / 1000} s; stopping`);
    void cleanup().finally(() => process.exit(1));
  }, RUN_LIMIT_MS);
  try {
    const load1 = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    say(
      `bench:anchor: machine ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load ${load1}`,
    );
    say(`bench:anchor: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ${DURATION_S} s measured, 1 KB bodies`);
    nats = await startNats();
    databaseUrl = await freshDatabase('ds_anchor');
    const setup = new Pool({ connectionString: databaseUrl, max: 1 });
    await setup.query(`CREATE TABLE anchor_rows (id text PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    await setup.end();
    const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

    const [echoPort, frontPort, shapeFrontPort, providerPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    await startRole('echo', ['--echo', String(echoPort)]);
    await startRole('B', ['--hop-b', nats.url]);
    await startRole('A', ['--hop-a', nats.url, databaseUrl]);
    await startRole('front', ['--front', String(frontPort), nats.url]);
    await startRole('provider', ['--provider', String(providerPort)]);
    await startRole('E', ['--shape-e', nats.url, redisUrl, String(providerPort)]);
    await startRole('R', ['--shape-r', nats.url, redisUrl, databaseUrl]);
    await startRole('shape front', ['--shape-front', String(shapeFrontPort), nats.url, redisUrl]);

    const text = runBody();
    const urls = {
      echo: `http://127.0.0.1:${echoPort}/echo`,
      anchor: `http://127.0.0.1:${frontPort}/run`,
      shape: `http://127.0.0.1:${shapeFrontPort}/run`,
    };
    for (const url of Object.values(urls)) await load(url, [{}], text, WARMUP_S);
    const measure = async (what: string, url: string) => {
      say(`bench:anchor: ${what}`);
      const before = cpuTimes();
      const result = summary(await load(url, [{}], text, DURATION_S));
      return { result, cpu: cpuPerRequest(before, result.total) };
    };
    const measureAlone = async (url: string) => {
      const before = cpuTimes();
      const result = await alone(url, text);
      return { result, cpu: cpuPerRequest(before, SAMPLES + 50) };
    };
    const echo = await measure('bare Fastify echo', urls.echo);
    const anchor = await measure('two hops + batched INSERT', urls.anchor);
    const shape = await measure("the run's shape", urls.shape);
    say(`bench:anchor: ${SAMPLES} sequential requests to each`);
    const echoAlone = await measureAlone(urls.echo);
    const anchorAlone = await measureAlone(urls.anchor);
    const shapeAlone = await measureAlone(urls.shape);
    await startRole('B2', ['--hop-b', nats.url]);
    await startRole('A2', ['--hop-a', nats.url, databaseUrl]);
    await load(urls.anchor, [{}], text, WARMUP_S);
    const replicas = await measure('two hops + batched INSERT with a second A and a second B', urls.anchor);

    const ratio = (phase: { result: Summary }) => Number((phase.result.requests_per_second / echo.result.requests_per_second).toFixed(3));
    const results = {
      machine: { cpus: cpus().length, load_at_start: load1 },
      connections: CONNECTIONS,
      echo: echo.result,
      anchor: { ...anchor.result, ratio: ratio(anchor), cpu_ms_per_request: anchor.cpu },
      anchor_with_replicas: { ...replicas.result, ratio: ratio(replicas), cpu_ms_per_request: replicas.cpu },
      shape: { ...shape.result, ratio: ratio(shape), cpu_ms_per_request: shape.cpu },
      alone: {
        echo: echoAlone.result,
        anchor: { ...anchorAlone.result, cpu_ms_per_request: anchorAlone.cpu },
        shape: { ...shapeAlone.result, cpu_ms_per_request: shapeAlone.cpu },
      },
    };
    writeFileSync(join(LOG_DIR, 'results.json'), JSON.stringify(results, null, 2));
    const row = (name: string, { result }: { result: Summary }) => {
      const failures = result.non_2xx + result.errors > 0 ? `   (${result.non_2xx} non-2xx, ${result.errors} errors)` : '';
      say(
        `  ${name.padEnd(46)} ${String(result.requests_per_second).padStart(7)} req/s   p50 ${String(result.latency_ms.p50).padStart(4)} ms   p99 ${String(result.latency_ms.p99).padStart(4)} ms${failures}`,
      );
    };
    say();
    row('bare Fastify echo', echo);
    row('two hops + batched INSERT', anchor);
    row('two hops + batched INSERT, a second A and B', replicas);
    row("the run's shape, none of its work", shape);
    say(`  ratio to the echo: two hops + batched INSERT ${ratio(anchor).toFixed(3)}, the run's shape ${ratio(shape).toFixed(3)}`);
    say(
      `  alone, round trip p50 / p99: echo ${echoAlone.result.p50} / ${echoAlone.result.p99} ms, two hops + batched INSERT ${anchorAlone.result.p50} / ${anchorAlone.result.p99} ms, the run's shape ${shapeAlone.result.p50} / ${shapeAlone.result.p99} ms`,
    );
    say(`  CPU per request (ms) at ${CONNECTIONS} connections: ${anchor.cpu}; the run's shape: ${shape.cpu}`);
    say(`  CPU per request (ms) alone: ${anchorAlone.cpu}; the run's shape: ${shapeAlone.cpu}`);
    say(`results: ${join(LOG_DIR, 'results.json')}`);
  } finally {
    clearTimeout(limit);
    await cleanup();
  }
}

/** Says it is ready, and closes what it opened on SIGTERM. */
function readyUntilTerm(close: () => Promise<unknown>): void {
  say('ready');
  process.once('SIGTERM', () => void close().finally(() => process.exit(0)));
}

/** Answers requests on `subject` (one queue group) with what `handle` makes of their bytes. */
function answer(nc: NatsConnection, subject: string, handle: (data: Uint8Array) => Promise<Uint8Array> | Uint8Array): void {
  nc.subscribe(subject, {
    queue: subject,
    callback: (_error, message: Msg) => {
      void (async () => message.respond(await handle(message.data)))().catch((error: unknown) => {
        say(`${subject} failed: ${String(error)}`);
        message.respond(encoder.encode('{"error":true}'));
      });
    },
  });
}

/** Fastify that forwards the body it received, as bytes, after `before`, and answers with the bytes it gets back. */
async function front(
  port: number,
  nc: NatsConnection,
  subject: string,
  before: () => Promise<unknown> = async () => undefined,
): Promise<() => Promise<unknown>> {
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, payload, done) => done(null, payload));
  app.post('/run', async (request, reply) => {
    await before();
    const answered = await nc.request(subject, request.body as Buffer, { timeout: HOP_TIMEOUT_MS });
    return reply.header('content-type', 'application/json').send(Buffer.from(answered.data));
  });
  await app.listen({ port, host: '127.0.0.1' });
  return () => app.close();
}

/** Counts one request against a window, as the gateway's script does for its three. */
const WINDOW_SCRIPT = `local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n`;
/** Takes one unit of a budget when there is room, as step 6 counted in Redis would. */
const BUDGET_SCRIPT = `local left = tonumber(redis.call('GET', KEYS[1]) or ARGV[1]) if left <= 0 then return 0 end redis.call('SET', KEYS[1], left - 1) return 1`;
/** Takes a slot when fewer than ARGV[1] are taken. */
const SLOT_SCRIPT = `local n = redis.call('INCR', KEYS[1]) if n > tonumber(ARGV[1]) then redis.call('DECR', KEYS[1]) return 0 end return 1`;

function script(redis: Redis, lua: string): (key: string, arg: number) => Promise<number> {
  redis.defineCommand('anchorScript', { numberOfKeys: 1, lua });
  return (redis as unknown as { anchorScript(key: string, arg: number): Promise<number> }).anchorScript.bind(redis);
}

const roleMains: Record<string, (args: string[]) => Promise<void>> = {
  async '--echo'([port]) {
    const app = Fastify({ logger: false });
    app.post('/echo', async (request) => request.body);
    await app.listen({ port: Number(port), host: '127.0.0.1' });
    readyUntilTerm(() => app.close());
  },

  async '--front'([port, natsUrl]) {
    const nc = await connect({ servers: natsUrl });
    const close = await front(Number(port), nc, 'anchor.a');
    readyUntilTerm(() => close().then(() => nc.drain()));
  },

  /** A: asks B, writes the body as a row by group commit, then answers with B's answer. */
  async '--hop-a'([natsUrl, databaseUrl]) {
    const nc = await connect({ servers: natsUrl });
    const pool = new Pool({ connectionString: databaseUrl, max: 4 });
    const rows = new GroupInsert(pool);
    answer(nc, 'anchor.a', async (data) => {
      const answered = await nc.request('anchor.b', data, { timeout: HOP_TIMEOUT_MS });
      await rows.insert(Buffer.from(data).toString('utf8'));
      return answered.data;
    });
    readyUntilTerm(() => nc.drain().then(() => pool.end()));
  },

  /** B: a small JSON object. */
  async '--hop-b'([natsUrl]) {
    const nc = await connect({ servers: natsUrl });
    const answered = encoder.encode(JSON.stringify({ result: 'refund', confidence: 0.92, action: 'approve' }));
    answer(nc, 'anchor.b', () => answered);
    readyUntilTerm(() => nc.drain());
  },

  async '--shape-front'([port, natsUrl, redisUrl]) {
    const nc = await connect({ servers: natsUrl });
    const redis = new Redis(redisUrl!, { enableAutoPipelining: true });
    const windows = script(redis, WINDOW_SCRIPT);
    const close = await front(Number(port), nc, 'shape.r', () => windows(`anchor:${process.pid}:window:${Math.floor(Date.now() / 60_000)}`, 60_000));
    readyUntilTerm(() =>
      close()
        .then(() => nc.drain())
        .then(() => redis.quit()),
    );
  },

  /** R: a budget in Redis, E over NATS, then the row and the event together, then the answer. */
  async '--shape-r'([natsUrl, redisUrl, databaseUrl]) {
    const nc = await connect({ servers: natsUrl });
    const manager = await nc.jetstreamManager();
    await manager.streams.add({ name: 'ANCHOR_EVENTS', subjects: ['anchor.events.>'], retention: RetentionPolicy.Limits, storage: StorageType.File });
    const jetstream = nc.jetstream();
    const redis = new Redis(redisUrl!, { enableAutoPipelining: true });
    const budget = script(redis, BUDGET_SCRIPT);
    const pool = new Pool({ connectionString: databaseUrl, max: 4 });
    const rows = new GroupInsert(pool);
    answer(nc, 'shape.r', async (data) => {
      if ((await budget(`anchor:${process.pid}:budget`, 1e12)) !== 1) throw new Error('no budget');
      const answered = await nc.request('shape.e', data, { timeout: HOP_TIMEOUT_MS });
      await Promise.all([rows.insert(Buffer.from(data).toString('utf8')), jetstream.publish('anchor.events.settled', encoder.encode('{"billable":true}'))]);
      return answered.data;
    });
    readyUntilTerm(() =>
      nc
        .drain()
        .then(() => pool.end())
        .then(() => redis.quit()),
    );
  },

  /** E: a slot in Redis, the provider over HTTP, the slot back, the provider's answer. */
  async '--shape-e'([natsUrl, redisUrl, providerPort]) {
    const nc = await connect({ servers: natsUrl });
    const redis = new Redis(redisUrl!, { enableAutoPipelining: true });
    const slot = script(redis, SLOT_SCRIPT);
    const slotKey = `anchor:${process.pid}:slots`;
    // The same client and settings as engine-proxy's provider calls.
    const agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 });
    answer(nc, 'shape.e', async (data) => {
      if ((await slot(slotKey, 1_000)) !== 1) throw new Error('no slot');
      try {
        const response = await agent.request({
          origin: `http://127.0.0.1:${providerPort}`,
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(data),
        });
        const completion = (await response.body.json()) as { choices: Array<{ message: { content: string } }> };
        return encoder.encode(completion.choices[0]!.message.content);
      } finally {
        void redis.decr(slotKey);
      }
    });
    readyUntilTerm(() => nc.drain().then(() => redis.quit()));
  },

  /** Stands for the provider: a fixed chat completion. */
  async '--provider'([port]) {
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
    await app.listen({ port: Number(port), host: '127.0.0.1' });
    readyUntilTerm(() => app.close());
  },
};

/** One INSERT when none is in flight; rows that arrive meanwhile go together in the next. */
class GroupInsert {
  private waiting: Array<{ id: string; body: string; done: () => void; failed: (error: unknown) => void }> = [];
  private flushing = false;
  private next = 0;

  constructor(private readonly pool: Pool) {}

  insert(body: string): Promise<void> {
    const id = `${process.pid}-${this.next++}`;
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

const [role, ...roleArgs] = process.argv.slice(2);
const roleMain = role === undefined ? undefined : roleMains[role];
(roleMain ? roleMain(roleArgs) : main()).catch((error: unknown) => {
  say(`bench:anchor${role ? ` ${role}` : ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});

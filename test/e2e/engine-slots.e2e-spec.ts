import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { AnswerQuestionsRequest, SUBJECTS } from '@ds/contracts';
import { sharedKeyFingerprint, slotSetKey } from '@ds/engine';
import type { EngineSimulator } from '@ds/engine-simulator';
import { call, uniqueMarker } from './support/api';
import { builtEngineSimulator, dropDatabase, freePort, freshDatabase, NatsServer, ROOT, startNats, waitFor } from './support/cluster';
import { RpcResult, ServiceRpc } from './support/engine-rpc';

const ENGINE_PROXY = join(ROOT, 'dist', 'apps', 'engine-proxy', 'src', 'main.js');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SHARED_KEY = 'sim-shared-key';
/** One key for both replicas, as every replica of a deployment reads the same Secret. */
const CREDENTIALS_KEY = `e2e:${randomBytes(32).toString('base64')}`;

interface Replica {
  opsPort: number;
  logFile: string;
  process: ChildProcess;
}

/**
 * Two engine-proxy replicas on one NATS, one database and one Redis, with ENGINE_SHARED_SLOTS=1: the slot
 * is counted across both, so a call on either replica waits for the one slot, and one that gets none
 * within its timeoutMs answers 503 ENGINE_RATE_LIMITED. Calls go straight to the replicas over NATS, as
 * the decision runner sends them; NATS hands each to one replica of the queue group at random.
 */
describe('shared-key slots across two engine-proxy replicas', () => {
  let nats: NatsServer;
  let simulator: EngineSimulator;
  let databaseUrl: string;
  let replicas: Replica[] = [];
  let rpc: ServiceRpc;
  let redis: Redis;
  let slotKey: string;

  beforeAll(async () => {
    const { startEngineSimulator } = builtEngineSimulator();
    [databaseUrl, nats, simulator] = await Promise.all([freshDatabase('ds_e2e_slots'), startNats(), startEngineSimulator({ port: 0 })]);
    slotKey = slotSetKey(sharedKeyFingerprint('openai', `${simulator.url}/v1`, SHARED_KEY));
    redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    replicas = await Promise.all([0, 1].map((i) => startReplica(i)));
    await Promise.all(
      replicas.map((replica) => waitFor(async () => (await call('GET', '/readyz', {}, ops(replica))).status === 200, 60_000, 'engine-proxy replica')),
    );
    rpc = new ServiceRpc(nats.url);
  }, 120_000);

  afterAll(async () => {
    await rpc?.close();
    await Promise.all(replicas.map((replica) => stop(replica.process)));
    await redis?.del(slotKey).catch(() => undefined);
    redis?.disconnect();
    await nats?.stop();
    await simulator?.close();
    if (databaseUrl) await dropDatabase(databaseUrl);
  });

  async function startReplica(index: number, overrides: NodeJS.ProcessEnv = {}): Promise<Replica> {
    const opsPort = await freePort();
    const logDir = join(ROOT, '.data', 'e2e');
    mkdirSync(logDir, { recursive: true });
    const logFile = join(logDir, `slots-engine-proxy-${index}.log`);
    // Gone before the replica starts, so that nothing read from it can come from an earlier run.
    rmSync(logFile, { force: true });
    const log = createWriteStream(logFile);
    const child = spawn(process.execPath, [ENGINE_PROXY], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        DATABASE_POOL_SIZE: '2',
        NATS_URL: nats.url,
        OPS_PORT: String(opsPort),
        LOG_LEVEL: 'info',
        REDIS_URL,
        ENGINE_CREDENTIALS_KEY: CREDENTIALS_KEY,
        ENGINE_SHARED_SLOTS: '1',
        ENGINE_DEFAULT: 'llm',
        ENGINE_LLM_PROVIDER: 'openai',
        ENGINE_LLM_BASE_URL: `${simulator.url}/v1`,
        ENGINE_LLM_API_KEY: SHARED_KEY,
        ENGINE_LLM_MODEL: 'sim-standard',
        // No checkpoint engine here: a decision pinned to it has no usable engine.
        ENGINE_CHECKPOINT_BASE_URL: '',
        ENGINE_CHECKPOINT_MODEL: '',
        ...overrides,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    return { opsPort, logFile, process: child };
  }

  function stop(child: ChildProcess): Promise<void> {
    return new Promise((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  }

  const ops = (replica: Replica) => `http://127.0.0.1:${replica.opsPort}`;

  function question(marker: string, timeoutMs: number, workspaceId = 'ws-shared'): AnswerQuestionsRequest {
    return questionFor(marker, timeoutMs, workspaceId);
  }

  function questionFor(marker: string, timeoutMs: number, workspaceId: string): AnswerQuestionsRequest {
    return {
      workspaceId,
      engine: null,
      model: null,
      timeoutMs,
      context: marker,
      state: { message: 'hello' },
      questions: [{ key: 'fraud', kind: 'probability', instructions: 'Fraud?', outcomes: ['yes', 'no'], guide: 'signs of fraud' }],
    };
  }

  async function answer(marker: string, timeoutMs: number, workspaceId?: string): Promise<RpcResult<any> & { ms: number }> {
    const started = Date.now();
    const result = await rpc.call(SUBJECTS.engine.answer, question(marker, timeoutMs, workspaceId));
    return { ...result, ms: Date.now() - started };
  }

  async function script(marker: string, steps: unknown[], repeat = false): Promise<void> {
    expect((await call('POST', '/_sim/scripts', { body: { match: marker, steps, repeat } }, simulator.url)).status).toBe(201);
  }

  async function arrivals(marker: string): Promise<number[]> {
    return (await call('GET', `/_sim/requests?match=${marker}`, {}, simulator.url)).body.data.map((r: { at: number }) => r.at);
  }

  /** How many answer requests each replica has handled with this outcome, from its own /metrics. */
  async function handled(outcome: string): Promise<number[]> {
    return Promise.all(
      replicas.map(async (replica) => {
        const text = (await call('GET', '/metrics', {}, ops(replica))).text;
        const line = text.split('\n').find((l) => l.startsWith(`decision_service_rpc_handled_total{subject="${SUBJECTS.engine.answer}",outcome="${outcome}"`));
        return line ? Number(line.split(' ').pop()) : 0;
      }),
    );
  }

  it('reports Redis in readiness and says where slots are counted', async () => {
    for (const replica of replicas) {
      expect((await call('GET', '/readyz', {}, ops(replica))).body).toMatchObject({ status: 'ok', checks: { nats: true, database: true, redis: true } });
      expect(readFileSync(replica.logFile, 'utf8')).toContain('shared-key slots: counted in Redis across every engine-proxy replica');
    }
  });

  it('refuses a call on either replica with 503 ENGINE_RATE_LIMITED while the one slot is held elsewhere', async () => {
    const holder = uniqueMarker();
    const waiter = uniqueMarker();
    await script(holder, [{ delayMs: 5_000 }]);
    const held = answer(holder, 9_000);
    await waitFor(async () => (await arrivals(holder)).length === 1, 5_000, 'the call holding the slot');
    const heldSince = Date.now();

    const before = await handled('ENGINE_RATE_LIMITED');
    const refusals: Array<RpcResult<any> & { ms: number }> = [];
    // NATS picks a replica at random per call: keep sending until both replicas have refused one, while
    // the slot is surely still held.
    for (let round = 0; round < 6 && Date.now() - heldSince < 3_500; round++) {
      refusals.push(...(await Promise.all(Array.from({ length: 4 }, () => answer(waiter, 500)))));
      const now = await handled('ENGINE_RATE_LIMITED');
      if (now.every((count, i) => count > before[i]!)) break;
    }
    const after = await handled('ENGINE_RATE_LIMITED');
    expect(after.map((count, i) => count > before[i]!)).toEqual([true, true]);
    for (const refusal of refusals) {
      expect(refusal).toMatchObject({ ok: false, error: { code: 'ENGINE_RATE_LIMITED', status: 503 } });
      // It waited for a slot for its whole timeoutMs before giving up.
      expect(refusal.ms).toBeGreaterThanOrEqual(450);
    }
    expect(await arrivals(waiter)).toEqual([]);

    expect(await held).toMatchObject({ ok: true, value: { engine: 'llm' } });
    // The slot came back with the answer: the next call gets it at once.
    const next = await answer(waiter, 2_000);
    expect(next.ok).toBe(true);
    expect(await redis.zcard(slotKey)).toBe(0);
  }, 30_000);

  it('lets concurrent calls through one at a time, whichever replica takes them', async () => {
    const marker = uniqueMarker();
    const delayMs = 300;
    await script(marker, [{ delayMs }], true);
    const okBefore = await handled('ok');
    let rounds = 0;
    do {
      rounds++;
      const started = (await arrivals(marker)).length;
      const results = await Promise.all(Array.from({ length: 5 }, () => answer(marker, 10_000)));
      expect(results.every((result) => result.ok)).toBe(true);
      const times = (await arrivals(marker)).slice(started).sort((a, b) => a - b);
      expect(times).toHaveLength(5);
      // Each call reached the provider only after the one before had its answer and gave the slot back.
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(delayMs);
    } while ((await handled('ok')).some((count, i) => count === okBefore[i]) && rounds < 4);
    const okAfter = await handled('ok');
    expect(okAfter.map((count, i) => count > okBefore[i]!)).toEqual([true, true]);
  }, 40_000);

  it('frees the slot of a replica that died holding it once its lease expires', async () => {
    // A lease as a crashed replica leaves it: nobody will release it, it only expires (Redis time).
    const [seconds, micros] = await redis.time();
    await redis.zadd(slotKey, Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + 1_500, 'lease-of-a-dead-replica');
    const refused = await answer(uniqueMarker(), 600);
    expect(refused).toMatchObject({ ok: false, error: { code: 'ENGINE_RATE_LIMITED' } });
    const waited = await answer(uniqueMarker(), 5_000);
    expect(waited.ok).toBe(true);
    expect(waited.ms).toBeGreaterThanOrEqual(600);
    expect(await redis.zscore(slotKey, 'lease-of-a-dead-replica')).toBeNull();
  });

  it('does not count calls on a workspace’s own key against the shared slots', async () => {
    const holder = uniqueMarker();
    await script(holder, [{ delayMs: 2_500 }]);
    const held = answer(holder, 6_000);
    await waitFor(async () => (await arrivals(holder)).length === 1, 5_000, 'the call holding the slot');

    const workspaceId = `ws-own-${uniqueMarker()}`;
    expect(await rpc.ok(SUBJECTS.engine.setProviderKey, { workspaceId, provider: 'openai', apiKey: 'sk-own-slot-free' })).toEqual({
      provider: 'openai',
      last4: 'free',
    });
    const own = uniqueMarker();
    const results = await Promise.all(Array.from({ length: 4 }, () => answer(own, 1_500, workspaceId)));
    expect(results.map((result) => result.ok)).toEqual([true, true, true, true]);
    const sent = (await call('GET', `/_sim/requests?match=${own}`, {}, simulator.url)).body.data;
    expect(sent.map((r: { headers: Record<string, string> }) => r.headers.authorization)).toEqual(Array(4).fill('Bearer sk-own-slot-free'));
    expect((await held).ok).toBe(true);
  }, 20_000);

  it('answers 424 ENGINE_NOT_CONFIGURED for an engine this service has not configured', async () => {
    const result = await rpc.call(SUBJECTS.engine.answer, { ...question(uniqueMarker(), 2_000), engine: 'checkpoint' });
    expect(result).toMatchObject({ ok: false, error: { code: 'ENGINE_NOT_CONFIGURED', status: 424 } });
  });

  it('refuses at once with 503 ENGINE_RATE_LIMITED and when to retry once the queue for a slot is full', async () => {
    // A replica of its own on a NATS of its own, so that every call below reaches it, with room for one waiter.
    const ownNats = await startNats();
    const bounded = await startReplica(3, { NATS_URL: ownNats.url, ENGINE_SLOT_QUEUE: '1' });
    const ownRpc = new ServiceRpc(ownNats.url);
    try {
      await waitFor(async () => (await call('GET', '/readyz', {}, ops(bounded))).status === 200, 60_000, 'the replica with a queue of one');
      const holder = uniqueMarker();
      await script(holder, [{ delayMs: 2_000 }]);
      const held = ownRpc.call(SUBJECTS.engine.answer, questionFor(holder, 8_000, 'ws-bounded'));
      await waitFor(async () => (await arrivals(holder)).length === 1, 5_000, 'the call holding the slot');
      const queued = ownRpc.call(SUBJECTS.engine.answer, questionFor(uniqueMarker(), 8_000, 'ws-bounded'));
      // Time for the second call to reach the replica and find the slot held.
      await new Promise((resolve) => setTimeout(resolve, 300));

      const refused = uniqueMarker();
      const started = Date.now();
      const result = await ownRpc.call(SUBJECTS.engine.answer, questionFor(refused, 8_000, 'ws-bounded'));
      const ms = Date.now() - started;
      expect(result).toMatchObject({ ok: false, error: { code: 'ENGINE_RATE_LIMITED', status: 503, details: { retryAfter: expect.any(Number) } } });
      // Not a wait to its 8 s deadline behind the slot: the answer came while the slot was still held.
      expect(ms).toBeLessThan(1_500);
      expect(await arrivals(refused)).toEqual([]);
      const metrics = (await call('GET', '/metrics', {}, ops(bounded))).text;
      expect(metrics).toMatch(/decision_service_engine_slot_wait_seconds_count\{[^}]*outcome="queue_full"[^}]*\} 1/);

      expect(await held).toMatchObject({ ok: true });
      expect(await queued).toMatchObject({ ok: true });
    } finally {
      await ownRpc.close();
      await stop(bounded.process);
      await ownNats.stop();
    }
  }, 90_000);

  it('counts in its own process while Redis cannot be reached, and says so in readiness', async () => {
    // A replica of its own on a NATS of its own, so that every call below reaches it; Redis is a closed port.
    const lonelyNats = await startNats();
    const closedPort = await freePort();
    const lonely = await startReplica(2, { NATS_URL: lonelyNats.url, REDIS_URL: `redis://127.0.0.1:${closedPort}` });
    const lonelyRpc = new ServiceRpc(lonelyNats.url);
    try {
      // It starts and answers its probes, unready for as long as Redis is away.
      await waitFor(async () => (await call('GET', '/readyz', {}, ops(lonely))).status === 503, 60_000, 'the replica without Redis');
      const ready = await call('GET', '/readyz', {}, ops(lonely));
      expect(ready).toMatchObject({ status: 503, body: { checks: { nats: true, database: true, redis: false } } });

      const holder = uniqueMarker();
      await script(holder, [{ delayMs: 1_500 }]);
      const held = lonelyRpc.call(SUBJECTS.engine.answer, questionFor(holder, 5_000, 'ws-lonely'));
      await waitFor(async () => (await arrivals(holder)).length === 1, 5_000, 'the call holding the slot');
      // The one slot is still counted, in this process.
      const refused = await lonelyRpc.call(SUBJECTS.engine.answer, questionFor(uniqueMarker(), 500, 'ws-lonely'));
      expect(refused).toMatchObject({ ok: false, error: { code: 'ENGINE_RATE_LIMITED', status: 503 } });
      expect(await held).toMatchObject({ ok: true });
      expect((await lonelyRpc.call(SUBJECTS.engine.answer, questionFor(uniqueMarker(), 2_000, 'ws-lonely'))).ok).toBe(true);
      expect(readFileSync(lonely.logFile, 'utf8')).toContain('Redis for shared-key slots is unavailable; counting slots in this process until it is back');
    } finally {
      await lonelyRpc.close();
      await stop(lonely.process);
      await lonelyNats.stop();
    }
  }, 90_000);
});

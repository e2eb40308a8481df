import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createServer, Server, Socket } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { createLogger } from '@ds/platform';
import { WORKSPACE_ATTEMPTS_PER_MINUTE, workspaceWindowKey } from '@ds/webhooks';
import { DeliveryWindows, WindowSlot } from './delivery-windows';
import { RedisWindow } from './redis-window';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** One delivery replica's windows: its own Redis connection, fallback counter and log lines. */
interface Replica {
  windows: DeliveryWindows;
  redis: RedisWindow;
  fallbacks: Counter;
  logLines: Array<{ level: string; msg: string }>;
}

const replicas: Replica[] = [];
const keys: string[] = [];
let admin: Redis;

async function replica(url = REDIS_URL, limit = WORKSPACE_ATTEMPTS_PER_MINUTE, windowMs = 60_000): Promise<Replica> {
  const logLines: Replica['logLines'] = [];
  const logger = createLogger('delivery', 'info', { write: (line: string) => void logLines.push(JSON.parse(line) as { level: string; msg: string }) });
  const redis = new RedisWindow(url, logger);
  const fallbacks = new Counter({ name: 'fallbacks_total', help: 'fallbacks', registers: [new Registry()] });
  const windows = new DeliveryWindows(redis, fallbacks, logger, limit, windowMs);
  await windows.connect();
  const started = { windows, redis, fallbacks, logLines };
  replicas.push(started);
  return started;
}

function workspace(): string {
  const id = `ws_${randomBytes(10).toString('hex')}`;
  keys.push(workspaceWindowKey(id));
  return id;
}

async function fallbackCount(replica: Replica): Promise<number> {
  return (await replica.fallbacks.get()).values[0]?.value ?? 0;
}

function counted(slots: WindowSlot[]): number {
  return slots.filter((slot) => 'startedAt' in slot).length;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(() => {
  admin = new Redis(REDIS_URL);
});

afterEach(async () => {
  await Promise.all(replicas.splice(0).map((r) => r.windows.close()));
  if (keys.length > 0) await admin.del(...keys.splice(0));
});

afterAll(async () => {
  await admin.quit();
});

describe('delivery windows shared through Redis', () => {
  it('let two replicas count 600 attempts of one workspace together, and make the 601st wait on either', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const workspaceId = workspace();
    const windowA = a.windows.forWorkspace(workspaceId);
    const windowB = b.windows.forWorkspace(workspaceId);
    // Both replicas at once, so that the takes interleave in Redis.
    const slots = await Promise.all(Array.from({ length: 600 }, (_, i) => (i % 2 === 0 ? windowA : windowB).take()));
    expect(counted(slots)).toBe(600);
    expect(await admin.zcard(workspaceWindowKey(workspaceId))).toBe(600);
    const [nextA, nextB] = [await windowA.take(), await windowB.take()];
    expect(nextA).toEqual({ waitMs: expect.any(Number) });
    expect(nextB).toEqual({ waitMs: expect.any(Number) });
    expect((nextA as { waitMs: number }).waitMs).toBeGreaterThan(0);
    expect(await admin.zcard(workspaceWindowKey(workspaceId))).toBe(600);
    // Each replica now knows, without asking, that the window is full for a while.
    expect(windowA.waitAt(Date.now())).toBeGreaterThan(0);
    expect(windowA.idle(Date.now())).toBe(false);
    expect(await fallbackCount(a)).toBe(0);
    expect(await fallbackCount(b)).toBe(0);
  });

  it('keep workspaces apart', async () => {
    const r = await replica(REDIS_URL, 3);
    const [busy, quiet] = [workspace(), workspace()];
    const busyWindow = r.windows.forWorkspace(busy);
    for (let i = 0; i < 3; i++) expect(await busyWindow.take()).toHaveProperty('startedAt');
    expect(await busyWindow.take()).toHaveProperty('waitMs');
    expect(await r.windows.forWorkspace(quiet).take()).toHaveProperty('startedAt');
    expect(await admin.zcard(workspaceWindowKey(quiet))).toBe(1);
  });

  it('record the moment Redis counted an attempt, and answer a full window with the time until its oldest start leaves', async () => {
    const r = await replica();
    const workspaceId = workspace();
    const first = await r.redis.take(workspaceId, 3, 60_000);
    await r.redis.take(workspaceId, 3, 60_000);
    await r.redis.take(workspaceId, 3, 60_000);
    const full = await r.redis.take(workspaceId, 3, 60_000);
    if (!first.counted || full.counted) throw new Error(`expected a counted start, then a full window: ${JSON.stringify([first, full])}`);
    const [, oldestScore] = await admin.zrange(workspaceWindowKey(workspaceId), 0, 0, 'WITHSCORES');
    expect(Number(oldestScore)).toBe(first.at);
    expect(full.waitMs).toBe(first.at + 60_000 - full.at);

    const window = r.windows.forWorkspace(workspace());
    const slot = await window.take();
    const [, score] = await admin.zrange(workspaceWindowKey(window.workspaceId), 0, 0, 'WITHSCORES');
    expect(slot).toEqual({ startedAt: Number(score) });
  });

  it('leave nothing behind once a workspace is idle for a window', async () => {
    const r = await replica();
    const workspaceId = workspace();
    const key = workspaceWindowKey(workspaceId);
    expect((await r.redis.take(workspaceId, 2, 300)).counted).toBe(true);
    expect((await r.redis.take(workspaceId, 2, 300)).counted).toBe(true);
    // A full window adds nothing, so it keeps the expiry of its newest start.
    expect((await r.redis.take(workspaceId, 2, 300)).counted).toBe(false);
    const ttl = await admin.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    await eventually(async () => (await admin.exists(key)) === 0, 'the idle window’s expiry');
  });
});

describe('delivery windows while Redis is away', () => {
  it('count in the replica’s own window when Redis is unreachable, warning once', async () => {
    const closedPort = await new Promise<number>((resolvePort) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolvePort(port));
      });
    });
    const r = await replica(`redis://127.0.0.1:${closedPort}`, 2);
    const window = r.windows.forWorkspace(workspace());
    const before = Date.now();
    const slots = [await window.take(), await window.take(), await window.take()];
    expect(counted(slots)).toBe(2);
    expect((slots[0] as { startedAt: number }).startedAt).toBeGreaterThanOrEqual(before);
    expect(slots[2]).toEqual({ waitMs: expect.any(Number) });
    expect(await fallbackCount(r)).toBe(3);
    expect(r.logLines.filter((line) => line.msg.startsWith('Redis for the delivery windows is unavailable'))).toHaveLength(1);
  });

  it('stand in with the replica’s own window during an outage, remembering its starts, and go back to Redis when it answers', async () => {
    const proxy = await RedisProxy.open();
    try {
      const r = await replica(proxy.url, 3);
      const workspaceId = workspace();
      const key = workspaceWindowKey(workspaceId);
      const window = r.windows.forWorkspace(workspaceId);
      expect(counted([await window.take(), await window.take()])).toBe(2);
      expect(await admin.zcard(key)).toBe(2);

      await proxy.cut();
      // The local window holds the two starts Redis counted, so only one more fits.
      expect(await window.take()).toHaveProperty('startedAt');
      expect(await window.take()).toHaveProperty('waitMs');
      expect(await fallbackCount(r)).toBe(2);
      expect(await admin.zcard(key)).toBe(2);

      await proxy.restore();
      await eventually(async () => r.redis.available, 'the reconnection');
      expect(await window.take()).toHaveProperty('startedAt');
      expect(await admin.zcard(key)).toBe(3);
      expect(await window.take()).toHaveProperty('waitMs');
      expect(await fallbackCount(r)).toBe(2);
      expect(r.logLines.map((line) => line.msg)).toEqual(
        expect.arrayContaining([expect.stringMatching(/unavailable/), expect.stringMatching(/^Redis for the delivery windows is back/)]),
      );
    } finally {
      await proxy.close();
    }
  });
});

/** A TCP relay to the test Redis that can be cut and restored on the same port: an outage and its end. */
class RedisProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(private port: number) {}

  static async open(): Promise<RedisProxy> {
    const proxy = new RedisProxy(0);
    await proxy.restore();
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  restore(): Promise<void> {
    const target = new URL(REDIS_URL);
    const server = createServer((client) => {
      const upstream = new Socket();
      upstream.connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server = server;
    return new Promise((resolveListening, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        this.port = (server.address() as { port: number }).port;
        resolveListening();
      });
    });
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((closed) => server.close(() => closed()));
  }

  close(): Promise<void> {
    return this.cut();
  }
}

import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DELIVERY_WINDOW_MS, dropDatabase, freePort, freshDatabase, NatsServer, ROOT, startNats, waitFor } from './support/cluster';
import { DeliveryPublisher, eventually, Receiver, startReceiver, webhookMessage } from './support/deliveries';

/**
 * A delivery service of its own, on its own NATS and database, so that refusing private targets, killing the
 * process and restarting NATS disturb no other test. The tests run in order.
 */
/** The same key across restarts, as a deployment keeps it. */
const SECRETS_KEY = `own:${randomBytes(32).toString('base64')}`;

describe('a delivery service of its own', () => {
  let nats: NatsServer;
  let databaseUrl: string;
  let db: Client;
  let publisher: DeliveryPublisher;
  let service: ChildProcess | null = null;
  const receivers: Receiver[] = [];
  const logDir = join(ROOT, '.data', 'e2e');

  async function startDelivery(env: Record<string, string>, opsPort?: number): Promise<ChildProcess> {
    opsPort ??= await freePort();
    mkdirSync(logDir, { recursive: true });
    const log = createWriteStream(join(logDir, 'delivery-own.log'), { flags: 'a' });
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'apps', 'delivery', 'src', 'main.js')], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        NATS_URL: nats.url,
        OPS_PORT: String(opsPort),
        LOG_LEVEL: 'info',
        DATABASE_POOL_SIZE: '10',
        DELIVERY_SECRETS_KEY: SECRETS_KEY,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${opsPort}/readyz`)).ok, 60_000, 'the delivery service');
    return child;
  }

  function stopDelivery(signal: NodeJS.Signals): Promise<void> {
    const child = service;
    service = null;
    return stopProcess(child, signal);
  }

  function stopProcess(child: ChildProcess | null, signal: NodeJS.Signals): Promise<void> {
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((done) => {
      child.once('exit', () => done());
      child.kill(signal);
    });
  }

  async function rows(sql: string, params: unknown[] = []): Promise<any[]> {
    return (await db.query(sql, params)).rows;
  }

  beforeAll(async () => {
    [databaseUrl, nats] = await Promise.all([freshDatabase('ds_e2e_delivery'), startNats()]);
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
    publisher = await DeliveryPublisher.open(nats.url);
  }, 60_000);

  afterAll(async () => {
    await stopDelivery('SIGTERM');
    await publisher?.close();
    await Promise.all(receivers.map((r) => r.close()));
    await db?.end();
    await nats?.stop();
    if (databaseUrl) await dropDatabase(databaseUrl);
  });

  it('refuses plain http and every address that is loopback, including a name resolving to 127.0.0.1, and never connects', async () => {
    service = await startDelivery({ DELIVERY_ALLOW_PRIVATE_TARGETS: 'false', DELIVERY_RETRY_SCALE: '0.0002' });
    const target = await startReceiver();
    receivers.push(target);
    const urls = [
      `https://localhost:${target.port}/hook`,
      `https://127.0.0.1:${target.port}/hook`,
      `https://[::1]:${target.port}/hook`,
      `https://[::ffff:127.0.0.1]:${target.port}/hook`,
      `https://0.0.0.0:${target.port}/hook`,
      `http://localhost:${target.port}/hook`,
    ];
    const messages = urls.map((url) => webhookMessage('ws_ssrf', url));
    for (const message of messages) await publisher.publish(message);
    const done = await eventually(
      async () => {
        const found = await rows(`SELECT id, status FROM delivery.deliveries WHERE workspace_id = 'ws_ssrf' AND status = 'failed'`);
        return found.length === messages.length ? found : null;
      },
      30_000,
      'every refused delivery failed',
    );
    expect(done).toHaveLength(messages.length);
    const attempts = await rows(
      `SELECT d.url, a.outcome, a.error FROM delivery.delivery_attempts a JOIN delivery.deliveries d ON d.id = a.delivery_id WHERE d.workspace_id = 'ws_ssrf'`,
    );
    expect(attempts).toHaveLength(messages.length);
    for (const attempt of attempts) expect(attempt.outcome).toBe('refused');
    // The workspace reads why, never where: the addresses a name resolved to go to the service's log alone.
    for (const attempt of attempts.filter((a) => a.url.startsWith('https://'))) expect(attempt.error).toBe("refused: the destination's address is not allowed");
    expect(attempts.find((a) => a.url.startsWith('http://')).error).toMatch(/https/);
    expect(target.received).toHaveLength(0);

    // A name nobody resolves: the workspace learns only that it did not resolve.
    const unknown = webhookMessage('ws_ssrf_name', 'https://no-such-host.internal.invalid/hook');
    await publisher.publish(unknown);
    const [unresolved] = await eventually(
      async () => {
        const found = await rows(`SELECT a.outcome, a.error FROM delivery.delivery_attempts a WHERE a.delivery_id = $1 AND a.outcome <> 'interrupted'`, [
          unknown.deliveryId,
        ]);
        return found.length > 0 ? found : null;
      },
      30_000,
      'the attempt to an unknown name',
    );
    expect(unresolved).toEqual({ outcome: 'network', error: 'the name did not resolve' });
    const errors = (
      await rows(`SELECT a.error FROM delivery.delivery_attempts a JOIN delivery.deliveries d ON d.id = a.delivery_id WHERE d.workspace_id LIKE 'ws_ssrf%'`)
    ).map((row) => String(row.error));
    for (const error of errors) expect(error).not.toMatch(/127\.0\.0\.1|::1|0\.0\.0\.0|localhost|no-such-host|ENOTFOUND|EAI_/);
    // The log line follows the recorded attempt.
    const log = await eventually(
      async () => {
        const text = readFileSync(join(logDir, 'delivery-own.log'), 'utf8');
        return text.includes('no-such-host.internal.invalid') ? text : null;
      },
      10_000,
      'the unknown name in the log',
    );
    expect(log).toMatch(/"detail":"localhost resolves to [^"]*\(loopback\)/);
    expect(log).toMatch(/"detail":"[^"]*no-such-host\.internal\.invalid/);
    await stopDelivery('SIGTERM');
  }, 90_000);

  it('loses no delivery and sends none under another id when the service is killed mid-burst and NATS restarts', async () => {
    service = await startDelivery({ DELIVERY_ALLOW_PRIVATE_TARGETS: 'true', DELIVERY_RETRY_SCALE: '0.0002' });
    // Slow enough that attempts are in flight when the process dies.
    const target = await startReceiver((_r, _i, response) => setTimeout(() => response.writeHead(200).end(), 30));
    receivers.push(target);
    const messages = Array.from({ length: 300 }, (_, i) => webhookMessage(`ws_burst_${i % 3}`, target.url));
    for (const message of messages) await publisher.publish(message);
    const seen = () => new Set(target.received.map((r) => String(r.headers['service-delivery-id'])));

    await eventually(async () => seen().size >= 40, 60_000, 'the first deliveries of the burst');
    await stopDelivery('SIGKILL');
    const atKill = seen().size;
    expect(atKill).toBeLessThan(messages.length);
    service = await startDelivery({ DELIVERY_ALLOW_PRIVATE_TARGETS: 'true', DELIVERY_RETRY_SCALE: '0.0002' });
    await eventually(async () => seen().size >= atKill + 40 || seen().size === messages.length, 60_000, 'deliveries resuming after the kill');
    await nats.stop();
    await nats.start();
    await eventually(async () => seen().size === messages.length, 150_000, 'every delivery of the burst');

    const published = new Set(messages.map((m) => m.deliveryId));
    expect(seen()).toEqual(published);
    for (const request of target.received) {
      // One id per delivery everywhere it appears: the header, the Standard Webhooks id and the event's own id.
      expect(request.headers['webhook-id']).toBe(request.headers['service-delivery-id']);
      expect(JSON.parse(request.body).id).toBe(request.headers['service-delivery-id']);
    }
    const recorded = await eventually(
      async () => {
        const found = await rows(`SELECT status, count(*)::int AS n FROM delivery.deliveries WHERE workspace_id LIKE 'ws_burst_%' GROUP BY status`);
        return found.length === 1 && found[0].status === 'succeeded' ? found : null;
      },
      60_000,
      'every delivery recorded as succeeded',
    );
    expect(recorded).toEqual([{ status: 'succeeded', n: messages.length }]);
  }, 400_000);

  it('holds one workspace to 600 attempts a window across two replicas sharing Redis', async () => {
    const env = {
      DELIVERY_ALLOW_PRIVATE_TARGETS: 'true',
      DELIVERY_RETRY_SCALE: '0.0002',
      DELIVERY_WINDOW_MS: String(DELIVERY_WINDOW_MS),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    };
    // Only these two may consume: a replica left from an earlier test would count in its own process.
    await stopDelivery('SIGTERM');
    const opsPorts = [await freePort(), await freePort()];
    const replicas: ChildProcess[] = [];
    try {
      for (const opsPort of opsPorts) replicas.push(await startDelivery(env, opsPort));
      const target = await startReceiver();
      receivers.push(target);
      // A workspace of this run's own: the window lives in the machine's Redis, which other runs share.
      const workspaceId = `ws_${randomBytes(10).toString('hex')}`;
      const messages = Array.from({ length: 630 }, () => webhookMessage(workspaceId, target.url));
      await Promise.all(messages.map((message) => publisher.publish(message)));
      await eventually(
        async () => new Set(target.received.map((r) => r.headers['service-delivery-id'])).size === messages.length,
        150_000,
        'all 630 deliveries',
      );

      // Each replica alone would have let 600 through; together they still sent only 600 in the first window.
      const starts = (
        await rows(
          `SELECT a.started_at FROM delivery.delivery_attempts a JOIN delivery.deliveries d ON d.id = a.delivery_id WHERE d.workspace_id = $1 ORDER BY a.started_at`,
          [workspaceId],
        )
      ).map((row) => (row.started_at as Date).getTime());
      expect(starts).toHaveLength(630);
      for (let i = 600; i < starts.length; i++) expect(starts[i]! - starts[i - 600]!).toBeGreaterThanOrEqual(DELIVERY_WINDOW_MS);
      const arrivals = target.received.map((r) => r.at).sort((a, b) => a - b);
      expect(arrivals[600]! - arrivals[0]!).toBeGreaterThan(DELIVERY_WINDOW_MS / 2);

      for (const opsPort of opsPorts) {
        const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
        // Both replicas took part, and neither counted on its own.
        expect(Number(/^decision_service_delivery_attempts_total\{[^}]*outcome="succeeded"[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
        expect(Number(/^decision_service_delivery_window_fallbacks_total\{[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? -1)).toBe(0);
      }
    } finally {
      await Promise.all(replicas.map((replica) => stopProcess(replica, 'SIGTERM')));
    }
  }, 300_000);
});

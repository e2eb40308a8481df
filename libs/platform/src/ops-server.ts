import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { Counter } from 'prom-client';
import { Metrics } from './metrics';

export type ReadinessCheck = () => Promise<boolean>;

/** A read-only JSON document a service publishes on its ops port beside the probes (for example its route table). */
export type OpsDocument = () => unknown;

/**
 * Probes and metrics on their own port, away from the public surface: liveness says the event loop
 * answers, readiness says every dependency named in `checks` answers right now.
 */
export class OpsServer {
  private server: Server | null = null;
  private shuttingDown = false;
  private lastReady: boolean | null = null;
  private readonly readinessChanges: Counter;

  constructor(
    private readonly metrics: Metrics,
    private readonly checks: Record<string, ReadinessCheck>,
    private readonly documents: ReadonlyMap<string, OpsDocument> = new Map(),
  ) {
    // Both follow the probes: a readiness that flaps between scrapes still shows in the counter.
    this.readinessChanges = new Counter({
      name: 'decision_service_readiness_changes_total',
      help: 'Times this process turned ready or unready, as seen by its readiness checks',
      registers: [metrics.registry],
    });
    metrics.gauge('decision_service_ready', 'Whether this process is ready to take work (1) or not (0), checked when scraped', [], async () => [
      [{}, (await this.readiness()).ready ? 1 : 0],
    ]);
  }

  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : port;
  }

  /** From SIGTERM on, readiness answers 503 so load balancers stop sending work before the drain. */
  markShuttingDown(): void {
    this.shuttingDown = true;
  }

  async readiness(): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
    const results = await Promise.all(
      Object.entries(this.checks).map(async ([name, check]) => [name, await withTimeout(check(), 2_000).catch(() => false)] as const),
    );
    const checks = Object.fromEntries(results);
    const ready = !this.shuttingDown && results.every(([, ok]) => ok);
    if (this.lastReady !== null && this.lastReady !== ready) this.readinessChanges.inc();
    this.lastReady = ready;
    return { ready, checks };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // split always returns at least one part: the path before any query.
    const [path = ''] = (req.url ?? '/').split('?');
    if (req.method !== 'GET') return send(res, 405, { status: 'method not allowed' });
    if (path === '/livez') return send(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      const { ready, checks } = await this.readiness();
      return send(res, ready ? 200 : 503, { status: ready ? 'ok' : this.shuttingDown ? 'shutting_down' : 'unavailable', checks });
    }
    if (path === '/metrics') {
      res.writeHead(200, { 'content-type': this.metrics.registry.contentType });
      res.end(await this.metrics.registry.metrics());
      return;
    }
    const document = this.documents.get(path);
    if (document) return send(res, 200, document());
    send(res, 404, { status: 'not found' });
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    timer.unref();
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
    );
  });
}

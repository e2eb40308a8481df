import { ClientNats, NatsRecordBuilder, ServerNats } from '@nestjs/microservices';
import { NatsConnection, connect, headers as natsHeaders } from 'nats';
import { lastValueFrom, timeout as rxTimeout } from 'rxjs';
import { REQUEST_ID_HEADER, ServiceError, isWireError } from '@ds/contracts';
import { ConfigError, NatsAuth, redact } from './config';
import { Logger } from './logger';
import { Metrics } from './metrics';
import { currentRequestId, requestIdOrNew, runWithRequestContext } from './request-context';

const NO_NATS_AUTH: NatsAuth = { user: null, password: null, tls: null };

/**
 * The process's one NATS connection. It reconnects forever: a NATS outage makes the service unready,
 * never dead, and it recovers on its own when NATS is back.
 */
export class NatsLink {
  private connectedNow = true;

  private constructor(
    readonly connection: NatsConnection,
    private readonly logger: Logger,
  ) {
    void this.watchStatus();
  }

  static async open(url: string, name: string, logger: Logger, auth: NatsAuth = NO_NATS_AUTH): Promise<NatsLink> {
    try {
      const connection = await connect({
        servers: url.split(',').map((server) => server.trim()),
        name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        pingInterval: 5_000,
        maxPingOut: 2,
        timeout: 3_000,
        ...(auth.user !== null && auth.password !== null ? { user: auth.user, pass: auth.password } : {}),
        ...(auth.tls
          ? { tls: { ...(auth.tls.caFile ? { caFile: auth.tls.caFile } : {}), ...(auth.tls.certFile && auth.tls.keyFile ? { certFile: auth.tls.certFile, keyFile: auth.tls.keyFile } : {}) } }
          : {}),
      });
      return new NatsLink(connection, logger);
    } catch (error) {
      throw new ConfigError(`cannot reach NATS at ${redact(url)} (${describe(error)}); set NATS_URL to a running NATS server`);
    }
  }

  get connected(): boolean {
    return this.connectedNow && !this.connection.isClosed();
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.connection.status()) {
      if (status.type === 'disconnect') {
        this.connectedNow = false;
        this.logger.warn({ server: status.data }, 'lost the NATS connection; reconnecting');
      } else if (status.type === 'reconnect') {
        this.connectedNow = true;
        this.logger.info({ server: status.data }, 'NATS connection restored');
      }
    }
  }

  async close(): Promise<void> {
    if (this.connection.isClosed()) return;
    await this.connection.drain().catch(() => this.connection.close());
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return (error as { code?: string }).code ?? error.message;
  return String(error);
}

/**
 * Nest's NATS server on the process's shared connection. It runs every handler inside the caller's
 * request context, and counts a request as in flight from its start until its reply is published, so
 * that a shutdown can stop taking requests and still answer every one it took.
 */
export class SharedConnectionNatsServer extends ServerNats {
  private readonly inFlight = new Set<object>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly link: NatsLink,
    queue: string,
  ) {
    super({ queue });
    this.setOnProcessingStartHook((_transport, context, done) => {
      const natsHeadersIn = (context as unknown as { getHeaders(): { get(k: string): string } | undefined }).getHeaders();
      const requestId = natsHeadersIn?.get(REQUEST_ID_HEADER) || requestIdOrNew();
      this.inFlight.add(context as object);
      return runWithRequestContext({ requestId }, done);
    });
    // Called when the reply is published (once more for a separate end-of-stream packet: deleting twice is harmless).
    this.setOnProcessingEndHook((_transport, context) => {
      this.inFlight.delete(context as object);
      if (this.inFlight.size === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
    });
  }

  override createNatsClient(): Promise<NatsConnection> {
    return Promise.resolve(this.link.connection);
  }

  /** Stop receiving, then wait (up to graceMs) until every request already taken has been answered. */
  async drain(graceMs: number): Promise<void> {
    const subscriptions = (this as unknown as { subscriptions: Array<{ drain(): Promise<void> }> }).subscriptions;
    await Promise.all(subscriptions.map((subscription) => subscription.drain().catch(() => undefined)));
    // Messages handed over by the drain are still being decoded; let them reach the start hook.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.inFlight.size === 0) return;
    await Promise.race([
      new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
      new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref()),
    ]);
  }

  override async close(): Promise<void> {
    // The shared connection is closed by the bootstrap after every user of it has finished.
  }
}

class SharedConnectionNatsClient extends ClientNats {
  constructor(private readonly link: NatsLink) {
    super({});
  }

  override createClient(): Promise<NatsConnection> {
    return Promise.resolve(this.link.connection);
  }

  override async close(): Promise<void> {
    // Owned by the NatsLink.
  }
}

export interface CallOptions {
  timeoutMs?: number;
  /** The edge passes its request id explicitly; services inherit the one their own handler received. */
  requestId?: string;
}

/**
 * Request/reply to another service. Sends the current request id in a NATS header and turns a failing
 * handler's answer back into the ServiceError it threw, so errors keep their public code end to end.
 */
export class RpcClient {
  private readonly client: SharedConnectionNatsClient;

  constructor(
    link: NatsLink,
    private readonly metrics: Metrics,
    private readonly defaultTimeoutMs = 10_000,
  ) {
    this.client = new SharedConnectionNatsClient(link);
  }

  async call<TReply>(subject: string, payload: unknown, options: CallOptions = {}): Promise<TReply> {
    const hdrs = natsHeaders();
    hdrs.set(REQUEST_ID_HEADER, options.requestId ?? currentRequestId() ?? requestIdOrNew());
    const record = new NatsRecordBuilder(payload).setHeaders(hdrs).build();
    const started = process.hrtime.bigint();
    let outcome = 'ok';
    try {
      return await lastValueFrom(this.client.send<TReply>(subject, record).pipe(rxTimeout(options.timeoutMs ?? this.defaultTimeoutMs)));
    } catch (error) {
      const mapped = toServiceError(error, subject);
      outcome = mapped.code;
      throw mapped;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.rpcCalls.inc({ subject, outcome });
      this.metrics.rpcCallDuration.observe({ subject, outcome }, seconds);
    }
  }
}

function toServiceError(error: unknown, subject: string): ServiceError {
  if (error instanceof ServiceError) return error;
  if (isWireError(error)) return ServiceError.fromWire(error);
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TimeoutError') return new ServiceError('INTERNAL_ERROR', `no answer from ${subject} in time`);
  if (name === 'EmptyResponseException') return new ServiceError('INTERNAL_ERROR', `no service is answering ${subject}`);
  return new ServiceError('INTERNAL_ERROR', `request to ${subject} failed`);
}

import { ClientNats, NatsContext, NatsRecordBuilder, ReadPacket, ServerNats, WritePacket } from '@nestjs/microservices';
import { Msg, MsgHdrs, NatsConnection, connect, headers as natsHeaders } from 'nats';
import { Subject, lastValueFrom, race, take, mergeMap, throwError, timeout as rxTimeout } from 'rxjs';
import { DEADLINE_HEADER, REQUEST_ID_HEADER, ServiceError, isWireError } from '@ds/contracts';
import { ConfigError, NatsAuth, redact } from './config';
import { Logger } from './logger';
import { Metrics } from './metrics';
import { currentDeadline, currentRequestId, requestIdOrNew, runWithRequestContext } from './request-context';

/** NATS's own default, used until the server has told its limit. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

const NO_NATS_AUTH: NatsAuth = { user: null, password: null, tls: null };

/**
 * The process's one NATS connection. It reconnects forever: a NATS outage makes the service unready,
 * never dead, and it recovers on its own when NATS is back.
 */
export class NatsLink {
  private connectedNow = true;
  /** Emits each time the connection drops: calls waiting for an answer then have an unknown outcome. */
  readonly disconnects = new Subject<void>();

  private constructor(
    readonly connection: NatsConnection,
    readonly logger: Logger,
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

  /** The largest message (headers and data) the server accepts. */
  get maxPayload(): number {
    return this.connection.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.connection.status()) {
      if (status.type === 'disconnect') {
        this.connectedNow = false;
        this.logger.warn({ server: status.data }, 'lost the NATS connection; reconnecting');
        this.disconnects.next();
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
 * request context (request id and deadline), drops a request whose caller has already stopped waiting,
 * and counts a request as in flight from its start until its reply is published, so that a shutdown can
 * stop taking requests and still answer every one it took. An answer NATS cannot carry becomes an error
 * answer: publishing it would throw outside any handler and end the process.
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
      const natsContext = context as unknown as NatsContext;
      const natsHeadersIn = natsContext.getHeaders() as MsgHdrs | undefined;
      const requestId = natsHeadersIn?.get(REQUEST_ID_HEADER) || requestIdOrNew();
      const deadline = parseDeadline(natsHeadersIn?.get(DEADLINE_HEADER));
      if (deadline !== undefined && Date.now() >= deadline) {
        runWithRequestContext({ requestId }, () =>
          this.link.logger.warn({ subject: natsContext.getSubject(), late_ms: Date.now() - deadline }, 'dropped a request whose caller had already stopped waiting'),
        );
        return undefined;
      }
      this.inFlight.add(context as object);
      return runWithRequestContext({ requestId, deadline }, done);
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

  override getPublisher(natsMsg: Msg, id: string, ctx: NatsContext): (response: unknown) => void {
    if (!natsMsg.reply) return () => undefined;
    return (response: unknown) => {
      const outgoing = this.serializeAnswer({ ...(response as WritePacket), id }, natsMsg.subject);
      this.onProcessingEndHook?.(this.transportId, ctx);
      try {
        natsMsg.respond(outgoing.data, { headers: outgoing.headers });
      } catch (error) {
        this.link.logger.error({ err: error, subject: natsMsg.subject }, 'could not publish an answer');
      }
    };
  }

  private serializeAnswer(packet: WritePacket & { id: string }, subject: string): { data: Uint8Array; headers?: MsgHdrs } {
    let refusal: ServiceError;
    try {
      const outgoing = this.serializer.serialize(packet) as { data: Uint8Array; headers?: MsgHdrs };
      const bytes = messageBytes(outgoing);
      const limit = this.link.maxPayload;
      if (bytes <= limit) return outgoing;
      this.link.logger.error({ subject, bytes, max_payload: limit }, 'an answer is larger than NATS carries; answering an error instead');
      refusal = new ServiceError('INVALID_REQUEST', `The answer to this request is too large to send (${bytes} bytes; at most ${limit}). Ask for less.`);
    } catch (error) {
      this.link.logger.error({ err: error, subject }, 'an answer could not be serialized; answering an error instead');
      refusal = new ServiceError('INTERNAL_ERROR', 'An unexpected error occurred; retry, and contact support with the request id if it persists.');
    }
    return this.serializer.serialize({ id: packet.id, err: refusal.toWire(), isDisposed: true }) as { data: Uint8Array; headers?: MsgHdrs };
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

function parseDeadline(value: string | undefined): number | undefined {
  if (!value || !/^\d{1,16}$/.test(value)) return undefined;
  return Number(value);
}

/** What NATS counts against max_payload: the data and the encoded headers. */
function messageBytes(message: { data: Uint8Array; headers?: MsgHdrs }): number {
  const headers = message.headers as (MsgHdrs & { encode(): Uint8Array }) | undefined;
  return message.data.length + (headers ? headers.encode().length : 0);
}

class SharedConnectionNatsClient extends ClientNats {
  constructor(private readonly link: NatsLink) {
    super({});
    // Refused while serializing, before anything is published: nats.js would throw the same from inside the transport.
    const serializer = this.serializer;
    this.serializer = {
      serialize: (packet: ReadPacket) => {
        const outgoing = serializer.serialize(packet) as { data: Uint8Array; headers?: MsgHdrs };
        const bytes = messageBytes(outgoing);
        if (bytes > this.link.maxPayload) throw new RequestTooLarge(bytes, this.link.maxPayload);
        return outgoing;
      },
    };
  }

  override createClient(): Promise<NatsConnection> {
    return Promise.resolve(this.link.connection);
  }

  override async close(): Promise<void> {
    // Owned by the NatsLink.
  }
}

/** The request never left this process: it is larger than NATS carries. */
export class RequestTooLarge extends ServiceError {
  constructor(bytes: number, limit: number) {
    super('PAYLOAD_TOO_LARGE', `The request is too large to pass on (${bytes} bytes; at most ${limit}).`);
  }
}

/**
 * The request was sent, but its answer will never arrive here: the callee may have done the work or not.
 * Callers that must not repeat the work (idempotent runs) keep their guard until it expires.
 */
export class OutcomeUnknown extends ServiceError {
  constructor() {
    super('SERVICE_UNAVAILABLE', 'A service did not answer in time; the request may still complete. Retry later.');
  }
}

/** The caller of the current request has stopped waiting, so nothing more is sent on its behalf. */
export class CallerGaveUp extends ServiceError {
  constructor() {
    super('SERVICE_UNAVAILABLE', 'The request ran out of time before it could finish. Retry later.');
  }
}

export interface CallOptions {
  /** Never longer than the deadline of the request being handled, unless `outlivesCaller` is set. */
  timeoutMs?: number;
  /** The edge passes its request id explicitly; services inherit the one their own handler received. */
  requestId?: string;
  /** Clean-up that must happen even after the caller has stopped waiting (releasing a reservation). */
  outlivesCaller?: boolean;
}

/**
 * Request/reply to another service. Sends the current request id and an absolute deadline in NATS headers
 * and turns a failing handler's answer back into the ServiceError it threw, so errors keep their public code
 * end to end. While NATS is disconnected it refuses at once instead of letting the client buffer requests.
 * Subjects are internal: they go to the log, never into an error message.
 */
export class RpcClient {
  private readonly client: SharedConnectionNatsClient;

  constructor(
    private readonly link: NatsLink,
    private readonly metrics: Metrics,
    private readonly defaultTimeoutMs = 10_000,
  ) {
    this.client = new SharedConnectionNatsClient(link);
  }

  async call<TReply>(subject: string, payload: unknown, options: CallOptions = {}): Promise<TReply> {
    const started = process.hrtime.bigint();
    let outcome = 'ok';
    try {
      const now = Date.now();
      const callerDeadline = options.outlivesCaller ? undefined : currentDeadline();
      const timeoutMs = Math.min(options.timeoutMs ?? this.defaultTimeoutMs, callerDeadline === undefined ? Infinity : callerDeadline - now);
      if (timeoutMs <= 0) throw new CallerGaveUp();
      if (!this.link.connected) throw new ServiceError('SERVICE_UNAVAILABLE', 'A service this request needs is unreachable right now. Retry shortly.');
      const hdrs = natsHeaders();
      hdrs.set(REQUEST_ID_HEADER, options.requestId ?? currentRequestId() ?? requestIdOrNew());
      hdrs.set(DEADLINE_HEADER, String(now + timeoutMs));
      const record = new NatsRecordBuilder(payload).setHeaders(hdrs).build();
      const lostConnection = this.link.disconnects.pipe(
        take(1),
        mergeMap(() => throwError(() => new OutcomeUnknown())),
      );
      return await lastValueFrom(race(this.client.send<TReply>(subject, record).pipe(rxTimeout(timeoutMs)), lostConnection));
    } catch (error) {
      const mapped = this.toServiceError(error, subject);
      outcome = mapped.code;
      throw mapped;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.rpcCalls.inc({ subject, outcome });
      this.metrics.rpcCallDuration.observe({ subject, outcome }, seconds);
    }
  }

  private toServiceError(error: unknown, subject: string): ServiceError {
    if (error instanceof OutcomeUnknown) {
      this.link.logger.warn({ subject }, 'lost the NATS connection while waiting for an answer');
      return error;
    }
    if (error instanceof ServiceError) return error;
    if (isWireError(error)) return ServiceError.fromWire(error);
    const name = (error as { name?: string } | null)?.name;
    if (name === 'TimeoutError') {
      this.link.logger.warn({ subject }, 'no answer in time');
      return new OutcomeUnknown();
    }
    if (name === 'EmptyResponseException') {
      this.link.logger.warn({ subject }, 'no service is answering');
      return new ServiceError('SERVICE_UNAVAILABLE', 'A service this request needs is not available right now. Retry shortly.');
    }
    this.link.logger.error({ err: error, subject }, 'a request to another service failed');
    return new ServiceError('INTERNAL_ERROR', 'An unexpected error occurred; retry, and contact support with the request id if it persists.');
  }
}

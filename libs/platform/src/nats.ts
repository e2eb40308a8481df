import { MessageHandler, NatsContext, ServerNats, WritePacket } from '@nestjs/microservices';
import { Msg, MsgHdrs, NatsConnection, connect, createInbox, headers as natsHeaders } from 'nats';
import { Subject } from 'rxjs';
import {
  BroadcastSubject,
  DEADLINE_HEADER,
  inboxPrefixFor,
  REQUEST_ID_HEADER,
  ReplyOf,
  RequestOf,
  RpcSubject,
  ServiceError,
  isWireError,
  WireError,
} from '@ds/contracts';
import { ConfigError, NatsAuth, redact } from './config';
import { Logger } from './logger';
import { Metrics } from './metrics';
import { flushOncePerTurn } from './nats-write-coalescing';
import { answerForUnexpected, internalError } from './unexpected-errors';
import { currentDeadline, currentRequestId, currentSpan, requestIdOrNew, runWithRequestContext } from './request-context';
import { endSpan, httpSpans, Span, SpanKind, startSpan, TRACEPARENT_HEADER, traceparentOf, tracer } from './tracing';

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
    /** Where this client's answers and JetStream deliveries come: the only inboxes its NATS user may read. */
    readonly inboxPrefix: string,
  ) {
    void this.watchStatus();
  }

  static async open(url: string, name: string, logger: Logger, auth: NatsAuth = NO_NATS_AUTH): Promise<NatsLink> {
    try {
      const inboxPrefix = inboxPrefixFor(name);
      const connection = await connect({
        servers: url.split(',').map((server) => server.trim()),
        name,
        inboxPrefix,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        pingInterval: 5_000,
        maxPingOut: 2,
        timeout: 3_000,
        // Otherwise every request and its timer capture a stack trace up front, in case it fails: a cost on
        // every call, for errors that are mapped to a ServiceError and logged by subject anyway.
        noAsyncTraces: true,
        ...(auth.user !== null && auth.password !== null ? { user: auth.user, pass: auth.password } : {}),
        ...(auth.tls
          ? {
              tls: {
                ...(auth.tls.caFile ? { caFile: auth.tls.caFile } : {}),
                ...(auth.tls.certFile && auth.tls.keyFile ? { certFile: auth.tls.certFile, keyFile: auth.tls.keyFile } : {}),
              },
            }
          : {}),
      });
      if (!flushOncePerTurn(connection)) logger.warn('this nats.js version is not the one write coalescing was written for; writing every message as it comes');
      return new NatsLink(connection, logger, inboxPrefix);
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

/**
 * Publishes a notice to every replica of this service (this one included), typed by the subject's declaration
 * in `@ds/contracts`. Fire-and-forget: a replica that misses it keeps its cached copy until the copy expires or
 * its connection drops.
 */
export function publishBroadcast<Payload>(link: NatsLink, subject: BroadcastSubject<Payload>, payload: NoInfer<Payload>): void {
  link.connection.publish(subject, typeof payload === 'string' ? payload : JSON.stringify(payload));
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
  /** Requests taken and not yet answered, with when each started (for the handled-request metrics). */
  private readonly inFlight = new Map<object, bigint>();
  private idleWaiters: Array<() => void> = [];
  private readonly handlersBySubject = new Map<string, MessageHandler>();
  /** Spans of the requests in flight, kept only while tracing is on. */
  private readonly spans = new Map<object, Span>();

  constructor(
    private readonly link: NatsLink,
    queue: string,
    private readonly metrics?: Metrics,
  ) {
    super({ queue });
    metrics?.gauge('decision_service_rpc_handling_in_flight', 'NATS requests taken by this service and not yet answered', [], () => [[{}, this.inFlight.size]]);
    this.setOnProcessingStartHook((_transport, context, done) => {
      const natsContext = context as unknown as NatsContext;
      const natsHeadersIn = natsContext.getHeaders() as MsgHdrs | undefined;
      const requestId = natsHeadersIn?.get(REQUEST_ID_HEADER) || requestIdOrNew();
      const deadline = parseDeadline(natsHeadersIn?.get(DEADLINE_HEADER));
      if (deadline !== undefined && Date.now() >= deadline) {
        runWithRequestContext({ requestId }, () =>
          this.link.logger.warn(
            { subject: natsContext.getSubject(), late_ms: Date.now() - deadline },
            'dropped a request whose caller had already stopped waiting',
          ),
        );
        return undefined;
      }
      this.inFlight.set(context as object, process.hrtime.bigint());
      const active = tracer;
      if (active === null) {
        this.endIfHandlingFails(natsContext, runWithRequestContext({ requestId, deadline }, done));
        return undefined;
      }
      const subject = natsContext.getSubject();
      const span = startSpan(
        active,
        subject,
        SpanKind.SERVER,
        { 'messaging.system': 'nats', 'messaging.destination.name': subject },
        undefined,
        natsHeadersIn?.get(TRACEPARENT_HEADER),
      );
      this.spans.set(context as object, span);
      this.endIfHandlingFails(natsContext, runWithRequestContext({ requestId, deadline, span }, done));
      return undefined;
    });
    // Called when the reply is published (once more for a separate end-of-stream packet: deleting twice is harmless).
    this.setOnProcessingEndHook((_transport, context) => {
      this.inFlight.delete(context as object);
      if (this.inFlight.size === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
    });
  }

  /**
   * Nest turns a handler's errors into error answers, so handling rejects only when something around the
   * handler fails (Nest's own machinery, an exception filter), and then no answer is published. Nest hands the rejection to the NATS subscription callback,
   * which drops it: the request would stay in flight for good (a shutdown would wait its whole grace
   * period for it) and the failure would surface only as an anonymous unhandled rejection. It is recorded
   * here as the end of the request instead, under its subject.
   */
  private endIfHandlingFails(context: NatsContext, handling: Promise<unknown>): void {
    handling.catch((error: unknown) => {
      const subject = context.getSubject();
      this.link.logger.error({ err: error, subject }, 'a request failed outside its handler; it gets no answer');
      this.recordHandled(context, subject, error);
      this.onProcessingEndHook?.(this.transportId, context);
    });
  }

  /**
   * Nest finds a handler by first trying to parse the subject as a JSON pattern, which throws (and is
   * caught) for every plain subject on every message; subjects are few and their handlers fixed once
   * listening, so each is looked up once.
   */
  override getHandlerByPattern(pattern: string): MessageHandler | null {
    const known = this.handlersBySubject.get(pattern);
    if (known) return known;
    const handler = super.getHandlerByPattern(pattern);
    if (handler) this.handlersBySubject.set(pattern, handler);
    return handler;
  }

  override createNatsClient(): Promise<NatsConnection> {
    return Promise.resolve(this.link.connection);
  }

  override getPublisher(natsMsg: Msg, id: string, ctx: NatsContext): (response: unknown) => void {
    if (!natsMsg.reply) return () => undefined;
    return (response: unknown) => {
      const packet = response as WritePacket;
      const outgoing = this.serializeAnswer({ ...packet, id }, natsMsg.subject);
      this.recordHandled(ctx, natsMsg.subject, packet.err);
      this.onProcessingEndHook?.(this.transportId, ctx);
      try {
        natsMsg.respond(outgoing.data, { headers: outgoing.headers });
      } catch (error) {
        this.link.logger.error({ err: error, subject: natsMsg.subject }, 'could not publish an answer');
      }
    };
  }

  /**
   * RED metrics per subject, recorded here rather than by a Nest interceptor: an interceptor wraps every
   * handler in more rxjs operators, which the profiles show on the hot path. Recorded once per request,
   * for the packet that first answers it.
   */
  private recordHandled(ctx: NatsContext, subject: string, error: unknown): void {
    const started = this.inFlight.get(ctx as object);
    if (started === undefined) return;
    const outcome = error === undefined || error === null ? 'ok' : isWireError(error) ? error.code : 'INTERNAL_ERROR';
    this.metrics?.handled(subject, outcome, Number(process.hrtime.bigint() - started) / 1e9);
    if (this.spans.size === 0) return;
    const span = this.spans.get(ctx as object);
    if (span === undefined) return;
    this.spans.delete(ctx as object);
    endSpan(span, outcome === 'ok' ? undefined : outcome);
  }

  private serializeAnswer(packet: WritePacket & { id: string }, subject: string): { data: Uint8Array; headers?: MsgHdrs } {
    let refusal: ServiceError;
    try {
      const outgoing = this.serializer.serialize(packet) as { data: Uint8Array; headers?: MsgHdrs };
      const bytes = messageBytes(outgoing);
      const limit = this.link.maxPayload;
      if (bytes <= limit) return outgoing;
      // The log names the limit; the answer does not: the bus and its limits are this side's business.
      this.link.logger.error({ subject, bytes, max_payload: limit }, 'an answer is larger than NATS carries; answering an error instead');
      refusal = isWireError(packet.err) ? withoutDetails(packet.err) : answerTooLarge();
    } catch (error) {
      this.link.logger.error({ err: error, subject }, 'an answer could not be serialized; answering an error instead');
      refusal = internalError();
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
    await Promise.race([new Promise<void>((resolve) => this.idleWaiters.push(resolve)), new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref())]);
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

/**
 * An error answer too large to send goes as the same refusal without its details: the caller keeps the code and
 * status it earned, and a message of bounded length (ServiceError bounds it).
 */
function withoutDetails(wire: WireError): ServiceError {
  return new ServiceError(wire.code, wire.message);
}

/** A successful answer too large to send: the caller can ask for less (a smaller page, a shorter range). */
function answerTooLarge(): ServiceError {
  return new ServiceError('INVALID_REQUEST', 'The answer to this request is too large to send. Ask for less, such as a smaller page.');
}

/**
 * The request never left this process: it is larger than the services pass between them. The caller learns that
 * it was too large, not the limit of a component it never sees (the limits it can see are those of the API).
 */
export class RequestTooLarge extends ServiceError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super('PAYLOAD_TOO_LARGE', 'The request is too large to pass on. Send less.');
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
 * A JSON text placed as is into an encoded request: a value the caller already holds as validated JSON
 * text (a request body as received), so that it is neither serialised again nor copied through an object.
 * Only the text of one complete JSON value may be wrapped.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A request as it may be handed to `RpcClient.call`: any top-level field may be given as its JSON text. */
export type Sendable<Request> = Request extends object ? { [Field in keyof Request]: Request[Field] | JsonText } : Request;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The request as Nest's NATS server reads it (`{id, data}`; the server routes by subject, so the pattern
 * is left out), encoded once. Top-level JsonText fields of the payload are spliced in as they are.
 */
export function encodeRequest(id: string, payload: unknown): Uint8Array {
  let data: string;
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload) && Object.values(payload).some((value) => value instanceof JsonText)) {
    const plain: Record<string, unknown> = {};
    let spliced = '';
    for (const [name, value] of Object.entries(payload)) {
      if (value instanceof JsonText) spliced += `,${JSON.stringify(name)}:${value.text}`;
      else plain[name] = value;
    }
    const head = JSON.stringify(plain);
    data = head.length === 2 ? `{${spliced.slice(1)}}` : `${head.slice(0, -1)}${spliced}}`;
  } else {
    data = payload === undefined ? 'null' : JSON.stringify(payload);
  }
  return encoder.encode(`{"id":"${id}","data":${data}}`);
}

/** An answer of Nest's NATS server: the handler's `response`, or its error as `err`. */
interface AnswerPacket {
  response?: unknown;
  err?: unknown;
}

export function decodeAnswer(bytes: Uint8Array): AnswerPacket {
  return JSON.parse(decoder.decode(bytes)) as AnswerPacket;
}

/** Raised on a reply subject no service listens on: NATS answers a request it could hand to no one with 503. */
class NoResponders extends Error {}

/** Raised when a call's time is up before its answer came. */
class NoAnswerInTime extends Error {}

interface WaitingCall {
  answer(message: Msg): void;
  fail(error: Error): void;
}

/**
 * Request/reply to another service. Sends the current request id and an absolute deadline in NATS headers
 * and turns a failing handler's answer back into the ServiceError it threw, so errors keep their public code
 * end to end. While NATS is disconnected it refuses at once instead of letting the client buffer requests.
 * Subjects are internal: they go to the log, never into an error message.
 *
 * Answers come to one subscription of this client (`_INBOX.<service>.<unique>.*`), each call on its own reply
 * subject: one publish per call, the payload encoded once. (Nest's client subscribes and unsubscribes an
 * inbox per call and wraps each in several Observables; nats.js's own request builds an error object per
 * call even when it succeeds.)
 */
export class RpcClient {
  private readonly waiting = new Map<string, WaitingCall>();
  private readonly replyPrefix: string;
  private nextId = 0;

  constructor(
    private readonly link: NatsLink,
    private readonly metrics: Metrics,
    private readonly defaultTimeoutMs = 10_000,
  ) {
    this.replyPrefix = `${createInbox(link.inboxPrefix)}.`;
    link.connection.subscribe(`${this.replyPrefix}*`, {
      callback: (_error, message) => this.waiting.get(message.subject.slice(this.replyPrefix.length))?.answer(message),
    });
    // A dropped connection may have lost any answer still to come.
    link.disconnects.subscribe(() => {
      for (const call of [...this.waiting.values()]) call.fail(new OutcomeUnknown());
    });
    metrics.gauge('decision_service_rpc_calls_in_flight', 'NATS requests sent by this service and still awaiting their answer', [], () => [
      [{}, this.waiting.size],
    ]);
  }

  /** Request and reply types come from the subject's declaration in `@ds/contracts`. */
  async call<S extends RpcSubject<any, any>>(subject: S, payload: Sendable<RequestOf<S>>, options: CallOptions = {}): Promise<ReplyOf<S>> {
    const started = process.hrtime.bigint();
    let outcome = 'ok';
    let span: Span | undefined;
    try {
      const now = Date.now();
      const callerDeadline = options.outlivesCaller ? undefined : currentDeadline();
      const timeoutMs = Math.min(options.timeoutMs ?? this.defaultTimeoutMs, callerDeadline === undefined ? Infinity : callerDeadline - now);
      if (timeoutMs <= 0) throw new CallerGaveUp();
      if (!this.link.connected) throw new ServiceError('SERVICE_UNAVAILABLE', 'A service this request needs is unreachable right now. Retry shortly.');
      const hdrs = natsHeaders();
      hdrs.set(REQUEST_ID_HEADER, options.requestId ?? currentRequestId() ?? requestIdOrNew());
      hdrs.set(DEADLINE_HEADER, String(now + timeoutMs));
      const active = tracer;
      if (active !== null) {
        const parent = currentSpan() ?? (options.requestId === undefined ? undefined : httpSpans.get(options.requestId));
        span = startSpan(active, subject, SpanKind.CLIENT, { 'messaging.system': 'nats', 'messaging.destination.name': subject }, parent);
        hdrs.set(TRACEPARENT_HEADER, traceparentOf(span));
      }
      const id = String(++this.nextId);
      const data = encodeRequest(id, payload);
      // Refused before anything is published: nats.js would throw the same from inside the transport.
      const bytes = messageBytes({ data, headers: hdrs });
      if (bytes > this.link.maxPayload) {
        this.link.logger.warn({ subject, bytes, max_payload: this.link.maxPayload }, 'a request is larger than NATS carries; refused before sending');
        throw new RequestTooLarge(bytes, this.link.maxPayload);
      }
      const answer = decodeAnswer((await this.request(id, subject, data, hdrs, timeoutMs)).data);
      if (answer.err !== undefined && answer.err !== null) throw answer.err;
      return answer.response as ReplyOf<S>;
    } catch (error) {
      const mapped = this.toServiceError(error, subject);
      outcome = mapped.code;
      throw mapped;
    } finally {
      this.metrics.called(subject, outcome, Number(process.hrtime.bigint() - started) / 1e9);
      if (span !== undefined) endSpan(span, outcome === 'ok' ? undefined : outcome);
    }
  }

  private request(id: string, subject: string, data: Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<Msg> {
    return new Promise<Msg>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
      };
      const timer = setTimeout(() => {
        finish();
        reject(new NoAnswerInTime());
      }, timeoutMs);
      this.waiting.set(id, {
        answer: (message) => {
          finish();
          if (message.data.length === 0 && message.headers?.code === 503) reject(new NoResponders());
          else resolve(message);
        },
        fail: (error) => {
          finish();
          reject(error);
        },
      });
      try {
        this.link.connection.publish(subject, data, { reply: `${this.replyPrefix}${id}`, headers });
      } catch (error) {
        finish();
        reject(error as Error);
      }
    });
  }

  private toServiceError(error: unknown, subject: string): ServiceError {
    if (error instanceof OutcomeUnknown) {
      this.link.logger.warn({ subject }, 'lost the NATS connection while waiting for an answer');
      return error;
    }
    if (error instanceof ServiceError) return error;
    if (isWireError(error)) return ServiceError.fromWire(error);
    if (error instanceof NoAnswerInTime) {
      this.metrics.rpcCallTimeouts.inc({ subject });
      this.link.logger.warn({ subject }, 'no answer in time');
      return new OutcomeUnknown();
    }
    if (error instanceof NoResponders) {
      this.link.logger.warn({ subject }, 'no service is answering');
      return new ServiceError('SERVICE_UNAVAILABLE', 'A service this request needs is not available right now. Retry shortly.');
    }
    return answerForUnexpected(error, this.link.logger, 'a request to another service failed', { subject });
  }
}

import { ConsumerMessages, headers as natsHeaders, JetStreamManager, JsMsg, NatsConnection } from 'nats';
import { DeliveryKind, DeliveryMessage, DELIVERY_STREAM } from '@ds/contracts';
import { fillSecretsFrom, secretsNotSet } from '@ds/decision-schema';
import { consumeDurable, consumeTraced, Logger } from '@ds/platform';
import { attemptHeaders, DELIVERY_HEADERS, DELIVERY_USER_AGENT, MAX_ATTEMPTS, retryDelayMs, secretRedactor } from '@ds/webhooks';
import { declareDeliveryStream } from './jetstream';
import { DeliveriesStore } from './deliveries.store';
import { DeliveryMetrics } from './metrics';
import { Sender, SendResult } from './sender';
import { SigningSecretsService } from './signing-secrets.service';
import { WorkspaceSecretsService } from './workspace-secrets.service';
import { DeliveryWindows, WorkspaceWindow } from './delivery-windows';

/** Attempts in flight at once for one workspace on one replica: a slow receiver holds only its own workspace's slots. */
export const WORKSPACE_CONCURRENCY = 8;
/** Attempts in flight at once on one replica, all workspaces together. */
const GLOBAL_CONCURRENCY = 256;
/**
 * Messages one workspace may hold waiting on a replica, and all workspaces together; beyond them messages go back
 * to the stream for a while (at least until the workspace's window has room), so that a replica's memory and its
 * in-progress reports stay bounded.
 */
const WORKSPACE_BACKLOG = 200;
const REPLICA_BACKLOG = 4_000;
const BACKLOG_RETURN_MS = 5_000;
/** Every held message is reported in progress this often, well within the consumer's ack wait. */
const HEARTBEAT_MS = 5_000;
/** A failure of our own (the database, the stream) retries the message after this long, without counting an attempt. */
const INTERNAL_RETRY_MS = 2_000;
const KINDS: readonly DeliveryKind[] = ['webhook', 'http', 'workflow', 'agent'];

interface Held {
  message: JsMsg;
  delivery: DeliveryMessage;
  sequence: number;
}

interface WorkspaceLane {
  waiting: Held[];
  inFlight: number;
  window: WorkspaceWindow;
}

/**
 * Consumes the DELIVERIES stream with a durable pull consumer and explicit acknowledgement. Each message is
 * attempted once per delivery: success is acked, a failure that may be retried is nak'd with the schedule's delay
 * (JetStream holds it and delivers it again), and 410, a refused target or the last attempt are termed. Messages
 * wait in one lane per workspace, each with its own concurrency and its own 600-a-minute window (shared by every
 * replica through Redis when there is one), so one workspace's dead receiver or burst never holds up another's
 * deliveries.
 */
export class DeliveryWorker {
  private messages: ConsumerMessages | null = null;
  private manager: JetStreamManager | null = null;
  private readonly lanes = new Map<string, WorkspaceLane>();
  private readonly held = new Set<JsMsg>();
  private inFlight = 0;
  private readonly running = new Set<Promise<void>>();
  private heartbeat: NodeJS.Timeout | null = null;
  /** Attempts waiting for their workspace's window; woken early when the worker stops. */
  private readonly sleepers: Array<() => void> = [];
  private stopped = false;

  constructor(
    private readonly connection: NatsConnection,
    private readonly store: DeliveriesStore,
    private readonly secrets: SigningSecretsService,
    private readonly workspaceSecrets: WorkspaceSecretsService,
    private readonly sender: Sender,
    private readonly metrics: DeliveryMetrics,
    private readonly logger: Logger,
    private readonly retryScale: number,
    private readonly windows: DeliveryWindows,
  ) {}

  async start(): Promise<void> {
    await this.windows.connect();
    this.manager = await declareDeliveryStream(this.connection);
    this.messages = await consumeDurable(this.connection, DELIVERY_STREAM.name, DELIVERY_STREAM.consumer, 256, (message) => this.receive(message));
    this.heartbeat = setInterval(() => {
      for (const message of this.held) {
        try {
          message.working();
        } catch {
          // Disconnected: the message comes back after the ack wait, and its row says what is done.
        }
      }
      const now = Date.now();
      for (const [workspaceId, lane] of this.lanes) {
        if (lane.inFlight === 0 && lane.waiting.length === 0 && lane.window.idle(now)) this.lanes.delete(workspaceId);
      }
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Stops taking messages and lets attempts in flight finish; messages still waiting go back to the stream. */
  async stop(): Promise<void> {
    this.stopped = true;
    try {
      this.messages?.stop();
    } catch (error) {
      this.logger.warn({ err: error }, 'the delivery consumer did not stop cleanly');
    }
    for (const lane of this.lanes.values()) {
      for (const held of lane.waiting.splice(0)) this.settle(held.message, 'nak', 0);
    }
    for (const wake of this.sleepers.splice(0)) wake();
    await Promise.allSettled([...this.running]);
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.windows.close();
  }

  async consumerState(): Promise<{ undelivered: number; unacknowledged: number } | null> {
    if (!this.manager) return null;
    const info = await this.manager.consumers.info(DELIVERY_STREAM.name, DELIVERY_STREAM.consumer);
    return { undelivered: info.num_pending, unacknowledged: info.num_ack_pending };
  }

  private receive(message: JsMsg): void {
    const delivery = parseDelivery(message.data);
    if (!delivery) {
      this.logger.error({ subject: message.subject, seq: message.seq }, 'dropped a delivery message that is not a delivery');
      message.term('not a delivery message');
      return;
    }
    const sequence = Number(message.headers?.get(DELIVERY_STREAM.sequenceHeader) || '1');
    const lane = this.lane(delivery.workspaceId);
    if (this.stopped || lane.waiting.length >= WORKSPACE_BACKLOG || this.held.size >= REPLICA_BACKLOG) {
      this.settle(message, 'nak', Math.max(BACKLOG_RETURN_MS, lane.window.waitAt(Date.now())));
      return;
    }
    this.held.add(message);
    lane.waiting.push({ message, delivery, sequence: Number.isInteger(sequence) && sequence >= 1 ? sequence : 1 });
    this.pump(delivery.workspaceId);
  }

  private lane(workspaceId: string): WorkspaceLane {
    let lane = this.lanes.get(workspaceId);
    if (!lane) {
      lane = { waiting: [], inFlight: 0, window: this.windows.forWorkspace(workspaceId) };
      this.lanes.set(workspaceId, lane);
    }
    return lane;
  }

  private pump(workspaceId: string): void {
    const lane = this.lanes.get(workspaceId);
    if (!lane) return;
    while (lane.waiting.length > 0 && lane.inFlight < WORKSPACE_CONCURRENCY && this.inFlight < GLOBAL_CONCURRENCY && !this.stopped) {
      const held = lane.waiting.shift()!;
      lane.inFlight++;
      this.inFlight++;
      const work = consumeTraced(DELIVERY_STREAM.name, held.message, () => this.process(held, lane))
        .catch((error: unknown) => {
          this.logger.error({ err: error, deliveryId: held.delivery.deliveryId }, 'a delivery attempt could not be recorded; it will be tried again');
          this.settle(held.message, 'nak', INTERNAL_RETRY_MS);
        })
        .finally(() => {
          lane.inFlight--;
          this.inFlight--;
          this.running.delete(work);
          this.pump(workspaceId);
          if (this.inFlight === GLOBAL_CONCURRENCY - 1) for (const other of this.lanes.keys()) if (other !== workspaceId) this.pump(other);
        });
      this.running.add(work);
    }
  }

  private async process(held: Held, lane: WorkspaceLane): Promise<void> {
    const { delivery, sequence, message } = held;
    const recorded = await this.store.record(delivery);
    if (recorded === 'workspace-deleted') {
      this.logger.info({ deliveryId: delivery.deliveryId, workspaceId: delivery.workspaceId }, 'dropped a delivery of a deleted workspace');
      this.metrics.deliveries.inc({ outcome: 'dropped' });
      this.settle(message, 'term');
      return;
    }
    if (!recorded) {
      this.logger.error(
        { deliveryId: delivery.deliveryId, workspaceId: delivery.workspaceId },
        'dropped a delivery message whose id belongs to another workspace',
      );
      this.settle(message, 'term');
      return;
    }
    let state = recorded;
    if (sequence > state.sequence && state.status === 'failed') {
      if (await this.store.startSequence(delivery.deliveryId, sequence)) state = { status: 'pending', sequence, attemptCount: 0 };
    }
    if (state.sequence !== sequence || state.status !== 'pending') {
      // Already finished (an acknowledgement was lost) or superseded by a resend: nothing to send.
      this.settle(message, 'ack');
      return;
    }
    const secrets = await this.secrets.signing(delivery.workspaceId);
    const startedAt = await this.windowSlot(lane);
    if (startedAt === null) {
      this.settle(message, 'nak', 0);
      return;
    }
    const begun = await this.store.beginAttempt(delivery.deliveryId, sequence, new Date(startedAt));
    if (!begun) {
      this.settle(message, 'ack');
      return;
    }
    if (begun.attempt > MAX_ATTEMPTS) {
      // Attempts cut short by crashes used up the sequence.
      await this.store.markFailed(delivery.deliveryId, sequence);
      this.metrics.deliveries.inc({ outcome: 'failed' });
      this.settle(message, 'term');
      return;
    }
    const result = await makeAttempt(
      { sender: this.sender, workspaceSecrets: this.workspaceSecrets, logger: this.logger },
      delivery,
      begun.attempt,
      startedAt,
      secrets,
    );
    this.metrics.attempts.inc({ outcome: result.outcome });
    this.metrics.attemptDuration.observe({ outcome: result.outcome }, result.durationMs / 1000);

    const log = {
      deliveryId: delivery.deliveryId,
      workspaceId: delivery.workspaceId,
      attempt: begun.attempt,
      sequence,
      outcome: result.outcome,
      status: result.responseStatus,
    };
    if (result.outcome === 'succeeded') {
      await this.store.finishAttempt(begun.attemptId, delivery.deliveryId, sequence, result, { status: 'succeeded', nextAttemptAt: null });
      this.metrics.deliveries.inc({ outcome: 'succeeded' });
      this.settle(message, 'ack');
      return;
    }
    const delay =
      result.outcome === 'gone' || result.outcome === 'refused'
        ? null
        : retryDelayMs(begun.attempt, { scale: this.retryScale, random: Math.random(), retryAfterMs: result.retryAfterMs });
    if (delay === null) {
      await this.store.finishAttempt(begun.attemptId, delivery.deliveryId, sequence, result, { status: 'failed', nextAttemptAt: null });
      this.metrics.deliveries.inc({ outcome: result.outcome === 'gone' ? 'gone' : 'failed' });
      this.logger.warn({ ...log, error: result.error, detail: result.detail }, 'delivery failed for good');
      this.settle(message, 'term');
      return;
    }
    await this.store.finishAttempt(begun.attemptId, delivery.deliveryId, sequence, result, { status: 'pending', nextAttemptAt: new Date(Date.now() + delay) });
    this.logger.info({ ...log, error: result.error, detail: result.detail, retryInMs: delay }, 'delivery attempt failed; retrying later');
    this.settle(message, 'nak', delay);
  }

  /**
   * Waits until the workspace's window allows one more attempt and counts it; answers the moment it was counted
   * (the attempt's recorded start), or null when the worker stopped meanwhile. Taken as late as possible, right
   * before the attempt, so that what the window counts is what receivers see.
   */
  private async windowSlot(lane: WorkspaceLane): Promise<number | null> {
    for (;;) {
      if (this.stopped) return null;
      const slot = await lane.window.take();
      if ('startedAt' in slot) return slot.startedAt;
      const wait = slot.waitMs;
      this.metrics.throttled.inc();
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          const index = this.sleepers.indexOf(wake);
          if (index >= 0) this.sleepers.splice(index, 1);
          resolve();
        };
        const timer = setTimeout(wake, wait);
        this.sleepers.push(wake);
      });
    }
  }

  private settle(message: JsMsg, how: 'ack' | 'nak' | 'term', delayMs = 0): void {
    this.held.delete(message);
    try {
      if (how === 'ack') message.ack();
      else if (how === 'term') message.term();
      else message.nak(delayMs);
    } catch (error) {
      // The connection is down: JetStream delivers the message again after the ack wait, and its row says what is done.
      this.logger.warn({ err: error, how }, 'could not settle a delivery message');
    }
  }
}

/** Publishes a resend: the delivery as queued, starting attempt sequence `sequence`. */
export async function publishResend(connection: NatsConnection, message: DeliveryMessage, sequence: number): Promise<void> {
  const h = natsHeaders();
  h.set(DELIVERY_STREAM.sequenceHeader, String(sequence));
  await connection.jetstream().publish(DELIVERY_STREAM.subjectFor(message.workspaceId), JSON.stringify(message), {
    msgID: DELIVERY_STREAM.resendMsgId(message.deliveryId, sequence),
    headers: h,
  });
}

export function parseDelivery(data: Uint8Array): DeliveryMessage | null {
  let value: Partial<DeliveryMessage> | null;
  try {
    value = JSON.parse(Buffer.from(data).toString('utf8')) as Partial<DeliveryMessage> | null;
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const strings = ['deliveryId', 'workspaceId', 'decisionId', 'decisionSlug', 'executionId', 'destinationKey', 'url', 'method', 'body', 'createdAt'] as const;
  for (const field of strings) if (typeof value[field] !== 'string') return null;
  if (!/^dlv_[A-Za-z0-9]{20}$/.test(value.deliveryId!)) return null;
  if (!KINDS.includes(value.kind as DeliveryKind) || typeof value.livemode !== 'boolean') return null;
  if (!/^[A-Z]{3,7}$/.test(value.method!)) return null;
  const headers = value.headers ?? {};
  if (typeof headers !== 'object' || Array.isArray(headers) || Object.values(headers).some((v) => typeof v !== 'string')) return null;
  return { ...(value as DeliveryMessage), headers: headers as Record<string, string> };
}

export interface AttemptParts {
  sender: Sender;
  workspaceSecrets: WorkspaceSecretsService;
  logger: Logger;
}

/**
 * Sends one attempt: the destination's headers with the workspace's secrets filled in, signed with `signing` at
 * `startedAt`. What the receiver answered (its body and its content type) comes back with every secret value,
 * signing secret and signature the request carried redacted in every spelling `secretRedactor` knows, since a
 * receiver that echoes its request would otherwise have them stored and shown.
 */
export async function makeAttempt(
  parts: AttemptParts,
  delivery: DeliveryMessage,
  attempt: number,
  startedAt: number,
  signing: readonly string[],
): Promise<SendResult> {
  const filled = await withWorkspaceSecrets(parts, delivery);
  if ('refusal' in filled) return unsentAttempt(filled.refusal);
  const headers = attemptHeaders({
    deliveryId: delivery.deliveryId,
    attempt,
    timestamp: Math.floor(startedAt / 1000),
    body: delivery.body,
    secrets: signing,
    destinationHeaders: filled.headers,
    userAgent: DELIVERY_USER_AGENT,
  });
  const result = await parts.sender.send({ url: delivery.url, method: delivery.method, headers, body: delivery.body });
  if (!result.response) return result;
  // Each signature alone (`t=…,v1=<hex>`, `v1,<base64> v1,<base64>`): the timestamp beside them is no secret.
  const signatures = [headers[DELIVERY_HEADERS.signature]!, headers[DELIVERY_HEADERS.webhookSignature]!].flatMap((value) =>
    value.split(/[ ,=]/).filter((part) => part.length >= 16),
  );
  const redact = secretRedactor([...filled.secretValues, ...signing, ...signatures]);
  const { contentType, body } = result.response;
  return { ...result, response: { ...result.response, contentType: contentType === null ? null : redact(contentType), body: redact(body) } };
}

/**
 * The destination's headers with `{{secrets.NAME}}` filled in, and the values filled in, read as the attempt
 * leaves so that a secret changed meanwhile is the one sent. A secret that is not set (or cannot be read) fails
 * this attempt, and the schedule tries again: an admin may set it before the next one.
 */
async function withWorkspaceSecrets(
  parts: AttemptParts,
  delivery: DeliveryMessage,
): Promise<{ headers: Record<string, string>; secretValues: string[] } | { refusal: string }> {
  const secretValues: string[] = [];
  try {
    const filled = await fillSecretsFrom(delivery.headers, async (names) => {
      const values = await parts.workspaceSecrets.values(delivery.workspaceId, names);
      secretValues.push(...Object.values(values));
      return values;
    });
    return 'missing' in filled ? { refusal: `Not sent: ${secretsNotSet(filled.missing)}` } : { headers: filled.headers, secretValues };
  } catch (error) {
    parts.logger.warn({ err: error, deliveryId: delivery.deliveryId }, "could not read a delivery's workspace secrets");
    return { refusal: "The workspace's secrets could not be read; the attempt was not sent." };
  }
}

/** An attempt that did not leave the service: failed, and retried on the usual schedule. */
function unsentAttempt(error: string): SendResult {
  return { outcome: 'failed', responseStatus: null, durationMs: 0, error, detail: null, retryAfterMs: null, address: null, response: null };
}

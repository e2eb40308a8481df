import { ConsumerMessages, JetStreamManager, JsMsg, NatsConnection, RetentionPolicy, StorageType, StreamConfig } from 'nats';
import { BillingSettlement, ServiceError, SETTLEMENT_STREAM } from '@ds/contracts';
import { consumeBatchTraced, consumeDurable, declareDurable, declareStream, Logger } from '@ds/platform';
import { ReservationsService } from './reservations.service';

/**
 * Settlements wait in a work queue until a ledger replica posts them; a message's id (the execution's) makes a
 * republished settlement a duplicate for 2 minutes, and the reservation's state machine makes any later one a
 * repeat that changes nothing.
 */
const STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: SETTLEMENT_STREAM.name,
  subjects: [...SETTLEMENT_STREAM.subjects],
  retention: RetentionPolicy.Workqueue,
  storage: StorageType.File,
  max_age: 7 * 24 * 3600 * 1e9,
  duplicate_window: 120 * 1e9,
};

/** The most settlements posted in one transaction. */
export const SETTLEMENT_BATCH_MAX = 256;
/**
 * How long the first settlement of a batch waits for others, so that a steady trickle still shares transactions.
 * A batch costs about eight statements whatever its size, and nobody waits for it but `/v1/me` (which allows
 * a second), so a longer gather buys fewer statements per run for a delay no run sees.
 */
const BATCH_GATHER_MS = 20;
/** A batch whose transaction failed comes back after this long. */
const RETRY_DELAY_MS = 1_000;
/** An unacknowledged message (its replica died mid-batch) is redelivered after this long. */
export const SETTLEMENT_ACK_WAIT_MS = 10_000;
/** `/v1/me` waits at most this long for settlements already published to be posted. */
const CATCH_UP_MAX_MS = 1_000;
const CATCH_UP_POLL_MS = 5;

/** Tells whether the settlements published until now are posted; AccountsService waits on it. */
export interface SettlementBacklog {
  /** Resolves once every settlement published before the call is posted, or after about a second regardless. */
  caughtUp(): Promise<void>;
}

export const SETTLEMENT_BACKLOG = Symbol('settlement-backlog');

/**
 * Declares the stream and its durable pull consumer; safe on every start of every replica. The consumer keeps the
 * ack wait it was first declared with (tests declare it first with a shorter one, so as not to wait out 10 seconds).
 */
export async function declareSettlementStream(connection: NatsConnection, ackWaitMs = SETTLEMENT_ACK_WAIT_MS): Promise<JetStreamManager> {
  const manager = await connection.jetstreamManager();
  await declareStream(manager, STREAM_CONFIG, true);
  await declareDurable(manager, SETTLEMENT_STREAM.name, SETTLEMENT_STREAM.consumer, {
    ack_wait: ackWaitMs * 1e6,
    // A settlement is never dropped: a batch that cannot be posted is retried until it can.
    max_deliver: -1,
    max_ack_pending: 4 * SETTLEMENT_BATCH_MAX,
  });
  return manager;
}

/**
 * Pulls settlements and posts them in batches: whatever arrived while the previous batch was being posted goes
 * into the next one (up to SETTLEMENT_BATCH_MAX), in one transaction. Messages are acknowledged after the commit;
 * when the transaction fails they are handed back for redelivery, and a replica that dies mid-batch leaves them
 * unacknowledged, so JetStream redelivers them after the consumer's ack wait (SETTLEMENT_ACK_WAIT_MS). A settlement
 * the ledger refuses (a CONFLICT, an unknown execution, an invalid message) is acknowledged and logged: delivering it
 * again cannot change it.
 */
export class SettlementConsumer implements SettlementBacklog {
  private messages: ConsumerMessages | null = null;
  private manager: JetStreamManager | null = null;
  /** Messages read as they arrived, with the settlements each carries (a runner's batch, or one). */
  private waiting: Received[] = [];
  private scheduled: NodeJS.Timeout | null = null;
  private posting: Promise<void> = Promise.resolve();
  private busy = false;

  constructor(
    private readonly connection: NatsConnection,
    private readonly reservations: ReservationsService,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.manager = await declareSettlementStream(this.connection);
    this.messages = await consumeDurable(this.connection, SETTLEMENT_STREAM.name, SETTLEMENT_STREAM.consumer, 2 * SETTLEMENT_BATCH_MAX, (message) =>
      this.receive(message),
    );
  }

  async stop(): Promise<void> {
    // Messages taken but not posted are left unacknowledged: another replica gets them after the ack wait.
    try {
      this.messages?.stop();
    } catch (error) {
      this.logger.warn({ err: error }, 'the settlements consumer did not stop cleanly');
    }
    this.messages = null;
    if (this.scheduled) clearTimeout(this.scheduled);
    this.scheduled = null;
    await this.posting;
  }

  async caughtUp(): Promise<void> {
    if (!this.manager) return;
    const deadline = Date.now() + CATCH_UP_MAX_MS;
    try {
      const published = (await this.manager.streams.info(SETTLEMENT_STREAM.name)).state.last_seq;
      while (Date.now() < deadline) {
        const consumer = await this.manager.consumers.info(SETTLEMENT_STREAM.name, SETTLEMENT_STREAM.consumer);
        if (consumer.ack_floor.stream_seq >= published) return;
        await new Promise((resolve) => setTimeout(resolve, CATCH_UP_POLL_MS));
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'could not tell whether settlements are posted; answering with the ledger as it is');
    }
  }

  private receive(message: JsMsg): void {
    this.waiting.push({ message, settlements: parseSettlements(message.data) });
    this.schedule();
  }

  private schedule(): void {
    if (this.busy || this.scheduled || this.waiting.length === 0) return;
    this.scheduled = setTimeout(() => {
      this.scheduled = null;
      this.busy = true;
      this.posting = this.postWaiting()
        .catch((error: unknown) => this.logger.error({ err: error }, 'settlement batch failed'))
        .finally(() => {
          this.busy = false;
          this.schedule();
        });
    }, BATCH_GATHER_MS);
  }

  private async postWaiting(): Promise<void> {
    while (this.waiting.length > 0) {
      // Whole messages, up to SETTLEMENT_BATCH_MAX settlements (at least one message, however large).
      let count = 0;
      let messages = 0;
      const size = (entry: Received) => entry.settlements?.length ?? 1;
      while (messages < this.waiting.length && (messages === 0 || count + size(this.waiting[messages]!) <= SETTLEMENT_BATCH_MAX)) {
        count += size(this.waiting[messages]!);
        messages++;
      }
      await this.postBatch(this.waiting.splice(0, messages));
    }
  }

  /** Posts one batch in one transaction, then acknowledges each message, or hands them all back. */
  private async postBatch(parsed: Received[]): Promise<void> {
    const valid = parsed.filter((entry): entry is { message: JsMsg; settlements: BillingSettlement[] } => entry.settlements !== null);
    for (const entry of parsed) {
      if (entry.settlements === null) {
        this.logger.error({ subject: entry.message.subject, seq: entry.message.seq }, 'dropped a settlement message that is not a settlement');
        entry.message.term();
      }
    }
    if (valid.length === 0) return;
    const settlements = valid.flatMap((entry) => entry.settlements);
    let outcomes;
    try {
      outcomes = await consumeBatchTraced(
        SETTLEMENT_STREAM.name,
        valid.map((entry) => entry.message),
        () => this.reservations.settleBatch(settlements),
      );
    } catch (error) {
      this.logger.error({ err: error, count: settlements.length }, 'could not post a batch of settlements; they will be delivered again');
      for (const entry of valid) entry.message.nak(RETRY_DELAY_MS);
      return;
    }
    settlements.forEach((settlement, index) => {
      const outcome = outcomes[index];
      if (outcome instanceof ServiceError) {
        this.logger.warn(
          { workspaceId: settlement.workspaceId, executionId: settlement.executionId, code: outcome.code, reason: outcome.message },
          'the ledger refused a settlement',
        );
      }
    });
    for (const entry of valid) entry.message.ack();
  }
}

interface Received {
  message: JsMsg;
  /** null: not settlements at all; terminated rather than delivered again. */
  settlements: BillingSettlement[] | null;
}

/**
 * The settlements of a message: a runner's batch (`{ settlements: [...] }`) or a single settlement. A batch
 * with any item that is not a settlement is refused whole (null): it was not written by a runner.
 */
export function parseSettlements(data: Uint8Array): BillingSettlement[] | null {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return null;
  }
  if (value !== null && typeof value === 'object' && Array.isArray((value as { settlements?: unknown }).settlements)) {
    const items = (value as { settlements: unknown[] }).settlements.map(asSettlement);
    return items.length > 0 && items.every((item) => item !== null) ? (items as BillingSettlement[]) : null;
  }
  const single = asSettlement(value);
  return single ? [single] : null;
}

function asSettlement(input: unknown): BillingSettlement | null {
  const value = input as Partial<BillingSettlement> | null;
  if (
    !value ||
    typeof value !== 'object' ||
    typeof value.workspaceId !== 'string' ||
    typeof value.executionId !== 'string' ||
    typeof value.billable !== 'boolean'
  )
    return null;
  const settlement: BillingSettlement = { workspaceId: value.workspaceId, executionId: value.executionId, billable: value.billable };
  // Checked with the rest of the request when the batch is settled.
  if (value.leaseId !== undefined) settlement.leaseId = value.leaseId;
  // Settlements published before the decision rode along have none: they are booked under no decision.
  if (value.decisionId !== undefined) settlement.decisionId = value.decisionId;
  return settlement;
}

import { ConsumerMessages, JsMsg, NatsConnection, RetentionPolicy, StorageType, StreamConfig } from 'nats';
import { ServiceName, WORKSPACE_EVENTS_STREAM, WorkspaceDeletedEvent } from '@ds/contracts';
import { consumeDurable, declareDurable, declareStream } from './jetstream-durables';
import { Logger } from './logger';

/**
 * Workspace events are kept 30 days whoever has read them, so that a service whose consumer is created after
 * a deletion (a new deployment, a replica down for a while) still removes that workspace's rows.
 */
const STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: WORKSPACE_EVENTS_STREAM.name,
  subjects: [...WORKSPACE_EVENTS_STREAM.subjects],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  max_age: 30 * 24 * 3600 * 1e9,
  duplicate_window: 120 * 1e9,
};

const ACK_WAIT_NS = 30 * 1e9;
const RETRY_DELAY_MS = 2_000;

/** Declares the stream when it does not exist yet; every participant calls it, whoever starts first. */
export async function declareWorkspaceEvents(connection: NatsConnection): Promise<void> {
  await declareStream(await connection.jetstreamManager(), STREAM_CONFIG, false);
}

/** Publishes a deletion once (JetStream drops a duplicate with the same message id within two minutes). */
export async function publishWorkspaceDeleted(connection: NatsConnection, event: WorkspaceDeletedEvent): Promise<void> {
  await connection.jetstream().publish(WORKSPACE_EVENTS_STREAM.deletedSubject(event.workspaceId), JSON.stringify(event), {
    msgID: WORKSPACE_EVENTS_STREAM.msgIdFor(event.workspaceId),
  });
}

/**
 * A service's durable consumer of deleted workspaces: `purge` removes everything the service holds of the
 * workspace and must be idempotent. A purge that fails is handed back and retried; the message is acknowledged
 * only after it succeeded, so a replica that dies mid-purge leaves it to another.
 */
export class WorkspaceDeletions {
  private messages: ConsumerMessages | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly connection: NatsConnection,
    private readonly service: ServiceName,
    private readonly purge: (event: WorkspaceDeletedEvent) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await declareWorkspaceEvents(this.connection);
    const durable = WORKSPACE_EVENTS_STREAM.consumerFor(this.service);
    await declareDurable(await this.connection.jetstreamManager(), WORKSPACE_EVENTS_STREAM.name, durable, { ack_wait: ACK_WAIT_NS, max_deliver: -1 });
    this.messages = await consumeDurable(this.connection, WORKSPACE_EVENTS_STREAM.name, durable, 16, (message) => {
      this.running = this.running.then(() => this.handle(message));
    });
  }

  async stop(): Promise<void> {
    try {
      this.messages?.stop();
    } catch (error) {
      this.logger.warn({ err: error }, 'the workspace-events consumer did not stop cleanly');
    }
    this.messages = null;
    await this.running;
  }

  private async handle(message: JsMsg): Promise<void> {
    const event = parseWorkspaceEvent(message.data);
    if (!event) {
      this.logger.error({ subject: message.subject, seq: message.seq }, 'dropped a workspace event that is not one');
      message.term();
      return;
    }
    try {
      await this.purge(event);
      message.ack();
      this.logger.info({ workspaceId: event.workspaceId }, 'removed a deleted workspace');
    } catch (error) {
      this.logger.error({ err: error, workspaceId: event.workspaceId }, 'could not remove a deleted workspace; it will be retried');
      message.nak(RETRY_DELAY_MS);
    }
  }
}

export function parseWorkspaceEvent(data: Uint8Array): WorkspaceDeletedEvent | null {
  try {
    const value = JSON.parse(Buffer.from(data).toString('utf8')) as Partial<WorkspaceDeletedEvent> | null;
    if (!value || typeof value.workspaceId !== 'string') return null;
    // null: a workspace its Owner deleted, not a partner's sub-workspace.
    if (typeof value.partnerWorkspaceId !== 'string' && value.partnerWorkspaceId !== null) return null;
    return { workspaceId: value.workspaceId, partnerWorkspaceId: value.partnerWorkspaceId, deletedAt: String(value.deletedAt) };
  } catch {
    return null;
  }
}

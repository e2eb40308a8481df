import { AckPolicy, ConsumerConfig, ConsumerMessages, ConsumerUpdateConfig, DeliverPolicy, JetStreamManager, JsMsg, NatsConnection, StreamConfig } from 'nats';

/** JetStream's answer for a stream or consumer that does not exist. */
export function isNotFound(error: unknown): boolean {
  return /not found/i.test((error as Error)?.message ?? '');
}

/**
 * Declares a stream, safe on every start of every replica and from every service that uses it: one that exists is
 * updated to `config` (`update: true`) or left as it is, and one another process declared meanwhile is not an error.
 */
export async function declareStream(manager: JetStreamManager, config: Partial<StreamConfig> & { name: string }, update: boolean): Promise<void> {
  try {
    await manager.streams.info(config.name);
    if (update) await manager.streams.update(config.name, config);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    try {
      await manager.streams.add(config);
    } catch (raced) {
      if (!/already in use|exists/i.test((raced as Error)?.message ?? '')) throw raced;
    }
  }
}

/**
 * Declares a durable pull consumer acknowledging each message explicitly, from the start of the stream: `created`
 * applies only when it is made here; one that exists keeps its settings, but for `update` where given.
 */
export async function declareDurable(
  manager: JetStreamManager,
  stream: string,
  durable: string,
  created: Partial<ConsumerConfig>,
  update?: Partial<ConsumerUpdateConfig>,
): Promise<void> {
  try {
    await manager.consumers.info(stream, durable);
    if (update) await manager.consumers.update(stream, durable, update);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await manager.consumers.add(stream, { ...created, durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All });
  }
}

/**
 * Hands each message of a durable consumer to `receive`, pulling at most `ahead` messages before they are handled.
 * Stopping leaves messages taken but not acknowledged to be delivered again after the consumer's ack wait.
 */
export async function consumeDurable(
  connection: NatsConnection,
  stream: string,
  durable: string,
  ahead: number,
  receive: (message: JsMsg) => void,
): Promise<ConsumerMessages> {
  const consumer = await connection.jetstream().consumers.get(stream, durable);
  return consumer.consume({ max_messages: ahead, callback: receive });
}

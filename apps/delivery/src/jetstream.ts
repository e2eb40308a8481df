import { AckPolicy, DeliverPolicy, JetStreamManager, NatsConnection, RetentionPolicy, StorageType, StreamConfig } from 'nats';
import { DELIVERY_STREAM } from '@ds/contracts';

/** Deliveries are retained 30 days (the spec's retention), and a message's id deduplicates republishing for 2 minutes. */
const STREAM_CONFIG: Partial<StreamConfig> = {
  name: DELIVERY_STREAM.name,
  subjects: [...DELIVERY_STREAM.subjects],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  max_age: 30 * 24 * 3600 * 1e9,
  duplicate_window: 120 * 1e9,
};

/**
 * Declares the delivery stream and its durable consumer. Safe to run on every start of every replica:
 * an existing stream is updated to this configuration, an existing consumer is left as it is.
 */
export async function declareDeliveryStream(connection: NatsConnection): Promise<JetStreamManager> {
  const manager = await connection.jetstreamManager();
  try {
    await manager.streams.info(DELIVERY_STREAM.name);
    await manager.streams.update(DELIVERY_STREAM.name, STREAM_CONFIG);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await manager.streams.add(STREAM_CONFIG);
  }
  try {
    await manager.consumers.info(DELIVERY_STREAM.name, DELIVERY_STREAM.consumer);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await manager.consumers.add(DELIVERY_STREAM.name, {
      durable_name: DELIVERY_STREAM.consumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: 30 * 1e9,
      max_deliver: 6,
    });
  }
  return manager;
}

function isNotFound(error: unknown): boolean {
  return /not found/i.test((error as Error)?.message ?? '');
}

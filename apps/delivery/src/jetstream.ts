import { ConsumerConfig, JetStreamManager, NatsConnection, RetentionPolicy, StorageType, StreamConfig } from 'nats';
import { DELIVERY_STREAM } from '@ds/contracts';
import { declareDurable, declareStream } from '@ds/platform';

/** Deliveries are retained 30 days (the spec's retention), and a message's id deduplicates republishing for 2 minutes. */
const STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: DELIVERY_STREAM.name,
  subjects: [...DELIVERY_STREAM.subjects],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  max_age: 30 * 24 * 3600 * 1e9,
  duplicate_window: 120 * 1e9,
};

/**
 * The consumer's settings that may change between versions. Attempts are counted in the database, not by
 * JetStream (a message handed back because its lane was full, or redelivered after a crash, is not an attempt),
 * so deliveries are unlimited. A message waiting hours for its retry stays unacknowledged, so acknowledgements
 * pending are unlimited too; a replica holds only what its lanes allow and hands the rest back. Held messages are
 * reported in progress every few seconds, so the ack wait only matters when a replica dies: its messages come
 * back after it.
 */
const CONSUMER_SETTINGS: Partial<ConsumerConfig> = {
  ack_wait: 20 * 1e9,
  max_deliver: -1,
  max_ack_pending: -1,
};

/**
 * Declares the delivery stream and its durable consumer. Safe to run on every start of every replica:
 * an existing stream is updated to this configuration, an existing consumer gets the settings above.
 */
export async function declareDeliveryStream(connection: NatsConnection): Promise<JetStreamManager> {
  const manager = await connection.jetstreamManager();
  await declareStream(manager, STREAM_CONFIG, true);
  await declareDurable(manager, DELIVERY_STREAM.name, DELIVERY_STREAM.consumer, CONSUMER_SETTINGS, CONSUMER_SETTINGS);
  return manager;
}

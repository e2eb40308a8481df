import { JetStreamManager } from 'nats';
import { Metrics } from './metrics';

interface ConsumerBacklog {
  pending: number;
  ackPending: number;
  oldestAgeSeconds: number;
}

/**
 * Backlog gauges of a durable JetStream consumer, read from the server when scraped (one consumer-info
 * request, and one message lookup while something is pending), so that the delivery service can be
 * autoscaled on its lag and alerted on its oldest message.
 *
 * The oldest pending message is taken to be the one right after the consumer's acknowledgement floor:
 * with acknowledgements out of order it may already be acknowledged, so the age is an upper bound.
 */
export function watchConsumerBacklog(metrics: Metrics, manager: JetStreamManager, stream: string, consumer: string): void {
  const labels = { stream, consumer };
  let latest: Promise<ConsumerBacklog | null> | null = null;
  // The three gauges are scraped together; one lookup serves them all.
  const read = (): Promise<ConsumerBacklog | null> =>
    (latest ??= backlog(manager, stream, consumer)
      .catch(() => null)
      .finally(() => setImmediate(() => (latest = null))));
  const gauge = (name: string, help: string, pick: (b: ConsumerBacklog) => number) =>
    metrics.gauge(name, help, ['stream', 'consumer'], async () => {
      const current = await read();
      return current === null ? [] : [[labels, pick(current)]];
    });
  gauge('decision_service_jetstream_consumer_pending_messages', 'Messages of the stream not yet delivered to the durable consumer', (b) => b.pending);
  gauge('decision_service_jetstream_consumer_ack_pending_messages', 'Messages delivered to the durable consumer and not yet acknowledged', (b) => b.ackPending);
  gauge(
    'decision_service_jetstream_consumer_oldest_pending_age_seconds',
    'Age of the oldest message the durable consumer has not acknowledged (0 when none)',
    (b) => b.oldestAgeSeconds,
  );
}

async function backlog(manager: JetStreamManager, stream: string, consumer: string): Promise<ConsumerBacklog> {
  const info = await manager.consumers.info(stream, consumer);
  const pending = info.num_pending;
  const ackPending = info.num_ack_pending;
  let oldestAgeSeconds = 0;
  if (pending + ackPending > 0) {
    const message = await manager.streams.getMessage(stream, { seq: info.ack_floor.stream_seq + 1 }).catch(() => null);
    if (message) oldestAgeSeconds = Math.max(0, (Date.now() - message.time.getTime()) / 1000);
  }
  return { pending, ackPending, oldestAgeSeconds };
}

import { AckPolicy, JsMsg } from 'nats';
import { NatsServer, startNats } from '../../../test/e2e/support/cluster';
import { watchConsumerBacklog } from './jetstream-metrics';
import { createLogger } from './logger';
import { Metrics } from './metrics';
import { NatsLink } from './nats';

/** The backlog gauges of a durable consumer, read from a real nats-server when scraped. */
describe('JetStream consumer backlog gauges', () => {
  let nats: NatsServer;
  let link: NatsLink;
  const metrics = new Metrics('delivery');
  const value = async (name: string) => {
    const text = await metrics.registry.getSingleMetricAsString(name);
    const match = new RegExp(`^${name}\\{stream="WORK",consumer="worker",service="delivery"\\} (\\S+)$`, 'm').exec(text);
    return match ? Number(match[1]) : null;
  };

  beforeAll(async () => {
    nats = await startNats();
    link = await NatsLink.open(nats.url, 'backlog-spec', createLogger('delivery', 'silent'));
    const manager = await link.connection.jetstreamManager();
    await manager.streams.add({ name: 'WORK', subjects: ['work.>'] });
    await manager.consumers.add('WORK', { durable_name: 'worker', ack_policy: AckPolicy.Explicit });
    watchConsumerBacklog(metrics, manager, 'WORK', 'worker');
  });

  afterAll(async () => {
    await link?.close();
    await nats?.stop();
  });

  it('reads zero for an empty stream', async () => {
    expect(await value('decision_service_jetstream_consumer_pending_messages')).toBe(0);
    expect(await value('decision_service_jetstream_consumer_oldest_pending_age_seconds')).toBe(0);
  });

  it('counts pending and unacknowledged messages, and ages the oldest one until it is acknowledged', async () => {
    const js = link.connection.jetstream();
    for (let i = 0; i < 3; i++) await js.publish('work.a', new TextEncoder().encode(String(i)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await value('decision_service_jetstream_consumer_pending_messages')).toBe(3);
    expect(await value('decision_service_jetstream_consumer_oldest_pending_age_seconds')).toBeGreaterThan(0);

    const consumer = await js.consumers.get('WORK', 'worker');
    const taken: JsMsg[] = [];
    for await (const message of await consumer.fetch({ max_messages: 2, expires: 1_000 })) taken.push(message);
    expect(taken).toHaveLength(2);
    expect(await value('decision_service_jetstream_consumer_pending_messages')).toBe(1);
    expect(await value('decision_service_jetstream_consumer_ack_pending_messages')).toBe(2);

    for (const message of taken) await message.ackAck();
    const rest = await consumer.next({ expires: 1_000 });
    await rest!.ackAck();
    expect(await value('decision_service_jetstream_consumer_pending_messages')).toBe(0);
    expect(await value('decision_service_jetstream_consumer_ack_pending_messages')).toBe(0);
    expect(await value('decision_service_jetstream_consumer_oldest_pending_age_seconds')).toBe(0);
  });
});

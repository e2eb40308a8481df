import { AckPolicy, JsMsg } from 'nats';
import { NatsServer, startNats } from '../../../test/e2e/support/cluster';
import { consumeDurable, declareDurable, declareStream } from './jetstream-durables';
import { createLogger } from './logger';
import { NatsLink } from './nats';

/** Streams and durable consumers declared and read on a real nats-server of their own. */
describe('durable JetStream consumers', () => {
  let nats: NatsServer;
  let link: NatsLink;

  beforeAll(async () => {
    nats = await startNats();
    link = await NatsLink.open(nats.url, 'durables-spec', createLogger('delivery', 'silent'));
  });

  afterAll(async () => {
    await link?.close();
    await nats?.stop();
  });

  it('declares a stream once, updates it only when asked, and takes a declaration raced by another process in its stride', async () => {
    const manager = await link.connection.jetstreamManager();
    await Promise.all([1, 2, 3].map(() => declareStream(manager, { name: 'ONCE', subjects: ['once.>'], max_msgs: 10 }, false)));
    expect((await manager.streams.info('ONCE')).config.max_msgs).toBe(10);
    await declareStream(manager, { name: 'ONCE', subjects: ['once.>'], max_msgs: 20 }, false);
    expect((await manager.streams.info('ONCE')).config.max_msgs).toBe(10);
    await declareStream(manager, { name: 'ONCE', subjects: ['once.>'], max_msgs: 20 }, true);
    expect((await manager.streams.info('ONCE')).config.max_msgs).toBe(20);
  });

  it('makes a durable with explicit acks from the stream’s start, keeps an existing one’s settings but for what is updated', async () => {
    const manager = await link.connection.jetstreamManager();
    await declareStream(manager, { name: 'DURABLE', subjects: ['durable.>'] }, false);
    await declareDurable(manager, 'DURABLE', 'reader', { ack_wait: 5e9, max_deliver: -1 });
    const made = (await manager.consumers.info('DURABLE', 'reader')).config;
    expect(made).toMatchObject({ durable_name: 'reader', ack_policy: AckPolicy.Explicit, deliver_policy: 'all', ack_wait: 5e9, max_deliver: -1 });
    await declareDurable(manager, 'DURABLE', 'reader', { ack_wait: 9e9 });
    expect((await manager.consumers.info('DURABLE', 'reader')).config.ack_wait).toBe(5e9);
    await declareDurable(manager, 'DURABLE', 'reader', { ack_wait: 9e9 }, { ack_wait: 7e9 });
    expect((await manager.consumers.info('DURABLE', 'reader')).config.ack_wait).toBe(7e9);
  });

  it('hands every message to the receiver, and one left unacknowledged at a stop comes back to the next reader', async () => {
    const manager = await link.connection.jetstreamManager();
    await declareStream(manager, { name: 'READ', subjects: ['read.>'] }, false);
    await declareDurable(manager, 'READ', 'reader', { ack_wait: 1e9 });
    const js = link.connection.jetstream();
    for (const n of [1, 2, 3]) await js.publish(`read.${n}`, String(n));

    const firstSeen: string[] = [];
    let held: JsMsg | null = null;
    const first = await consumeDurable(link.connection, 'READ', 'reader', 8, (message) => {
      firstSeen.push(message.string());
      if (message.string() === '2') held = message;
      else message.ack();
    });
    for (let tries = 0; tries < 200 && firstSeen.length < 3; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    first.stop();
    expect(firstSeen).toEqual(['1', '2', '3']);
    expect(held).not.toBeNull();

    const secondSeen: string[] = [];
    const second = await consumeDurable(link.connection, 'READ', 'reader', 8, (message) => {
      secondSeen.push(message.string());
      message.ack();
    });
    for (let tries = 0; tries < 400 && secondSeen.length < 1; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    second.stop();
    expect(secondSeen).toEqual(['2']);
  });
});

import { connect, NatsConnection } from 'nats';
import { flushOncePerTurn } from './nats-write-coalescing';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** Counts the writes the connection hands to its socket. */
function countWrites(connection: NatsConnection): () => number {
  const transport = (connection as unknown as { protocol: { transport: { send(frame: Uint8Array): void } } }).protocol.transport;
  const send = transport.send.bind(transport);
  let writes = 0;
  transport.send = (frame: Uint8Array) => {
    writes += 1;
    send(frame);
  };
  return () => writes;
}

describe('flushing NATS writes once per event-loop turn', () => {
  let publisher: NatsConnection;
  let receiver: NatsConnection;

  beforeEach(async () => {
    publisher = await connect({ servers: NATS_URL });
    receiver = await connect({ servers: NATS_URL });
  });

  afterEach(async () => {
    await Promise.all([publisher.close(), receiver.close()]);
  });

  it('recognises the installed nats.js', () => {
    expect(flushOncePerTurn(publisher)).toBe(true);
  });

  it('sends what I/O callbacks of one turn publish in one write, and every message arrives in order', async () => {
    const subject = `coalescing.${Math.random().toString(36).slice(2)}`;
    const received: string[] = [];
    const all = new Promise<void>((resolve) => {
      receiver.subscribe(subject, { callback: (_error, message) => (received.push(message.string()), received.length === 20 && resolve()) });
    });
    await receiver.flush();
    flushOncePerTurn(publisher);
    const writes = countWrites(publisher);
    // Separate promise chains, as replies of different handlers finishing in one turn would be.
    await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        await Promise.resolve();
        for (let depth = 0; depth < index % 4; depth += 1) await Promise.resolve();
        publisher.publish(subject, String(index));
      }),
    );
    await all;
    expect(writes()).toBe(1);
    expect(received).toEqual(
      Array.from({ length: 20 }, (_, index) => String(index)).sort((a, b) => (Number(a) % 4) - (Number(b) % 4) || Number(a) - Number(b)),
    );
  });

  it('without it, the same publishes leave in more than one write', async () => {
    const writes = countWrites(publisher);
    await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        for (let depth = 0; depth < index % 4; depth += 1) await Promise.resolve();
        publisher.publish('coalescing.unobserved', String(index));
      }),
    );
    await publisher.flush();
    expect(writes()).toBeGreaterThan(1);
  });

  it('still answers requests, and writes at once what passes the size threshold', async () => {
    flushOncePerTurn(publisher);
    const subject = `coalescing.echo.${Math.random().toString(36).slice(2)}`;
    receiver.subscribe(subject, { callback: (_error, message) => message.respond(message.data) });
    await receiver.flush();
    const reply = await publisher.request(subject, new TextEncoder().encode('ping'), { timeout: 2_000 });
    expect(reply.string()).toBe('ping');
    const writes = countWrites(publisher);
    publisher.publish('coalescing.unobserved', new Uint8Array(64 * 1024));
    expect(writes()).toBe(1);
  });
});

import { connect, type NatsConnection } from 'nats';
import { DELIVERY_STREAM, type DeliveryMessage } from '@ds/contracts';
import { createLogger, Metrics, type RpcClient } from '@ds/platform';
import { startNats, type NatsServer } from '../../../../test/e2e/support/cluster';
import { DestinationCalls } from './destination-calls';
import { runnerTestConfig } from '../../../../test/support/service-configs';

/** Publishing deliveries against a real nats-server with JetStream (on the PATH, as for the e2e tests). */
let server: NatsServer;
let nats: NatsConnection;
let calls: DestinationCalls;
let metrics: Metrics;

const config = runnerTestConfig();

beforeAll(async () => {
  server = await startNats();
  nats = await connect({ servers: server.url });
  metrics = new Metrics('decision-runner');
  calls = new DestinationCalls({} as RpcClient, nats.jetstream(), config, createLogger('decision-runner', 'silent'), metrics);
});

afterAll(async () => {
  await nats.close();
  await server.stop();
});

let next = 0;
const message = (workspaceId = 'ws-1'): DeliveryMessage => ({
  deliveryId: `dlv_test${String(++next).padStart(16, '0')}`,
  workspaceId,
  decisionId: 'dec_1',
  decisionSlug: 'triage',
  executionId: 'exec_1',
  destinationKey: 'ops',
  kind: 'webhook',
  livemode: true,
  url: 'https://hooks.example.com/',
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: '{"id":"x"}',
  createdAt: new Date().toISOString(),
});

async function outcome(value: string): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'decision_service_destination_outcomes_total');
  return (metric?.values as Array<{ value: number; labels: Record<string, string> }> | undefined)?.find((v) => v.labels.outcome === value)?.value ?? 0;
}

describe('DestinationCalls.publish', () => {
  it('answers false for every delivery when the stream does not exist, and counts them unavailable', async () => {
    expect(await calls.publish([message(), message()])).toEqual([false, false]);
    expect(await outcome('unavailable')).toBe(2);
  });

  it('stores each delivery under its id, and a second publish of the same id is stored once', async () => {
    const manager = await nats.jetstreamManager();
    await manager.streams.add({ name: DELIVERY_STREAM.name, subjects: [...DELIVERY_STREAM.subjects], duplicate_window: 120 * 1e9 });
    const first = message('ws-2');
    const second = message('ws-2');
    expect(await calls.publish([first, second])).toEqual([true, true]);
    expect(await calls.publish([first])).toEqual([true]);
    const info = await manager.streams.info(DELIVERY_STREAM.name, { subjects_filter: DELIVERY_STREAM.subjectFor('ws-2') });
    expect(info.state.messages).toBe(2);
    const stored = await manager.streams.getMessage(DELIVERY_STREAM.name, { last_by_subj: DELIVERY_STREAM.subjectFor('ws-2') });
    expect(stored.header.get('Nats-Msg-Id')).toBe(second.deliveryId);
    expect(stored.json<DeliveryMessage>()).toEqual(second);
  });

  it('answers false when NATS is down, after its bounded wait', async () => {
    await server.stop();
    try {
      expect(await calls.publish([message('ws-3')])).toEqual([false]);
    } finally {
      await server.start();
    }
  });
});

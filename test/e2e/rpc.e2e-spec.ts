import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, MessagePattern, NatsContext, Payload } from '@nestjs/microservices';
import pino from 'pino';
import { REQUEST_ID_HEADER, rpcSubject, ServiceError } from '@ds/contracts';
import { JsonText, Metrics, NatsLink, OutcomeUnknown, RpcClient, SharedConnectionNatsServer, WireErrorFilter } from '@ds/platform';
import { NatsServer, startNats } from './support/cluster';

/**
 * The request/reply path every service uses, against a real NATS server: the payload as the handler
 * receives it (JSON text fields spliced in as they came), errors and their codes, no responder, a
 * timeout, a dropped connection, and the metrics of both sides.
 */

let releaseHeld: (() => void) | null = null;

/** The probe's subjects, declared as services declare theirs in @ds/contracts. */
const PROBE = {
  echo: rpcSubject<Record<string, unknown>, { received: any; requestId: string | null }>('probe.echo'),
  refuse: rpcSubject<Record<string, unknown>, never>('probe.refuse'),
  held: rpcSubject<Record<string, unknown>, { released: true }>('probe.held'),
  nobodyHere: rpcSubject<Record<string, unknown>, never>('probe.nobody-here'),
};

@Controller()
class ProbeHandlers {
  @MessagePattern('probe.echo')
  echo(@Payload() request: unknown, @Ctx() context: NatsContext) {
    return { received: request, requestId: context.getHeaders()?.get(REQUEST_ID_HEADER) ?? null };
  }

  @MessagePattern('probe.refuse')
  refuse() {
    throw new ServiceError('DECISION_NOT_FOUND', 'No decision with this slug in this workspace.');
  }

  @MessagePattern('probe.held')
  held() {
    return new Promise((resolve) => (releaseHeld = () => resolve({ released: true })));
  }
}

@Module({ controllers: [ProbeHandlers] })
class ProbeModule {}

async function sample(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((candidate) => candidate.name === name);
  const match = metric?.values.find((value) => Object.entries(labels).every(([key, expected]) => value.labels[key] === expected));
  return match?.value ?? 0;
}

describe('request/reply between services over NATS', () => {
  let nats: NatsServer;
  let serverLink: NatsLink;
  let clientLink: NatsLink;
  let micro: INestMicroservice;
  let rpc: RpcClient;
  let serverMetrics: Metrics;
  let clientMetrics: Metrics;

  beforeAll(async () => {
    nats = await startNats();
    const logger = pino({ level: 'silent' });
    [serverLink, clientLink] = await Promise.all([NatsLink.open(nats.url, 'probe-server', logger), NatsLink.open(nats.url, 'probe-client', logger)]);
    serverMetrics = new Metrics('probe-server');
    clientMetrics = new Metrics('probe-client');
    micro = await NestFactory.createMicroservice(ProbeModule, { strategy: new SharedConnectionNatsServer(serverLink, 'probe', serverMetrics), logger: false });
    micro.useGlobalFilters(new WireErrorFilter(logger));
    await micro.listen();
    // The subscriptions are sent; a flush returns once the server has them, so the first call finds a responder.
    await serverLink.connection.flush();
    rpc = new RpcClient(clientLink, clientMetrics);
  }, 30_000);

  afterAll(async () => {
    await micro?.close();
    await serverLink?.close();
    await clientLink?.close();
    await nats?.stop();
  });

  it('hands the handler the payload, with a JSON text field as the value it spells, and the request id', async () => {
    const body = '{ "state": {"message": "caf\\u00e9", "amount": 120}, "list": [1, 2.5, null] }';
    const answer = await rpc.call(PROBE.echo, { slug: 'triage', body: new JsonText(body), livemode: true }, { requestId: 'req_rpc_1' });
    expect(answer).toEqual({
      received: { slug: 'triage', livemode: true, body: { state: { message: 'café', amount: 120 }, list: [1, 2.5, null] } },
      requestId: 'req_rpc_1',
    });
  });

  it('answers many concurrent calls each with its own answer', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, n) => rpc.call(PROBE.echo, { n })));
    expect(answers.map((answer) => answer.received.n)).toEqual(Array.from({ length: 200 }, (_, n) => n));
  });

  it('turns a handler’s refusal back into the ServiceError it threw, and counts it on both sides by its code', async () => {
    const before = await sample(serverMetrics, 'decision_service_rpc_handled_total', { subject: 'probe.refuse', outcome: 'DECISION_NOT_FOUND' });
    await expect(rpc.call(PROBE.refuse, {})).rejects.toMatchObject({
      code: 'DECISION_NOT_FOUND',
      status: 404,
      message: 'No decision with this slug in this workspace.',
    });
    expect(await sample(serverMetrics, 'decision_service_rpc_handled_total', { subject: 'probe.refuse', outcome: 'DECISION_NOT_FOUND' })).toBe(before + 1);
    expect(await sample(clientMetrics, 'decision_service_rpc_calls_total', { subject: 'probe.refuse', outcome: 'DECISION_NOT_FOUND' })).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('counts each handled request once, as ok', async () => {
    const before = await sample(serverMetrics, 'decision_service_rpc_handled_total', { subject: 'probe.echo', outcome: 'ok' });
    await Promise.all([rpc.call(PROBE.echo, { a: 1 }), rpc.call(PROBE.echo, { a: 2 }), rpc.call(PROBE.echo, { a: 3 })]);
    expect(await sample(serverMetrics, 'decision_service_rpc_handled_total', { subject: 'probe.echo', outcome: 'ok' })).toBe(before + 3);
  });

  it('answers 503 at once when no service listens on the subject', async () => {
    await expect(rpc.call(PROBE.nobodyHere, {}, { timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringMatching(/not available/),
    });
  });

  it('reports a call whose answer does not come in time as an unknown outcome', async () => {
    const held = rpc.call(PROBE.held, {}, { timeoutMs: 150 });
    await expect(held).rejects.toBeInstanceOf(OutcomeUnknown);
    releaseHeld?.();
  });

  it('ends a waiting call as an unknown outcome when the link reports a dropped connection, and calls again afterwards', async () => {
    const held = rpc.call(PROBE.held, {}, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    clientLink.disconnects.next();
    await expect(held).rejects.toBeInstanceOf(OutcomeUnknown);
    releaseHeld?.();
    await expect(rpc.call(PROBE.echo, { again: true })).resolves.toMatchObject({ received: { again: true } });
  });
});

import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Msg } from 'nats';
import { rpcSubject } from '@ds/contracts';
import { NatsServer, startNats } from '../../../test/e2e/support/cluster';
import { createLogger } from './logger';
import { Metrics } from './metrics';
import { NatsLink, RpcClient } from './nats';
import { runWithRequestContext } from './request-context';
import * as tracing from './tracing';

/** The spec's subjects, declared as services declare theirs in @ds/contracts. */
const SPEC = {
  echo: rpcSubject<Record<string, unknown>, string>('spec.echo'),
  silent: rpcSubject<Record<string, unknown>, never>('spec.silent'),
};

/**
 * The calling side of a NATS hop against a real nats-server: what the request carries in its headers with
 * tracing off and on, and the metrics of calls that are never answered.
 */
describe('RpcClient headers and call metrics', () => {
  let nats: NatsServer;
  let link: NatsLink;
  let metrics: Metrics;
  let rpc: RpcClient;
  const received: Msg[] = [];

  beforeAll(async () => {
    nats = await startNats();
    link = await NatsLink.open(nats.url, 'tracing-spec', createLogger('gateway', 'silent'));
    metrics = new Metrics('gateway');
    rpc = new RpcClient(link, metrics);
    link.connection.subscribe('spec.echo', {
      callback: (_error, message) => {
        received.push(message);
        message.respond(new TextEncoder().encode(JSON.stringify({ id: '1', response: 'ok', isDisposed: true })));
      },
    });
    link.connection.subscribe('spec.silent', { callback: () => undefined });
    await link.connection.flush();
  });

  afterAll(async () => {
    await link?.close();
    await nats?.stop();
  });

  it('sends the request id and deadline but no traceparent while tracing is off', async () => {
    expect(tracing.tracer).toBeNull();
    await expect(rpc.call(SPEC.echo, {}, { requestId: 'req_off' })).resolves.toBe('ok');
    const headers = received.at(-1)!.headers!;
    expect(headers.get('x-request-id')).toBe('req_off');
    expect(headers.has(tracing.TRACEPARENT_HEADER)).toBe(false);
  });

  it('counts a call nobody answers in time, and the calls awaiting answers', async () => {
    const pending = rpc.call(SPEC.silent, {}, { requestId: 'req_silent', timeoutMs: 300 });
    const during = await metrics.registry.getSingleMetricAsString('decision_service_rpc_calls_in_flight');
    expect(during).toMatch(/^decision_service_rpc_calls_in_flight\{service="gateway"\} 1$/m);
    await expect(pending).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const timeouts = await metrics.registry.getSingleMetricAsString('decision_service_rpc_call_timeouts_total');
    expect(timeouts).toMatch(/^decision_service_rpc_call_timeouts_total\{subject="spec\.silent",service="gateway"\} 1$/m);
    expect(await metrics.registry.getSingleMetricAsString('decision_service_rpc_calls_in_flight')).toMatch(/\} 0$/m);
  });

  describe('with tracing on', () => {
    const exporter = new InMemorySpanExporter();
    let stop: tracing.TracingShutdown;

    beforeAll(() => {
      stop = tracing.startTracing('gateway', 'http://127.0.0.1:1', exporter)!;
    });
    afterAll(() => stop.shutdown());

    it('makes a client span the child of the handled request’s span and sends it on as traceparent', async () => {
      const parent = tracing.startSpan(tracing.tracer!, 'v1.decision-runner.run', tracing.SpanKind.SERVER, {});
      await runWithRequestContext({ requestId: 'req_on', span: parent }, () => rpc.call(SPEC.echo, { a: 1 }));
      tracing.endSpan(parent);
      const header = received.at(-1)!.headers!.get(tracing.TRACEPARENT_HEADER);
      await stop.flush();
      const client = exporter.getFinishedSpans().find((span) => span.name === 'spec.echo')!;
      expect(header).toBe(`00-${parent.spanContext().traceId}-${client.spanContext().spanId}-01`);
      expect(client.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      expect(client.kind).toBe(tracing.SpanKind.CLIENT);
    });

    it('finds the gateway’s HTTP span by the request id it passes', async () => {
      const http = tracing.startSpan(tracing.tracer!, 'GET /v1/decisions', tracing.SpanKind.SERVER, {});
      tracing.httpSpans.set('req_http', http);
      await rpc.call(SPEC.echo, {}, { requestId: 'req_http' });
      tracing.httpSpans.delete('req_http');
      expect(received.at(-1)!.headers!.get(tracing.TRACEPARENT_HEADER)).toMatch(new RegExp(`^00-${http.spanContext().traceId}-`));
      tracing.endSpan(http);
    });

    it('records a failed call on its span', async () => {
      await expect(rpc.call(SPEC.silent, {}, { requestId: 'req_fail', timeoutMs: 200 })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      await stop.flush();
      const failed = exporter.getFinishedSpans().find((span) => span.name === 'spec.silent')!;
      expect(failed.attributes['error.type']).toBe('SERVICE_UNAVAILABLE');
    });
  });
});

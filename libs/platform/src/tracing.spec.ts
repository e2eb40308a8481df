import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import * as tracing from './tracing';
import { endSpan, inSpan, SpanKind, startSpan, startTracing, traceparentOf } from './tracing';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

describe('tracing switched off', () => {
  it('registers nothing without an endpoint, and runs work without spans', async () => {
    expect(startTracing('gateway', undefined)).toBeNull();
    expect(startTracing('gateway', '')).toBeNull();
    expect(tracing.tracer).toBeNull();
    await expect(inSpan('db SELECT', SpanKind.CLIENT, {}, undefined, async () => 42)).resolves.toBe(42);
  });
});

describe('tracing switched on', () => {
  const exporter = new InMemorySpanExporter();
  let stop: tracing.TracingShutdown;

  beforeAll(() => {
    stop = startTracing('decision-runner', 'http://127.0.0.1:1', exporter)!;
  });
  afterAll(async () => {
    await stop.shutdown();
    expect(tracing.tracer).toBeNull();
  });
  beforeEach(async () => {
    await stop.flush();
    exporter.reset();
  });

  const finished = async () => {
    await stop.flush();
    return exporter.getFinishedSpans();
  };

  it('continues the trace of a valid traceparent and hands on its own span as the next parent', () => {
    const span = startSpan(tracing.tracer!, 'v1.decision-runner.run', SpanKind.SERVER, {}, undefined, `00-${TRACE_ID}-${PARENT_ID}-01`);
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(traceparentOf(span)).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    expect(traceparentOf(span)).not.toContain(PARENT_ID);
    const child = startSpan(tracing.tracer!, 'v1.engine-proxy.answer', SpanKind.CLIENT, {}, span);
    expect(child.spanContext().traceId).toBe(TRACE_ID);
    endSpan(child);
    endSpan(span);
  });

  it.each([
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
    ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['another version', `01-${TRACE_ID}-${PARENT_ID}-01`],
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`],
    ['a truncated value', `00-${TRACE_ID}-${PARENT_ID}`],
    ['nothing', undefined],
  ])('starts a new trace for %s', (_what, header) => {
    const span = startSpan(tracing.tracer!, 'POST /v1/decisions/:slug', SpanKind.SERVER, {}, undefined, header);
    expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.spanContext().traceId).not.toBe(TRACE_ID);
    expect(span.spanContext().traceId).not.toBe('0'.repeat(32));
    endSpan(span);
  });

  it('marks a span failed with the public error code', async () => {
    const span = startSpan(tracing.tracer!, 'v1.billing-ledger.reserve', SpanKind.CLIENT, {});
    endSpan(span, 'PAYMENT_REQUIRED');
    await expect(
      inSpan('engine openai', SpanKind.CLIENT, {}, undefined, async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENGINE_TIMEOUT' }))),
    ).rejects.toThrow('x');
    await inSpan('db SELECT', SpanKind.CLIENT, { 'db.operation.name': 'SELECT' }, undefined, async () => 1);
    const spans = await finished();
    expect(spans.map((s) => [s.name, s.status.code, s.attributes['error.type']])).toEqual([
      ['v1.billing-ledger.reserve', SpanStatusCode.ERROR, 'PAYMENT_REQUIRED'],
      ['engine openai', SpanStatusCode.ERROR, 'ENGINE_TIMEOUT'],
      ['db SELECT', SpanStatusCode.UNSET, undefined],
    ]);
    expect(spans[0]!.resource.attributes['service.name']).toBe('decision-runner');
  });
});

import { Attributes, ROOT_CONTEXT, Span, SpanContext, SpanKind, SpanStatusCode, TraceFlags, Tracer, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/** W3C trace context header, carried in NATS headers beside `x-request-id`. */
export const TRACEPARENT_HEADER = 'traceparent';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface TracingShutdown {
  /** Exports the spans buffered so far. */
  flush(): Promise<void>;
  /** Exports the spans still buffered, then stops tracing. */
  shutdown(): Promise<void>;
}

/**
 * The process's tracer, or null when no OTLP endpoint is configured. Everything in the hot paths tests
 * `tracer` first, so that with tracing off no span, header or closure is created: the SDK is not even
 * loaded and no tracer provider is registered.
 */
export let tracer: Tracer | null = null;

/**
 * Starts exporting spans over OTLP/HTTP (JSON) to `endpoint`: the exporter itself reads the standard
 * `OTEL_EXPORTER_OTLP_*` variables (`…_TRACES_ENDPOINT`, headers, timeout), so the endpoint here only
 * decides whether tracing is on. `exporter` replaces the OTLP exporter (tests keep spans in memory).
 */
export function startTracing(service: string, endpoint: string | undefined, exporter?: SpanExporter): TracingShutdown | null {
  if (!endpoint) return null;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { ATTR_SERVICE_NAME } = require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }),
    spanProcessors: [new BatchSpanProcessor(exporter ?? new OTLPTraceExporter(), { scheduledDelayMillis: 1_000 })],
  });
  tracer = provider.getTracer('decision-service');
  return {
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      tracer = null;
      await provider.shutdown().catch(() => undefined);
    },
  };
}

/** The `traceparent` value that makes `span` the parent of the next hop. */
export function traceparentOf(span: Span): string {
  const context = span.spanContext();
  return `00-${context.traceId}-${context.spanId}-${context.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
}

/**
 * Starts a span (only call with tracing on). Its parent is `parent` (a span of this process) or else the
 * remote `traceparent` received; with neither it starts a new trace.
 */
export function startSpan(active: Tracer, name: string, kind: SpanKind, attributes: Attributes, parent?: Span, traceparent?: string): Span {
  if (parent) return active.startSpan(name, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent));
  const remote = remoteSpanContext(traceparent);
  if (remote) return active.startSpan(name, { kind, attributes }, trace.setSpanContext(ROOT_CONTEXT, remote));
  return active.startSpan(name, { kind, attributes }, ROOT_CONTEXT);
}

/** The span a valid `traceparent` names, or undefined. */
export function remoteSpanContext(traceparent: string | undefined): SpanContext | undefined {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!match) return undefined;
  // TRACEPARENT has no optional group, so a match holds all three.
  const [traceId, spanId, flags] = [match[1]!, match[2]!, match[3]!];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
}

/** Ends a span, marking it failed with the public error code when there is one. */
export function endSpan(span: Span, errorCode?: string): void {
  if (errorCode) {
    span.setAttribute('error.type', errorCode);
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
  }
  span.end();
}

/**
 * Spans of the gateway's HTTP requests by request id: the gateway's controllers pass the request id to
 * every call they make, which names the span those calls belong to.
 */
export const httpSpans = new Map<string, Span>();

/** Runs `work` inside a span of its own when tracing is on (for calls off the hot path: engine, database). */
export async function inSpan<T>(name: string, kind: SpanKind, attributes: Attributes, parent: Span | undefined, work: () => Promise<T>): Promise<T> {
  const active = tracer;
  if (!active) return work();
  const span = startSpan(active, name, kind, attributes, parent);
  try {
    const result = await work();
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, (error as { code?: string })?.code ?? 'INTERNAL_ERROR');
    throw error;
  }
}

export { SpanKind };
export type { Span };

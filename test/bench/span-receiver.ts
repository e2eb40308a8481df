import { createServer, Server } from 'node:http';

/** One span as the services export it, with its times in milliseconds since the epoch. */
export interface BenchSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startMs: number;
  endMs: number;
}

/** An OTLP/HTTP (JSON) receiver the services export to as they would to a collector. */
export function startSpanReceiver(): Promise<{ server: Server; url: string; spans: BenchSpan[] }> {
  const spans: BenchSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        try {
          collect(JSON.parse(Buffer.concat(chunks).toString('utf8')), spans);
        } catch {
          // A batch that is not JSON is not the services' and is not counted.
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, spans })),
  );
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

function collect(
  body: {
    resourceSpans?: Array<{ resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
  },
  into: BenchSpan[],
): void {
  for (const resourceSpans of body.resourceSpans ?? []) {
    const service = resourceSpans.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '?';
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        into.push({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          startMs: Number(BigInt(span.startTimeUnixNano) / 1000n) / 1000,
          endMs: Number(BigInt(span.endTimeUnixNano) / 1000n) / 1000,
        });
      }
    }
  }
}

/**
 * Where a request's time went, span by span: for each kind of span (service and name), the median of when it
 * started after the trace's first span and of how long it lasted, over every trace whose first span is named
 * `rootName`. Sorted by start. The exporters give start times to the millisecond only; durations are finer.
 */
export function spanTimeline(
  spans: BenchSpan[],
  rootName: string,
): Array<{ service: string; name: string; count: number; startMs: number; durationMs: number }> {
  const traces = new Map<string, BenchSpan[]>();
  for (const span of spans) traces.set(span.traceId, [...(traces.get(span.traceId) ?? []), span]);
  const kinds = new Map<string, { service: string; name: string; starts: number[]; durations: number[] }>();
  for (const trace of traces.values()) {
    const root = trace.find((span) => span.parentSpanId === '');
    if (!root || root.name !== rootName) continue;
    for (const span of trace) {
      const key = `${span.service}\u0000${span.name}`;
      const kind = kinds.get(key) ?? { service: span.service, name: span.name, starts: [], durations: [] };
      kind.starts.push(span.startMs - root.startMs);
      kind.durations.push(span.endMs - span.startMs);
      kinds.set(key, kind);
    }
  }
  return [...kinds.values()]
    .map((kind) => ({ service: kind.service, name: kind.name, count: kind.starts.length, startMs: median(kind.starts), durationMs: median(kind.durations) }))
    .sort((a, b) => a.startMs - b.startMs);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

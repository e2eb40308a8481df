import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

type GaugeReader<TLabel extends string> = () => Promise<Array<[Partial<Record<TLabel, string>>, number]>> | Array<[Partial<Record<TLabel, string>>, number]>;

interface Series {
  count: { inc(): void };
  duration: { observe(seconds: number): void };
}

/**
 * One registry per process. Metric names follow Prometheus conventions (`_total`, `_seconds`) under the
 * `decision_service_` prefix; every series carries `service` so that all-in-one mode and a scraped cluster
 * read the same.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly rpcHandled: Counter<'subject' | 'outcome'>;
  readonly rpcHandleDuration: Histogram<'subject' | 'outcome'>;
  readonly rpcCalls: Counter<'subject' | 'outcome'>;
  readonly rpcCallDuration: Histogram<'subject' | 'outcome'>;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly rpcCallTimeouts: Counter<'subject'>;
  /**
   * Children of each counter/histogram pair by label values: prom-client hashes the label object on every
   * `inc`/`observe`, which shows in the profile of a service answering thousands of requests a second. The
   * label values are subjects, route templates, outcomes and statuses, so the map stays small.
   */
  private readonly series = new Map<string, Series>();
  private readonly gaugeReaders = new Map<string, Array<GaugeReader<string>>>();

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
    const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
    this.rpcHandled = new Counter({
      name: 'decision_service_rpc_handled_total',
      help: 'NATS requests handled by this service, by subject and outcome (ok or the error code)',
      labelNames: ['subject', 'outcome'],
      registers: [this.registry],
    });
    this.rpcHandleDuration = new Histogram({
      name: 'decision_service_rpc_handle_duration_seconds',
      help: 'Time spent handling NATS requests',
      labelNames: ['subject', 'outcome'],
      buckets,
      registers: [this.registry],
    });
    this.rpcCalls = new Counter({
      name: 'decision_service_rpc_calls_total',
      help: 'NATS requests sent by this service to others, by subject and outcome',
      labelNames: ['subject', 'outcome'],
      registers: [this.registry],
    });
    this.rpcCallDuration = new Histogram({
      name: 'decision_service_rpc_call_duration_seconds',
      help: 'Round-trip time of NATS requests sent by this service',
      labelNames: ['subject', 'outcome'],
      buckets,
      registers: [this.registry],
    });
    this.httpRequests = new Counter({
      name: 'decision_service_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'decision_service_http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route', 'status'],
      buckets,
      registers: [this.registry],
    });
    this.rpcCallTimeouts = new Counter({
      name: 'decision_service_rpc_call_timeouts_total',
      help: 'NATS requests sent by this service that got no answer in time (their outcome is unknown), by subject',
      labelNames: ['subject'],
      registers: [this.registry],
    });
  }

  /**
   * A gauge read when scraped (requests in flight, queue lengths): nothing is counted on the request path.
   * `read` answers one value per label set. Several readers of one name (two clients in one process) add up.
   */
  gauge<TLabel extends string>(name: string, help: string, labelNames: TLabel[], read: GaugeReader<TLabel>): void {
    const readers = this.gaugeReaders.get(name);
    if (readers) {
      readers.push(read as GaugeReader<string>);
      return;
    }
    const all: Array<GaugeReader<string>> = [read as GaugeReader<string>];
    this.gaugeReaders.set(name, all);
    new Gauge<TLabel>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const reader of all) {
          for (const [labels, value] of await reader()) this.inc(labels as Partial<Record<TLabel, string>>, value);
        }
      },
    });
  }

  /** A NATS request this service handled. */
  handled(subject: string, outcome: string, seconds: number): void {
    this.observe(this.rpcHandled, this.rpcHandleDuration, 'h', subject, outcome, seconds);
  }

  /** A NATS request this service sent. */
  called(subject: string, outcome: string, seconds: number): void {
    this.observe(this.rpcCalls, this.rpcCallDuration, 'c', subject, outcome, seconds);
  }

  /** An HTTP request this service answered. */
  answered(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { count: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      this.series.set(key, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
  }

  private observe(
    count: Counter<'subject' | 'outcome'>,
    duration: Histogram<'subject' | 'outcome'>,
    kind: string,
    subject: string,
    outcome: string,
    seconds: number,
  ): void {
    const key = `${kind} ${subject} ${outcome}`;
    let series = this.series.get(key);
    if (!series) {
      series = { count: count.labels({ subject, outcome }), duration: duration.labels({ subject, outcome }) };
      this.series.set(key, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
  }
}

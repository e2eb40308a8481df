import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { intEnv, percentile, procCpuMs, say } from './bench-support';
import { BenchSpan } from './span-receiver';

/**
 * The slow-engine phase of `npm run bench` (`BENCH_ONLY=slow` runs it alone): the engine simulator answers every
 * request after `BENCH_SLOW_DELAY_MS` (1 s), and a closed loop keeps a fixed number of runs in flight, as a
 * customer's load meets a provider that takes seconds. What it measures is what the service adds to the engine's
 * time, and what holding that many runs costs each service.
 */

export const SLOW_DELAY_MS = intEnv('BENCH_SLOW_DELAY_MS', 1_000);
/** Runs in flight per step, in order. */
export const SLOW_IN_FLIGHT = (process.env.BENCH_SLOW_IN_FLIGHT ?? '50,200,1000,2000')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
/** Per step: warm-up (the loop runs but nothing is counted), then the window in which runs are counted. */
export const SLOW_WARMUP_S = intEnv('BENCH_SLOW_WARMUP_S', 5);
export const SLOW_WINDOW_S = intEnv('BENCH_SLOW_WINDOW_S', 20);

export interface ServicePort {
  service: string;
  port: number;
}

interface RunRecord {
  start: number;
  end: number;
  status: number;
}

/** What one step of the slow phase measured. */
export interface SlowStep {
  in_flight: number;
  load_average: number[];
  runs: number;
  runs_per_second: number;
  added_ms: { p50: number; p90: number; p99: number; p999: number; max: number };
  errors: number;
  statuses: Record<string, number>;
  cpu_ms_per_run: Record<string, number>;
  resident_mb: Record<string, number>;
  resident_mb_total: number;
  kb_per_run_in_flight: Record<string, number>;
  hops: Array<{ hop: string; count: number; mean_ms: number }>;
  tail?: Array<{ span: string; p50_self_ms: number; p99_self_ms: number; slowest_1pct_mean_self_ms: number }>;
}

/**
 * `inFlight` loops, each sending one run and the next as soon as the answer came. The loops start spread over
 * one engine delay, so that answers come back spread as a customer's traffic would, not in waves of `inFlight`.
 * Counts only runs that started after the warm-up and ended inside the window.
 */
async function closedLoop(
  url: URL,
  keys: string[],
  body: string,
  inFlight: number,
  warmupMs: number,
  windowMs: number,
): Promise<{ records: RunRecord[]; windowStart: number; windowEnd: number }> {
  const pool = new Pool(url.origin, { connections: inFlight, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const began = performance.now();
  const windowStart = began + SLOW_DELAY_MS + warmupMs;
  const windowEnd = windowStart + windowMs;
  const records: RunRecord[] = [];
  const loop = async (index: number) => {
    await new Promise((resolve) => setTimeout(resolve, (index * SLOW_DELAY_MS) / inFlight));
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${keys[index % keys.length]}` };
    while (performance.now() < windowEnd) {
      const start = performance.now();
      let status = 0;
      try {
        const response = await pool.request({ path: url.pathname, method: 'POST', headers, body });
        status = response.statusCode;
        await response.body.text();
      } catch {
        // No answer: counted as an error when it overlapped the window at all.
      }
      const end = performance.now();
      if (start >= windowStart && end <= windowEnd) records.push({ start, end, status });
      else if (status === 0 && end >= windowStart && start <= windowEnd) records.push({ start, end, status });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, index) => loop(index)));
  await pool.close();
  return { records, windowStart, windowEnd };
}

async function metricsText(port: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

function metricValue(text: string, name: string): number {
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
}

/** Resident memory (MB) of a process from /proc, for the processes without a metrics endpoint. */
function procResidentMb(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

/** Each service's CPU so far (ms) and resident memory (MB), from its metrics; other processes from /proc. */
async function processSample(
  ports: ServicePort[],
  others: Array<{ name: string; pid: number | undefined }>,
): Promise<Map<string, { cpuMs: number; residentMb: number }>> {
  const sample = new Map<string, { cpuMs: number; residentMb: number }>();
  await Promise.all(
    ports.map(async ({ service, port }) => {
      const text = await metricsText(port);
      sample.set(service, {
        cpuMs: metricValue(text, 'process_cpu_seconds_total') * 1000,
        residentMb: metricValue(text, 'process_resident_memory_bytes') / 2 ** 20,
      });
    }),
  );
  for (const { name, pid } of others) sample.set(name, { cpuMs: procCpuMs(pid), residentMb: procResidentMb(pid) });
  return sample;
}

/**
 * Sum and count of every duration histogram of the services on the run path: what the gateway's HTTP request took,
 * what each caller waited for each subject, what each handler took, the engine's provider attempts and slot waits.
 */
async function hopSums(ports: ServicePort[]): Promise<Map<string, { sum: number; count: number }>> {
  const hops = new Map<string, { sum: number; count: number }>();
  for (const { service, port } of ports) {
    for (const line of (await metricsText(port)).split('\n')) {
      const match = /^decision_service_([a-z_]+)_seconds_(sum|count)\{(.*)\} ([0-9.e+-]+)$/.exec(line);
      if (!match) continue;
      const labels = match[3]!.replace(/,?service="[^"]*"/, '').replace(/^,/, '');
      const key = `${service} ${match[1]} ${labels}`;
      const hop = hops.get(key) ?? { sum: 0, count: 0 };
      if (match[2] === 'sum') hop.sum += Number(match[4]);
      else hop.count += Number(match[4]);
      hops.set(key, hop);
    }
  }
  return hops;
}

/**
 * Where the time of the slowest runs went, from the services' spans: per kind of span, its own time (its length
 * less its children's), as p50 and p99 over every traced run and as the mean over the slowest 1 % of runs.
 */
export function tailBreakdown(spans: BenchSpan[], rootName: string, from: number, to: number): NonNullable<SlowStep['tail']> {
  const traces = new Map<string, BenchSpan[]>();
  for (const span of spans) {
    const trace = traces.get(span.traceId);
    if (trace) trace.push(span);
    else traces.set(span.traceId, [span]);
  }
  const selfTimes: Array<{ total: number; selves: Map<string, number> }> = [];
  for (const trace of traces.values()) {
    const root = trace.find((span) => span.parentSpanId === '');
    if (!root || root.name !== rootName || root.startMs < from || root.endMs > to) continue;
    const selves = new Map<string, number>();
    for (const span of trace) {
      const children = trace.filter((child) => child.parentSpanId === span.spanId).reduce((sum, child) => sum + (child.endMs - child.startMs), 0);
      const key = `${span.service} ${span.name}`;
      selves.set(key, (selves.get(key) ?? 0) + Math.max(0, span.endMs - span.startMs - children));
    }
    selfTimes.push({ total: root.endMs - root.startMs, selves });
  }
  selfTimes.sort((a, b) => b.total - a.total);
  const slowest = selfTimes.slice(0, Math.max(1, Math.ceil(selfTimes.length / 100)));
  const kinds = new Set(selfTimes.flatMap((trace) => [...trace.selves.keys()]));
  return [...kinds]
    .map((kind) => {
      const values = selfTimes.map((trace) => trace.selves.get(kind) ?? 0).sort((a, b) => a - b);
      return {
        span: kind,
        p50_self_ms: round(percentile(values, 50)),
        p99_self_ms: round(percentile(values, 99)),
        slowest_1pct_mean_self_ms: round(slowest.reduce((sum, trace) => sum + (trace.selves.get(kind) ?? 0), 0) / slowest.length),
      };
    })
    .sort((a, b) => b.slowest_1pct_mean_self_ms - a.slowest_1pct_mean_self_ms);
}

function round(value: number, digits = 2): number {
  return Number(value.toFixed(digits));
}

/**
 * Every step of the slow phase against a cluster already started with a slow engine. `idle` is the resident memory
 * before the first step (after a warm-up), against which each step's memory per run in flight is counted.
 */
export async function slowEnginePhase(options: {
  runUrl: string;
  keys: string[];
  body: string;
  ports: ServicePort[];
  others: Array<{ name: string; pid: number | undefined }>;
  spans: BenchSpan[] | null;
}): Promise<{ delay_ms: number; idle_resident_mb: Record<string, number>; steps: SlowStep[] }> {
  const url = new URL(options.runUrl);
  say(`bench: slow engine (${SLOW_DELAY_MS} ms): warm-up with ${SLOW_IN_FLIGHT[0]} runs in flight`);
  await closedLoop(url, options.keys, options.body, SLOW_IN_FLIGHT[0] ?? 50, SLOW_WARMUP_S * 1000, 0);
  // Settle what the warm-up left (the settlement stream, idle connections) before the idle figure.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const idle = await processSample(options.ports, options.others);
  const steps: SlowStep[] = [];
  for (const inFlight of SLOW_IN_FLIGHT) {
    say(`bench: slow engine, ${inFlight} runs in flight: ${SLOW_WARMUP_S} s warm-up, ${SLOW_WINDOW_S} s counted`);
    let before: Map<string, { cpuMs: number; residentMb: number }> | undefined;
    let hopsBefore: Map<string, { sum: number; count: number }> | undefined;
    const peaks = new Map<string, number>();
    const residents: Array<Map<string, { cpuMs: number; residentMb: number }>> = [];
    let sampling = true;
    const sampler = (async () => {
      // The counters at the window's start, then resident memory every 500 ms inside it.
      await new Promise((resolve) => setTimeout(resolve, SLOW_DELAY_MS + SLOW_WARMUP_S * 1000));
      [before, hopsBefore] = await Promise.all([processSample(options.ports, options.others), hopSums(options.ports)]);
      while (sampling) {
        const now = await processSample(options.ports, options.others);
        residents.push(now);
        for (const [name, { residentMb }] of now) peaks.set(name, Math.max(peaks.get(name) ?? 0, residentMb));
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const { records, windowStart, windowEnd } = await closedLoop(url, options.keys, options.body, inFlight, SLOW_WARMUP_S * 1000, SLOW_WINDOW_S * 1000);
    sampling = false;
    await sampler;
    const [after, hopsAfter] = await Promise.all([processSample(options.ports, options.others), hopSums(options.ports)]);
    const ok = records.filter((record) => record.status >= 200 && record.status < 300);
    const added = ok.map((record) => record.end - record.start - SLOW_DELAY_MS).sort((a, b) => a - b);
    const statuses: Record<string, number> = {};
    for (const record of records) statuses[String(record.status || 'network error')] = (statuses[String(record.status || 'network error')] ?? 0) + 1;
    const runs = Math.max(ok.length, 1);
    const cpu: Record<string, number> = {};
    const resident: Record<string, number> = {};
    const perRun: Record<string, number> = {};
    for (const [name, end] of after) {
      cpu[name] = round((end.cpuMs - (before?.get(name)?.cpuMs ?? end.cpuMs)) / runs, 3);
      // The mean over the window: a peak also counts a collection that had not run yet.
      const mean = residents.reduce((sum, sample) => sum + (sample.get(name)?.residentMb ?? 0), 0) / Math.max(residents.length, 1);
      resident[name] = Math.round(peaks.get(name) ?? end.residentMb);
      perRun[name] = Math.round(((mean - (idle.get(name)?.residentMb ?? mean)) * 1024) / inFlight);
    }
    const hops: SlowStep['hops'] = [];
    for (const [key, hop] of hopsAfter) {
      const old = hopsBefore?.get(key) ?? { sum: 0, count: 0 };
      const count = hop.count - old.count;
      if (count < 10) continue;
      hops.push({ hop: key, count, mean_ms: round(((hop.sum - old.sum) * 1000) / count) });
    }
    hops.sort((a, b) => b.count - a.count || b.mean_ms - a.mean_ms);
    const step: SlowStep = {
      in_flight: inFlight,
      load_average: loadavg().map((value) => round(value)),
      runs: ok.length,
      runs_per_second: round(ok.length / ((windowEnd - windowStart) / 1000), 1),
      added_ms: {
        p50: round(percentile(added, 50)),
        p90: round(percentile(added, 90)),
        p99: round(percentile(added, 99)),
        p999: round(percentile(added, 99.9)),
        max: round(added[added.length - 1] ?? NaN),
      },
      errors: records.length - ok.length,
      statuses,
      cpu_ms_per_run: cpu,
      resident_mb: resident,
      resident_mb_total: Math.round(
        Object.entries(resident)
          .filter(([name]) => name !== 'engine simulator')
          .reduce((sum, [, mb]) => sum + (Number.isFinite(mb) ? mb : 0), 0),
      ),
      kb_per_run_in_flight: perRun,
      hops,
    };
    if (options.spans) {
      // The exporters send in batches about every second.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const origin = performance.timeOrigin;
      step.tail = tailBreakdown(options.spans, 'POST /v1/decisions/:slug', origin + windowStart, origin + windowEnd).slice(0, 12);
      options.spans.length = 0;
    }
    steps.push(step);
    printStep(step);
    // Let the loops' last runs and the settlements behind them finish before the next step.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  return {
    delay_ms: SLOW_DELAY_MS,
    idle_resident_mb: Object.fromEntries([...idle].map(([name, sample]) => [name, Math.round(sample.residentMb)])),
    steps,
  };
}

export function printStep(step: SlowStep): void {
  const list = (values: Record<string, number>, unit = '') =>
    Object.entries(values)
      .map(([name, value]) => `${name} ${value}${unit}`)
      .join(', ');
  say(
    `slow engine, ${String(step.in_flight).padStart(5)} in flight: ${step.runs_per_second} runs/s (${step.runs} runs), added p50 ${step.added_ms.p50} ms, p90 ${step.added_ms.p90}, ` +
      `p99 ${step.added_ms.p99}, p99.9 ${step.added_ms.p999}, max ${step.added_ms.max}; errors ${step.errors} (${list(step.statuses)}); load ${step.load_average.join(' ')}`,
  );
  say(`  CPU per run (ms): ${list(step.cpu_ms_per_run)}`);
  say(`  resident memory, peak (MB): ${list(step.resident_mb)}; services + nats-server ${step.resident_mb_total} MB`);
  say(`  memory per run in flight, window mean above idle (kB): ${list(step.kb_per_run_in_flight)}`);
  for (const hop of step.hops) say(`  ${hop.hop.padEnd(110)} ${String(hop.count).padStart(7)} × ${hop.mean_ms.toFixed(2).padStart(8)} ms`);
  if (step.tail) {
    say('  own time per span (ms): p50, p99, and the mean over the slowest 1 % of runs');
    for (const row of step.tail)
      say(
        `    ${row.span.padEnd(60)} ${row.p50_self_ms.toFixed(2).padStart(8)} ${row.p99_self_ms.toFixed(2).padStart(8)} ${row.slowest_1pct_mean_self_ms.toFixed(2).padStart(8)}`,
      );
  }
}

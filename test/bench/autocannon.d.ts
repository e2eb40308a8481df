// autocannon ships no types; this declares the part the bench uses.
declare module 'autocannon' {
  export interface Histogram {
    average: number;
    stddev: number;
    min: number;
    max: number;
    p2_5: number;
    p50: number;
    p75: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  }

  export interface Client {
    setHeaders(headers: Record<string, string>): void;
  }

  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    verifyBody?: (body: string) => boolean;
    setupClient?: (client: Client) => void;
  }

  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}

import type { IncomingHttpHeaders } from 'node:http';

export interface RecordedRequest {
  /** Epoch milliseconds when the request arrived, so tests can measure retry spacing. */
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
}

/** Bounds memory when a demo or a long e2e run sends requests for hours. */
const CAPACITY = 10_000;

/** The provider requests received, oldest first, searchable by the raw text of their bodies. */
export class RequestLog {
  private entries: { raw: string; request: RecordedRequest }[] = [];

  add(raw: string, request: RecordedRequest): void {
    this.entries.push({ raw, request });
    if (this.entries.length > CAPACITY) this.entries.splice(0, this.entries.length - CAPACITY);
  }

  list(match?: string): RecordedRequest[] {
    return this.entries.filter((e) => match === undefined || e.raw.includes(match)).map((e) => e.request);
  }

  /** Forgets the requests whose raw body contains `match` (all when absent); returns how many. */
  clear(match?: string): number {
    const before = this.entries.length;
    this.entries = match === undefined ? [] : this.entries.filter((e) => !e.raw.includes(match));
    return before - this.entries.length;
  }
}

import { lookup } from 'node:dns/promises';
import { request as httpRequest, IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  addressProblem,
  ATTEMPT_ERRORS,
  ATTEMPT_TIMEOUT_MS,
  classifyStatus,
  isIpLiteral,
  keptBody,
  keptContentType,
  KeptResponse,
  networkAttemptError,
  parseRetryAfter,
  RESPONSE_BODY_LIMIT,
  targetProblem,
} from '@ds/webhooks';
import { AttemptOutcomeName } from './deliveries.store';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has; injected so that tests can answer what DNS would. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export interface SendRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendResult {
  outcome: Exclude<AttemptOutcomeName, 'interrupted'>;
  responseStatus: number | null;
  durationMs: number;
  /** What the workspace reads: never an address the name resolved to, nor the system's error text. */
  error: string | null;
  /** What the service's log reads beside it: the addresses and the system's error. */
  detail: string | null;
  /** What the receiver's `Retry-After` asked for, in milliseconds. */
  retryAfterMs: number | null;
  /** The address the request went to, when one was chosen. */
  address: string | null;
  /** The receiver's answer, when it answered: its content type and its body's first RESPONSE_BODY_LIMIT bytes. */
  response: KeptResponse | null;
}

export interface SenderOptions {
  allowPrivateTargets: boolean;
  resolver?: Resolver;
  timeoutMs?: number;
}

/** An address the guard refused; the message (the name and the addresses) is for the log only. */
class Refused extends Error {}

/**
 * Makes one attempt. The host name is resolved here, every address it resolves to is checked, and the request
 * connects to the checked address itself (the URL's host goes in `Host` and in TLS's server name), so a second,
 * different answer from DNS (rebinding) can never be what the socket connects to. Redirects are never followed:
 * Node's client does not follow them, and a 3xx counts as a failed attempt.
 */
export class Sender {
  private readonly resolver: Resolver;
  private readonly timeoutMs: number;

  constructor(private readonly options: SenderOptions) {
    this.resolver = options.resolver ?? systemResolver;
    this.timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  }

  async send(request: SendRequest): Promise<SendResult> {
    const started = Date.now();
    const result = (partial: Partial<SendResult> & Pick<SendResult, 'outcome'>): SendResult => ({
      responseStatus: null,
      error: null,
      detail: null,
      retryAfterMs: null,
      address: null,
      response: null,
      ...partial,
      durationMs: Date.now() - started,
    });
    const problem = targetProblem(request.url, this.options.allowPrivateTargets);
    if (problem === 'scheme') return result({ outcome: 'refused', error: 'refused: deliveries go to https:// URLs only' });
    if (problem === 'credentials') return result({ outcome: 'refused', error: 'refused: the URL carries a user name or password' });
    if (problem !== null) return result({ outcome: 'refused', error: 'refused: the URL is not valid' });
    const url = new URL(request.url);
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    let chosen: string | null = null;
    try {
      const address = await this.pick(hostname, controller.signal);
      chosen = address.address;
      const response = await this.request(url, hostname, address, request, controller.signal);
      const outcome = classifyStatus(response.status);
      return result({
        outcome: outcome === 'success' ? 'succeeded' : outcome === 'gone' ? 'gone' : 'failed',
        responseStatus: response.status,
        address: address.address,
        retryAfterMs: parseRetryAfter(response.headers['retry-after'], Date.now()),
        response: { contentType: keptContentType(response.headers['content-type']), ...keptBody(response.body, response.complete) },
        error:
          outcome === 'success'
            ? null
            : response.status >= 300 && response.status < 400
              ? `the receiver answered ${response.status} (redirects are not followed)`
              : `the receiver answered ${response.status}`,
      });
    } catch (error) {
      if (error instanceof Refused) return result({ outcome: 'refused', error: ATTEMPT_ERRORS.addressNotAllowed, detail: error.message });
      if (controller.signal.aborted) return result({ outcome: 'timeout', address: chosen, error: `no answer within ${this.timeoutMs} ms` });
      const code = (error as NodeJS.ErrnoException | undefined)?.code;
      return result({ outcome: 'network', address: chosen, error: networkAttemptError(code), detail: networkError(error) });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The address to connect to: the literal itself, or the first the name resolves to, once all of them passed. */
  private async pick(hostname: string, signal: AbortSignal): Promise<ResolvedAddress> {
    if (isIpLiteral(hostname)) {
      this.check(hostname, hostname);
      return { address: hostname, family: hostname.includes(':') ? 6 : 4 };
    }
    const resolved = await Promise.race([
      this.resolver(hostname),
      new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
    ]);
    const [first] = resolved;
    if (first === undefined) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
    for (const entry of resolved) this.check(hostname, entry.address);
    return first;
  }

  private check(hostname: string, address: string): void {
    if (this.options.allowPrivateTargets) return;
    const problem = addressProblem(address);
    if (problem === null) return;
    const what = hostname === address ? `the address ${address}` : `${hostname} resolves to ${address}`;
    throw new Refused(`${what} (${problem.replace(/_/g, ' ')}), which deliveries may not reach`);
  }

  private request(
    url: URL,
    hostname: string,
    address: ResolvedAddress,
    request: SendRequest,
    signal: AbortSignal,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer; complete: boolean }> {
    const secure = url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      let answered = false;
      const outgoing = send(
        {
          host: address.address,
          family: address.family,
          port: url.port ? Number(url.port) : secure ? 443 : 80,
          path: `${url.pathname}${url.search}`,
          method: request.method,
          headers: { ...request.headers, host: url.host, 'content-length': String(Buffer.byteLength(request.body)) },
          // The certificate is checked against the URL's host name, not the address connected to.
          ...(secure && !isIpLiteral(hostname) ? { servername: hostname } : {}),
          agent: false,
          signal,
        },
        (response) => {
          // The body is read up to one byte past what is kept (to know it was cut), within the attempt's time: a
          // receiver that answered but sends its body slowly keeps its status, with what arrived marked truncated.
          answered = true;
          const chunks: Buffer[] = [];
          let read = 0;
          let complete = false;
          const done = () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks), complete });
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            read += chunk.length;
            // The connection is not reused, so what is past the limit need not be drained.
            if (read > RESPONSE_BODY_LIMIT) response.destroy();
          });
          response.once('end', () => (complete = true));
          response.once('error', () => undefined);
          response.once('close', done);
        },
      );
      // Once the status arrived, a connection cut or timed out while the body is read only cuts the body short.
      outgoing.on('error', (error) => {
        if (!answered) reject(error);
      });
      outgoing.end(request.body);
    });
  }
}

function networkError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  const code = e?.code ? `${e.code}: ` : '';
  return `${code}${e?.message ?? String(error)}`.slice(0, 500);
}

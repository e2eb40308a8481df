import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressProblem } from '@ds/webhooks';

export interface OutboundRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
  /** The whole call: connecting, sending and reading the answer. */
  timeoutMs: number;
  /** Bytes of the answer read at most; the rest is not read and `truncated` is set. */
  maxResponseBytes: number;
  /** Plain http and private addresses (DELIVERY_ALLOW_PRIVATE_TARGETS, tests and local development only). */
  allowPrivateTargets: boolean;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
  truncated: boolean;
}

/** The URL or the address it leads to may not be called (not https, or an internal address). */
export class OutboundRefused extends Error {
  override readonly name = 'OutboundRefused';
}

/** The call got no complete answer: `timedOut`, or the network failed (refused, reset, unresolvable). */
export class OutboundFailed extends Error {
  override readonly name = 'OutboundFailed';

  constructor(
    readonly timedOut: boolean,
    reason: string,
  ) {
    super(reason);
  }
}

/**
 * One HTTP call to an address a customer chose, guarded against server-side request forgery: https only,
 * and the address actually connected to is the one that was checked. A name is resolved once by the
 * connection's own `lookup`, every address it resolves to is checked, and the socket connects to that checked
 * address, so a name that answers a public address to a check and a private one to the connect (DNS
 * rebinding) gets nowhere. A name with any forbidden address is refused as a whole. Literal IP hosts, which
 * Node connects to without a lookup, are checked before the call. Redirects are never followed (a 3xx is an
 * answer like any other); no connection is pooled, so no socket outlives its check.
 */
export async function outboundRequest(request: OutboundRequest, resolve: typeof dnsLookup = dnsLookup): Promise<OutboundResponse> {
  const url = checkedUrl(request.url, request.allowPrivateTargets);
  const signal = AbortSignal.timeout(request.timeoutMs);
  const lookup = request.allowPrivateTargets ? undefined : guardedLookup(resolve);
  return new Promise<OutboundResponse>((done, fail) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const failed = (error: Error) => {
      if (error instanceof OutboundRefused) return fail(error);
      fail(
        new OutboundFailed(signal.aborted, signal.aborted ? `no answer within ${request.timeoutMs} ms` : ((error as { code?: string }).code ?? error.message)),
      );
    };
    const headers: Record<string, string | number> = { ...request.headers };
    if (request.body !== null) headers['content-length'] = Buffer.byteLength(request.body);
    const call = send(url, { method: request.method, headers, signal, agent: false, lookup }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const finish = () => done({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8'), truncated });
      response.on('data', (chunk: Buffer) => {
        if (truncated) return;
        const room = request.maxResponseBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          truncated = true;
          finish();
          response.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      response.on('error', (error) => !truncated && failed(error));
      response.on('end', () => {
        if (truncated) return;
        if (!response.complete) return failed(new Error('the connection closed before the answer was complete'));
        finish();
      });
    });
    call.on('error', failed);
    call.end(request.body ?? undefined);
  });
}

/** Why an address may not be connected to, in words, or null: the same rules as deliveries (`@ds/webhooks`). */
function refusalReason(address: string): string | null {
  const problem = addressProblem(address);
  return problem === null ? null : problem.replace(/_/g, ' ');
}

/** The URL, if its scheme may be called and a literal IP host is allowed. */
export function checkedUrl(raw: string, allowPrivateTargets: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused('the URL is not valid');
  }
  const schemes = allowPrivateTargets ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol))
    throw new OutboundRefused(`only ${allowPrivateTargets ? 'http and https' : 'https'} URLs are called (got ${url.protocol.replace(/:$/, '')})`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivateTargets && isIP(host) !== 0) {
    const reason = refusalReason(host);
    if (reason) throw new OutboundRefused(`the address ${host} is not allowed: ${reason}`);
  }
  return url;
}

/** A `lookup` for http.request that resolves every address of the name and refuses the name if one is forbidden. */
export function guardedLookup(resolve: typeof dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { all: true, family: options.family, hints: options.hints }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const forbidden = addresses.map((entry) => ({ entry, reason: refusalReason(entry.address) })).find(({ reason }) => reason !== null);
      if (forbidden)
        return callback(
          new OutboundRefused(`${hostname} resolves to ${forbidden.entry.address}, which is not allowed: ${forbidden.reason}`) as NodeJS.ErrnoException,
          '',
          0,
        );
      const [first] = addresses;
      if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}

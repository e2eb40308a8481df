import { Agent as HttpAgent, request as httpRequest, IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface ProviderResponse {
  status: number;
  retryAfter: string | null;
  text: string;
}

/** Why a request got no HTTP answer: the deadline, or the network (refused, reset, dropped). */
export class ProviderRequestFailed extends Error {
  override readonly name = 'ProviderRequestFailed';

  constructor(
    readonly timedOut: boolean,
    reason: string,
  ) {
    super(reason);
  }
}

/**
 * Keep-alive pools: every run calls the same provider, and a TLS handshake per call would cost more than
 * the call's own work. An idle connection is closed after 4 s, before servers close theirs (Node's own
 * after 5 s, proxies later): reusing one the server is closing at that moment fails the call with a reset.
 * The timeout only closes idle connections; a call in progress is bounded by its deadline alone.
 */
const IDLE_MS = 4_000;
const agents = {
  'http:': new HttpAgent({ keepAlive: true, scheduling: 'lifo', timeout: IDLE_MS }),
  'https:': new HttpsAgent({ keepAlive: true, scheduling: 'lifo', timeout: IDLE_MS }),
};

/**
 * POSTs JSON and reads the whole answer. node:http rather than fetch: fetch costs about a quarter of this
 * service's CPU per call (web streams, transferable signals), and it follows redirects, which would carry
 * the provider key to whatever host a redirect names; here a 3xx is just an answer.
 */
export function postJson(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<ProviderResponse> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const agent = url.protocol === 'https:' ? agents['https:'] : agents['http:'];
    const fail = (error: Error) => reject(new ProviderRequestFailed(signal.aborted, (error as { code?: string }).code ?? error.message));
    const request = send(
      url,
      { method: 'POST', agent, signal, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', fail);
        response.on('aborted', () => fail(new Error('the connection closed before the answer was complete')));
        response.on('end', () => {
          if (!response.complete) return fail(new Error('the connection closed before the answer was complete'));
          const retryAfter = response.headers['retry-after'];
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    request.on('error', fail);
    request.end(body);
  });
}

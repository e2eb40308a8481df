import { Agent } from 'undici';

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
 * One keep-alive pool per origin: every run calls the same provider, and a TLS handshake per call would cost
 * more than the call's own work. An idle connection is closed after 4 s, before servers close theirs (Node's
 * own after 5 s, proxies later): reusing one the server is closing at that moment fails the call with a reset.
 * The timeout only closes idle connections; a call in progress is bounded by its deadline alone.
 */
const IDLE_MS = 4_000;
const agent = new Agent({ keepAliveTimeout: IDLE_MS, keepAliveMaxTimeout: IDLE_MS });

/**
 * POSTs JSON and reads the whole answer. undici's `request` rather than node:http or fetch: it costs about
 * half of node:http's CPU per call (ClientRequest's agent bookkeeping and abort listeners were a fifth of this
 * service's CPU under load), fetch costs more than either (web streams), and `request` follows no redirect,
 * which would carry the provider key to whatever host a redirect names; here a 3xx is just an answer.
 */
export async function postJson(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<ProviderResponse> {
  try {
    const response = await agent.request({ origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', headers, body, signal });
    const retryAfter = response.headers['retry-after'];
    return {
      status: response.statusCode,
      retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      text: await response.body.text(),
    };
  } catch (error) {
    throw new ProviderRequestFailed(signal.aborted, reasonOf(error));
  }
}

/** The network's word for what went wrong (ECONNREFUSED, UND_ERR_SOCKET, …), else the message. */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const code = (error as { code?: unknown }).code ?? cause?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}

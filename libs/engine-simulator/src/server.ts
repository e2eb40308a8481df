import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { composeAnswers, MALFORMED_TEXT } from './answers';
import { freeTextAnswer, reportedModel } from './deterministic';
import { InvalidRequest } from './invalid-request';
import { anthropic } from './protocols/anthropic';
import { openAi } from './protocols/openai';
import type { Protocol, ProviderRequest, Reply } from './protocols/protocol';
import { RequestLog } from './requests';
import { parseScript, ScriptBook, type Step } from './scripts';

export interface EngineSimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the simulator is for tests and demos, not for the network. */
  host?: string;
  /** When set, a provider request presenting any other key gets the provider's 401. */
  apiKey?: string;
  /**
   * Every provider answer waits this long (ms) after its request arrived, as a real provider takes seconds;
   * a script's own delay comes on top. 0 (the default) answers at once.
   */
  delayMs?: number;
}

export interface EngineSimulator {
  /** Base address without a trailing slash, e.g. http://127.0.0.1:43123. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const PROTOCOLS: Protocol[] = [openAi, anthropic];

interface Context {
  apiKey: string | undefined;
  delayMs: number;
  scripts: ScriptBook;
  requests: RequestLog;
  /** Aborted by close(), so scripted delays do not hold the process open. */
  closing: AbortSignal;
}

type ControlRoute = (ctx: Context, query: URLSearchParams, raw: string) => { status: number; body: unknown };

/** The control API that tests and the demo use to script faults and read what the service sent. */
const CONTROL_ROUTES: Record<string, ControlRoute> = {
  'GET /health': () => ({ status: 200, body: { status: 'ok' } }),
  'POST /_sim/scripts': (ctx, _query, raw) => ({ status: 201, body: { id: ctx.scripts.add(parseScript(parseJson(raw))) } }),
  'DELETE /_sim/scripts': (ctx, query) => ({ status: 200, body: { deleted: ctx.scripts.remove(matchOf(query)) } }),
  'GET /_sim/requests': (ctx, query) => ({ status: 200, body: { data: ctx.requests.list(matchOf(query)) } }),
  'DELETE /_sim/requests': (ctx, query) => ({ status: 200, body: { deleted: ctx.requests.clear(matchOf(query)) } }),
};

export async function startEngineSimulator(opts: EngineSimulatorOptions = {}): Promise<EngineSimulator> {
  const host = opts.host ?? '127.0.0.1';
  const closing = new AbortController();
  const delayMs = opts.delayMs ?? 0;
  if (!Number.isInteger(delayMs) || delayMs < 0) throw new Error(`delayMs must be a whole number of milliseconds, 0 or more, got ${delayMs}`);
  const ctx: Context = { apiKey: opts.apiKey, delayMs, scripts: new ScriptBook(), requests: new RequestLog(), closing: closing.signal };

  const server = createServer((req, res) => {
    handle(ctx, req, res).catch((error: unknown) => {
      // close() cutting a scripted delay short is expected; its connection is already being destroyed.
      if (closing.signal.aborted) return;
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, { error: { type: 'internal_error', message: `engine simulator failed: ${String(error)}` } });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      (closed ??= new Promise<void>((resolve, reject) => {
        closing.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets of the callers would otherwise hold close() open until they time out.
        server.closeAllConnections();
      })),
  };
}

async function handle(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const receivedAt = Date.now();
  const url = new URL(req.url ?? '/', 'http://simulator');
  const raw = await readBody(req);

  const protocol = req.method === 'POST' ? PROTOCOLS.find((p) => p.path === url.pathname) : undefined;
  if (protocol) return answerProvider(ctx, protocol, req, res, raw, receivedAt);

  const route = CONTROL_ROUTES[`${req.method} ${url.pathname}`];
  if (!route) return sendJson(res, 404, { error: { type: 'not_found', message: `no route for ${req.method} ${url.pathname}` } });
  try {
    const { status, body } = route(ctx, url.searchParams, raw);
    sendJson(res, status, body);
  } catch (error) {
    if (!(error instanceof InvalidRequest)) throw error;
    sendJson(res, 400, { error: { type: 'invalid_request', message: error.message } });
  }
}

/**
 * Answers one provider request in the order a real provider would meet it: the key is
 * checked before anything else, then the script step due (if any) shapes the answer.
 */
async function answerProvider(ctx: Context, protocol: Protocol, req: IncomingMessage, res: ServerResponse, raw: string, receivedAt: number): Promise<void> {
  let body: unknown = raw;
  let isJson = true;
  try {
    body = JSON.parse(raw);
  } catch {
    isJson = false;
  }
  ctx.requests.add(raw, { at: receivedAt, path: protocol.path, headers: req.headers, body });

  if (ctx.apiKey !== undefined && protocol.presentedKey(req.headers) !== ctx.apiKey) {
    return sendJson(res, 401, protocol.errorBody(401));
  }

  const step = ctx.scripts.take(raw);
  if (ctx.delayMs > 0) await sleep(ctx.delayMs, undefined, { signal: ctx.closing });
  if (step?.delayMs) await sleep(step.delayMs, undefined, { signal: ctx.closing });
  if (step?.drop) {
    req.socket.destroy();
    return;
  }
  const headers = stepHeaders(step);
  if (step?.status !== undefined && step.status >= 400) {
    return sendJson(res, step.status, protocol.errorBody(step.status, step.errorMessage), headers);
  }

  let request: ProviderRequest;
  try {
    if (!isJson) throw new InvalidRequest('the body is not valid JSON');
    request = protocol.parse(body, req.headers);
  } catch (error) {
    if (!(error instanceof InvalidRequest)) throw error;
    return sendJson(res, 400, protocol.errorBody(400, error.message), headers);
  }

  const model = step?.model ?? reportedModel(request.model);
  const reply: Reply = request.freeText
    ? { model, text: step?.text ?? freeTextAnswer(request.seed) }
    : step?.malformed
      ? { model, text: MALFORMED_TEXT }
      : { model, answers: composeAnswers(request.seed, request.questions, step) };
  sendJson(res, step?.status ?? 200, request.respond(reply), headers);
}

function stepHeaders(step: Step | undefined): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { ...step?.headers };
  if (step?.retryAfter !== undefined) headers['retry-after'] = String(step.retryAfter);
  return headers;
}

function matchOf(query: URLSearchParams): string | undefined {
  return query.get('match') ?? undefined;
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new InvalidRequest('the body is not valid JSON');
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

import { createParamDecorator, ExecutionContext, Injectable, PipeTransform } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { errorCodes, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { Deployer, REQUEST_BODY_MAX_BYTES, ServiceError } from '@ds/contracts';
import { isValidSlug } from '@ds/decision-schema';
import { isValidCallerToken, newId } from '@ds/ids';
import { endSpan, httpSpans, Metrics, RpcClient, SpanKind, startSpan, tracer } from '@ds/platform';
import { ApiKeysService } from '../auth/api-keys.service';
import { SessionsService } from '../auth/sessions.service';
import { bearerToken, looksLikeApiKey } from '../auth/tokens';
import { GatewayConfig } from '../config';
import { HookTokens } from '../hooks/hook-tokens';
import { HookProofLimits } from '../hooks/proof-limits';
import { embedToken, isCrossSiteWrite, lookUpEmbedSession, setFrameAncestors } from '../embed/embed-cookie';
import { CredentialLimits } from '../limits/credential-limits';
import { RateLimiter } from '../limits/rate-limiter';
import { SessionPacing } from '../limits/session-pacing';
import { allowed, rateLimitHeaders, retryAfterSeconds } from '../limits/windows';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { Access, Caller, RouteAccessConfig, WORKSPACE_PARAM } from './access';
import { parseJsonBody } from './json-body';
import { queryTextIssues } from './query-text';
import { RouteTable } from './route-table';

/** 128 KB, read as 131,072 bytes. */
export const BODY_LIMIT = REQUEST_BODY_MAX_BYTES;

declare module 'fastify' {
  interface FastifyRequest {
    rawBody: string | null;
  }
}

/** `X-Request-ID` is echoed when it is 1..128 of `A-Za-z0-9._:-`, else replaced, never refused. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && isValidCallerToken(header) ? header : newId('req');
}

interface EdgeDependencies {
  config: GatewayConfig;
  apiKeys: ApiKeysService;
  sessions: SessionsService;
  credentialLimits: CredentialLimits;
  workspaces: WorkspacesService;
  rateLimiter: RateLimiter;
  sessionPacing: SessionPacing;
  metrics: Metrics;
  routes: RouteTable;
  hookTokens: HookTokens;
  hookProofLimits: HookProofLimits;
  rpc: RpcClient;
}

function isHookRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.config as RouteAccessConfig | undefined)?.access?.kind === 'hook';
}

/**
 * Everything that must happen before a body is read lives in onRequest hooks: the request id, and the
 * access the matched route declares (see http/access.ts). Bodies are parsed only after that.
 */
export function installRequestLifecycle(app: NestFastifyApplication, deps: EdgeDependencies): void {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  fastify.decorateRequest('caller', null as never);
  fastify.decorateRequest('rawBody', null);

  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const raw = body as string;
    request.rawBody = raw;
    // A secret URL proves its signature over the body as sent, before it is read as JSON.
    if (isHookRoute(request)) return done(null, undefined);
    try {
      done(null, parseJsonBody(raw));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // Secret URLs take any content type (text/plain is a text state, the rest is read as JSON); every other
  // route refuses what is not JSON, as before any catch-all existed.
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (isHookRoute(request)) {
      request.rawBody = body as string;
      return done(null, undefined);
    }
    if (request.is404) return done(null, undefined);
    done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(String(request.headers['content-type'] ?? '')), undefined);
  });

  // Every route must declare its access; a route without one would be served to anybody, so the gateway
  // refuses to start instead.
  fastify.addHook('onRoute', (route) => {
    const access = (route.config as RouteAccessConfig | undefined)?.access;
    if (!access) throw new Error(`route ${String(route.method)} ${route.url} declares no access (see http/access.ts)`);
    deps.routes.add(route.method, route.url, access);
  });

  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (tracer !== null) startHttpSpan(request);
    const access = (request.routeOptions.config as RouteAccessConfig | undefined)?.access;
    // Only the router's not-found route has no access; it answers 404 to anybody.
    if (!access) {
      await framePageOfEmbedSession(request, reply, deps);
      return;
    }
    await checkAccess(access, request, reply, deps);
    refuseControlCharacters(request);
  });

  // After the body is read, so that a body too large or not JSON is still answered as the spec orders it.
  fastify.addHook('preHandler', async (request) => {
    if ((request.routeOptions.config as RouteAccessConfig | undefined)?.access) refuseUnstorableQuery(request);
  });

  fastify.addHook('onResponse', async (request, reply) => {
    deps.metrics.answered(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    if (httpSpans.size > 0) endHttpSpan(request, reply.statusCode);
  });
  // A client that goes away before its answer gets no onResponse; its span must not stay behind.
  fastify.addHook('onRequestAbort', async (request) => {
    if (httpSpans.size > 0) endHttpSpan(request, 499);
  });
}

/** A server span per request, parented by the caller's `traceparent` when it sent one. */
function startHttpSpan(request: FastifyRequest): void {
  const route = request.routeOptions.url ?? 'unmatched';
  const traceparent = request.headers.traceparent;
  const span = startSpan(
    tracer!,
    `${request.method} ${route}`,
    SpanKind.SERVER,
    { 'http.request.method': request.method, 'http.route': route },
    undefined,
    typeof traceparent === 'string' ? traceparent : undefined,
  );
  httpSpans.set(request.id, span);
}

function endHttpSpan(request: FastifyRequest, status: number): void {
  const span = httpSpans.get(request.id);
  if (span === undefined) return;
  httpSpans.delete(request.id);
  span.setAttribute('http.response.status_code', status);
  endSpan(span, status >= 500 ? String(status) : undefined);
}

/**
 * The checks of the matched route's declared access, in the order the spec gives for the run endpoint:
 * the credential (401/403), then for API keys the workspace's window (429, and from here on the rate-limit
 * headers) and the slug format (404); the body (413, 400) is read only after this hook.
 */
async function checkAccess(access: Access, request: FastifyRequest, reply: FastifyReply, deps: EdgeDependencies): Promise<void> {
  request.caller = { kind: 'anonymous' };
  const token = bearerToken(request.headers.authorization);
  if (access.kind === 'public') {
    await framePageOfEmbedSession(request, reply, deps);
    return;
  }
  if (access.kind === 'hook') {
    deps.credentialLimits.refuseIfBlocked(request.ip);
    const hook = await deps.hookTokens.resolve(routeParam(request, access.tokenParam), request.id);
    if (!hook) throw new ServiceError('NOT_FOUND', 'No secret URL here: the token is unknown, was rotated, or the URL is off.');
    // Only a URL with a secret can take wrong proofs.
    if (hook.secret !== null) await deps.hookProofLimits.refuseIfBlocked(hook.decisionId);
    request.caller = { kind: 'hook', hook };
    return;
  }
  if (access.kind === 'api-key') {
    const key = await deps.credentialLimits.authenticate(request.ip, token, () => deps.apiKeys.authenticate(token));
    request.caller = { kind: 'api-key', key };
    const window = await deps.rateLimiter.count(key.workspaceId, access.window, request.id);
    const now = Math.floor(Date.now() / 1000);
    reply.headers(rateLimitHeaders(window, now));
    if (!allowed(window)) {
      reply.header('retry-after', String(retryAfterSeconds(window, now)));
      throw new ServiceError('RATE_LIMITED', `The workspace used its ${window.limit} ${window.window} requests of this minute; retry after the window resets.`);
    }
    if (access.slugParam !== undefined && !isValidSlug(routeParam(request, access.slugParam))) {
      throw new ServiceError('DECISION_NOT_FOUND', 'No decision with this slug in this workspace.');
    }
    return;
  }
  // API keys work only on /v1 and /mcp: everywhere else they are refused before anything is looked up.
  if (token && looksLikeApiKey(token)) {
    throw new ServiceError(
      'FORBIDDEN',
      access.kind === 'operator' ? 'API keys work only on /v1 and /mcp.' : 'API keys work only on /v1 and /mcp; sign in to use the application.',
    );
  }
  if (access.kind === 'application-entry') return;
  // The embedded editor: its cookie stands for a session when no bearer token is sent.
  if (access.kind === 'embed' || (access.kind === 'session' && token === null && embedToken(request.headers.cookie) !== null)) {
    await checkEmbedSession(access, request, reply, deps);
    return;
  }
  if (access.kind === 'operator') {
    const adminToken = deps.config.adminToken;
    await deps.credentialLimits.beforeOperatorRequest(request.ip);
    await deps.credentialLimits.authenticate(request.ip, token, async () => {
      if (adminToken === null || !token || !sameSecret(token, adminToken)) throw new ServiceError('UNAUTHORIZED', 'The operator token is missing or wrong.');
    });
    request.caller = { kind: 'operator' };
    return;
  }
  if (token !== null) await deps.sessionPacing.wait(token);
  const userId = await deps.credentialLimits.authenticate(request.ip, token, () => deps.sessions.userFor(token));
  request.caller = { kind: 'user', userId, membership: null };
  if (access.role !== undefined) {
    const workspaceId = routeParam(request, WORKSPACE_PARAM);
    const role = await deps.workspaces.requireRole(workspaceId, userId, access.role);
    request.caller = { kind: 'user', userId, membership: { workspaceId, role } };
  }
}

/**
 * An embed session acts only where the route admits embed sessions, only in its own sub-workspace, and only
 * with the permission the route names; everything it is answered may be framed by its origins only.
 */
async function checkEmbedSession(access: Access, request: FastifyRequest, reply: FastifyReply, deps: EdgeDependencies): Promise<void> {
  const token = embedToken(request.headers.cookie);
  if (token !== null) await deps.sessionPacing.wait(token);
  const session = await deps.credentialLimits.authenticate(request.ip, token, async () => {
    const found = token === null ? null : await lookUpEmbedSession(deps.rpc, token, request.id);
    if (!found) throw new ServiceError('UNAUTHORIZED', 'The embed session has ended; reopen the editor from your app.');
    return found;
  });
  setFrameAncestors(reply, session.origins);
  if (isCrossSiteWrite(request)) throw new ServiceError('FORBIDDEN', 'An embed session acts only from the application’s own pages.', { reason: 'cross_site' });
  if (access.kind === 'session') {
    if (access.embed === undefined) throw new ServiceError('FORBIDDEN', 'An embed session cannot use this endpoint.', { reason: 'embed_permission' });
    if (access.role !== undefined && routeParam(request, WORKSPACE_PARAM) !== session.workspaceId) {
      throw new ServiceError('FORBIDDEN', 'The embed session belongs to another workspace.', { reason: 'workspace_access' });
    }
    if (access.embed !== 'session' && !session.permissions.includes(access.embed)) {
      throw new ServiceError('FORBIDDEN', `The embed session lacks the ${access.embed} permission.`, { reason: 'embed_permission', permission: access.embed });
    }
  }
  request.caller = { kind: 'embed', session };
}

/** A page loaded inside an embed session (the editor's own pages) may be framed by that session's origins only. */
async function framePageOfEmbedSession(request: FastifyRequest, reply: FastifyReply, deps: EdgeDependencies): Promise<void> {
  if (request.method !== 'GET' || !(request.headers.accept ?? '').includes('text/html')) return;
  const token = embedToken(request.headers.cookie);
  if (token === null) return;
  const session = await lookUpEmbedSession(deps.rpc, token, request.id).catch(() => null);
  if (session) setFrameAncestors(reply, session.origins);
}

/**
 * No id, slug or token holds a control character, and PostgreSQL refuses a NUL in text: a path parameter
 * carrying one names nothing, so it is a 404 here, after the route's own credential checks, before any handler.
 */
function refuseControlCharacters(request: FastifyRequest): void {
  const params = request.params as Record<string, unknown> | undefined;
  if (!params) return;
  for (const [name, value] of Object.entries(params)) {
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
    if (typeof value !== 'string' || !/[\u0000-\u001f\u007f]/.test(value)) continue;
    if (name === 'slug') throw new ServiceError('DECISION_NOT_FOUND', 'No decision with this slug in this workspace.');
    if (name === 'ref') throw new ServiceError('WORKSPACE_NOT_FOUND', 'No sub-workspace with this reference.');
    throw new ServiceError('NOT_FOUND', 'No such resource.');
  }
}

/** After the route's credential checks, like the path's parameters: a caller without one learns nothing from the query. */
function refuseUnstorableQuery(request: FastifyRequest): void {
  const issues = queryTextIssues(request.query);
  if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The query parameters are not valid.', issues);
}

function routeParam(request: FastifyRequest, name: string): string {
  const params = request.params as Record<string, string | undefined> | undefined;
  const value = params && Object.hasOwn(params, name) ? params[name] : undefined;
  if (typeof value !== 'string') throw new Error(`the matched route ${request.routeOptions.url} has no :${name} parameter`);
  return value;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export const RequestId = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  return context.switchToHttp().getRequest<FastifyRequest>().id;
});

/** The signed-in user's address is read only by the handlers that record who acted, never at the edge. */
@Injectable()
export class ActingUserPipe implements PipeTransform<Caller, Promise<Deployer | null>> {
  constructor(private readonly workspaces: WorkspacesService) {}

  async transform(caller: Caller): Promise<Deployer | null> {
    if (caller.kind === 'embed') return { user_id: caller.session.user.id, email: caller.session.user.email };
    if (caller.kind === 'user') return { user_id: caller.userId, email: await this.workspaces.emailOf(caller.userId) };
    return null;
  }
}

const CallerParam = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => context.switchToHttp().getRequest<FastifyRequest>().caller);

/** Who deploys, starts a shadow or a replay: the signed-in user, or the embedded editor's user; null for anyone else. */
export const ActingUser = () => CallerParam(ActingUserPipe);

/** The body, which must be a JSON object: an empty body, an array or a scalar is refused with 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) throw new ServiceError('INVALID_REQUEST', 'The request body is empty; send a JSON object.');
  if (typeof body !== 'object' || Array.isArray(body)) throw new ServiceError('INVALID_REQUEST', 'The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

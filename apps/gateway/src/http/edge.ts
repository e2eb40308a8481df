import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from '@ds/contracts';
import { isValidSlug } from '@ds/decision-schema';
import { isValidCallerToken, newId } from '@ds/ids';
import { endSpan, httpSpans, Metrics, SpanKind, startSpan, tracer } from '@ds/platform';
import { ApiKeysService } from '../auth/api-keys.service';
import { SessionsService } from '../auth/sessions.service';
import { bearerToken, looksLikeApiKey } from '../auth/tokens';
import { GatewayConfig } from '../config';
import { CredentialLimits } from '../limits/credential-limits';
import { RateLimiter } from '../limits/rate-limiter';
import { allowed, rateLimitHeaders, retryAfterSeconds } from '../limits/windows';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { Access, RouteAccessConfig, WORKSPACE_PARAM } from './access';
import { parseJsonBody } from './json-body';
import { RouteTable } from './route-table';

/** 128 KB, read as 131,072 bytes. */
export const BODY_LIMIT = 131_072;

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
  metrics: Metrics;
  routes: RouteTable;
}

/**
 * Everything that must happen before a body is read lives in onRequest hooks: the request id, and the
 * access the matched route declares (see http/access.ts). Bodies are parsed only after that.
 */
export function configureEdge(app: NestFastifyApplication, deps: EdgeDependencies): void {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  fastify.decorateRequest('caller', null as never);
  fastify.decorateRequest('rawBody', null);

  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const raw = body as string;
    request.rawBody = raw;
    try {
      done(null, parseJsonBody(raw));
    } catch (error) {
      done(error as Error, undefined);
    }
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
    if (!access) return;
    await checkAccess(access, request, reply, deps);
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
  const span = startSpan(tracer!, `${request.method} ${route}`, SpanKind.SERVER, { 'http.request.method': request.method, 'http.route': route }, undefined, typeof traceparent === 'string' ? traceparent : undefined);
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
  if (access.kind === 'public') return;
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
    throw new ServiceError('FORBIDDEN', access.kind === 'operator' ? 'API keys work only on /v1 and /mcp.' : 'API keys work only on /v1 and /mcp; sign in to use the application.');
  }
  if (access.kind === 'application-entry') return;
  if (access.kind === 'operator') {
    const adminToken = deps.config.adminToken;
    await deps.credentialLimits.beforeOperatorRequest(request.ip);
    await deps.credentialLimits.authenticate(request.ip, token, async () => {
      if (adminToken === null || !token || !sameSecret(token, adminToken)) throw new ServiceError('UNAUTHORIZED', 'The operator token is missing or wrong.');
    });
    request.caller = { kind: 'operator' };
    return;
  }
  const userId = await deps.credentialLimits.authenticate(request.ip, token, () => deps.sessions.userFor(token));
  request.caller = { kind: 'user', userId, membership: null };
  if (access.role !== undefined) {
    const workspaceId = routeParam(request, WORKSPACE_PARAM);
    const role = await deps.workspaces.requireRole(workspaceId, userId, access.role);
    request.caller = { kind: 'user', userId, membership: { workspaceId, role } };
  }
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

/** The body, which must be a JSON object: an empty body, an array or a scalar is refused with 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) throw new ServiceError('INVALID_REQUEST', 'The request body is empty; send a JSON object.');
  if (typeof body !== 'object' || Array.isArray(body)) throw new ServiceError('INVALID_REQUEST', 'The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

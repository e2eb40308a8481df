import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyInstance, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from '@ds/contracts';
import { isValidSlug } from '@ds/decision-schema';
import { isValidCallerToken, newId } from '@ds/ids';
import { Metrics } from '@ds/platform';
import { ApiKeysService, AuthenticatedKey } from '../auth/api-keys.service';
import { SessionsService } from '../auth/sessions.service';
import { bearerToken, looksLikeApiKey } from '../auth/tokens';
import { GatewayConfig } from '../config';
import { RateLimiter } from '../limits/rate-limiter';
import { allowed, rateLimitHeaders, retryAfterSeconds, windowFor } from '../limits/windows';
import { parseJsonBody } from './json-body';

/** 128 KB, read as 131,072 bytes. */
export const BODY_LIMIT = 131_072;

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
    userId: string | null;
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
  rateLimiter: RateLimiter;
  metrics: Metrics;
}

/**
 * Everything that must happen before a body is read lives in onRequest hooks, so that the order of checks
 * holds: the key (401), then the workspace's window (429, and from here on the rate-limit headers), then
 * the slug format (404), and only then the body (413, 400).
 */
export function configureEdge(app: NestFastifyApplication, deps: EdgeDependencies): void {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  fastify.decorateRequest('apiKey', null);
  fastify.decorateRequest('userId', null);
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

  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const path = request.url.split('?')[0];
    if (path.startsWith('/v1/') || path === '/mcp') {
      request.apiKey = await deps.apiKeys.authenticate(bearerToken(request.headers.authorization));
      const window = await deps.rateLimiter.count(request.apiKey.workspaceId, windowFor(request.method, request.routeOptions.url), request.id);
      const now = Math.floor(Date.now() / 1000);
      reply.headers(rateLimitHeaders(window, now));
      if (!allowed(window)) {
        reply.header('retry-after', String(retryAfterSeconds(window, now)));
        throw new ServiceError('RATE_LIMITED', `The workspace used its ${window.limit} ${window.window} requests of this minute; retry after the window resets.`);
      }
      const params = request.params as { slug?: string };
      if (request.method === 'POST' && request.routeOptions.url === '/v1/decisions/:slug' && !isValidSlug(params.slug)) {
        throw new ServiceError('DECISION_NOT_FOUND', 'No decision with this slug in this workspace.');
      }
      return;
    }
    if (path.startsWith('/app/')) {
      const token = bearerToken(request.headers.authorization);
      if (token && looksLikeApiKey(token)) throw new ServiceError('FORBIDDEN', 'API keys work only on /v1 and /mcp; sign in to use the application.');
      if (!path.startsWith('/app/v1/auth/sign-')) request.userId = await deps.sessions.userFor(token);
      return;
    }
    if (path.startsWith('/admin/')) {
      const token = bearerToken(request.headers.authorization);
      if (token && looksLikeApiKey(token)) throw new ServiceError('FORBIDDEN', 'API keys work only on /v1 and /mcp.');
      if (deps.config.adminToken === null) throw new ServiceError('NOT_FOUND', 'The operator API is off: ADMIN_TOKEN is not set.');
      if (!token || !sameSecret(token, deps.config.adminToken)) throw new ServiceError('UNAUTHORIZED', 'The operator token is missing or wrong.');
    }
  });

  fastify.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    deps.metrics.httpRequests.inc(labels);
    deps.metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  });
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export const ApiKey = createParamDecorator((_data: unknown, context: ExecutionContext): AuthenticatedKey => {
  return context.switchToHttp().getRequest<FastifyRequest>().apiKey!;
});

export const UserId = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  return context.switchToHttp().getRequest<FastifyRequest>().userId!;
});

export const RequestId = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  return context.switchToHttp().getRequest<FastifyRequest>().id;
});

/** The body, which must be a JSON object: an empty body, an array or a scalar is refused with 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) throw new ServiceError('INVALID_REQUEST', 'The request body is empty; send a JSON object.');
  if (typeof body !== 'object' || Array.isArray(body)) throw new ServiceError('INVALID_REQUEST', 'The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

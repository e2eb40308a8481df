import { Body, Controller, Delete, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { FastifyReply, FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import { ServiceError } from '@ds/contracts';
import { Logger, Metrics, PLATFORM, RpcClient } from '@ds/platform';
import { AuthenticatedKey } from '../auth/api-keys.service';
import { GatewayConfig } from '../config';
import { ApiKey, ApiKeyRoute } from '../http/access';
import { RequestId } from '../http/request-lifecycle';
import { toServiceError } from '../http/errors';
import { RateLimiter } from '../limits/rate-limiter';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { BackendServices, GatewayToolBackend } from './backend';
import { mcpServer } from './mcp-server';

/** Hop-by-hop and framing headers of the HTTP request that mean nothing to a request whose body is already read. */
const NOT_FORWARDED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect']);

/**
 * `/mcp`: the agent tool server, JSON-RPC 2.0 over Streamable HTTP, stateless, JSON responses only. The edge has
 * already checked the API key and counted the request in the reads window (the route's declared access), and
 * Fastify has read the body under the API's own limit and JSON checks; the SDK transport then answers the
 * JSON-RPC message with a server built for this request alone.
 */
@Controller('mcp')
export class McpController {
  private readonly services: BackendServices;
  private readonly toolCalls: Counter<'tool' | 'outcome'>;

  constructor(
    @Inject(PLATFORM.rpc) rpc: RpcClient,
    workspaces: WorkspacesService,
    rateLimiter: RateLimiter,
    @Inject(PLATFORM.config) config: GatewayConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Inject(PLATFORM.metrics) metrics: Metrics,
  ) {
    this.services = { rpc, workspaces, rateLimiter, config };
    this.toolCalls = new Counter({
      name: 'decision_service_mcp_tool_calls_total',
      help: 'MCP tool calls, by tool (unknown for a name that is none) and outcome (ok or the error code)',
      labelNames: ['tool', 'outcome'],
      registers: [metrics.registry],
    });
  }

  @Post()
  @ApiKeyRoute('reads')
  async message(
    @ApiKey() key: AuthenticatedKey,
    @RequestId() requestId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (body === undefined) throw new ServiceError('INVALID_REQUEST', 'The request body is empty; send one JSON-RPC message.');
    if (Array.isArray(body)) {
      return sendJsonRpcError(reply, 400, -32600, 'JSON-RPC batches are not accepted: send one message per request.');
    }
    const logger = this.logger.child({ request_id: requestId });
    const server = mcpServer({
      backend: new GatewayToolBackend(this.services, key, requestId),
      requestId,
      mapError: (error) => toServiceError(error, logger),
      observe: (tool, outcome) => this.toolCalls.inc({ tool, outcome }),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(webRequest(request), { parsedBody: body });
      const text = await response.text();
      reply.status(response.status);
      response.headers.forEach((value, name) => {
        if (name !== 'content-length') void reply.header(name, value);
      });
      await reply.send(text === '' ? undefined : text);
    } finally {
      await server.close();
    }
  }

  // Stateless: there is no event stream to open with GET and no session to end with DELETE. Both still need a key
  // and count as /mcp requests, as every request to the tool server does.
  @Get()
  @ApiKeyRoute('reads')
  stream(@Res() reply: FastifyReply): void {
    sendJsonRpcError(reply, 405, -32000, 'Method not allowed: this server is stateless and answers POST only (no event stream, no sessions).', {
      allow: 'POST',
    });
  }

  @Delete()
  @ApiKeyRoute('reads')
  endSession(@Res() reply: FastifyReply): void {
    sendJsonRpcError(reply, 405, -32000, 'Method not allowed: this server is stateless and answers POST only (no event stream, no sessions).', {
      allow: 'POST',
    });
  }
}

/** Transport-level refusals answer as the SDK's own do: a JSON-RPC error with no id. */
function sendJsonRpcError(reply: FastifyReply, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  void reply
    .status(status)
    .headers({ ...headers, 'content-type': 'application/json' })
    .send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The request as the SDK's web-standard transport reads it: method, URL and headers (the body is passed parsed). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name.startsWith(':') || NOT_FORWARDED.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(new URL(request.url, 'http://gateway.invalid'), { method: request.method, headers });
}

// Renders the OpenAPI 3.1 document from the operation table and the component schemas.
import { ERROR_STATUS, REQUEST_BODY_MAX_BYTES, type ErrorCode } from '@ds/contracts';
import { componentSchemas, ref } from './components';
import type { JsonSchema } from './json-schema';
import { OPERATIONS, PARAMETERS, type Operation } from './operations';

export const OPENAPI_VERSION = '3.1.1';

export interface DocumentOptions {
  /** The public base address (`BASE_URL`). */
  serverUrl: string;
  /** The API's own version string shown in `info.version`. */
  apiVersion?: string;
}

export type OpenApiDocument = {
  openapi: string;
  info: Record<string, unknown>;
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, any>>;
  webhooks: Record<string, Record<string, any>>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, unknown>;
    headers: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
  };
  tags: Array<{ name: string; description?: string }>;
  [extension: `x-${string}`]: unknown;
};

const HEADERS: Record<string, { description: string; schema: JsonSchema }> = {
  'X-Request-ID': {
    description: "The request id: the caller's valid `X-Request-ID`, else a generated `req_…`; equal to `error.request_id`.",
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': { description: 'Requests allowed in the window this request counted in.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in that window.', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'Unix seconds when that window ends.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'The workspace windows (IETF draft-ietf-httpapi-ratelimit-headers).', schema: { type: 'string' } },
  RateLimit: { description: 'The window this request counted in (IETF draft-ietf-httpapi-ratelimit-headers).', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
  'Idempotent-Replayed': {
    description: '`true` when the stored response of an earlier request with the same Idempotency-Key is replayed (not billed).',
    schema: { const: 'true' },
  },
  'WWW-Authenticate': { description: '`Bearer`: an API key is needed.', schema: { type: 'string' } },
  Allow: { description: 'The methods the path supports.', schema: { type: 'string' } },
};

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];

const TAGS: Array<{ name: string; description: string }> = [
  { name: 'Decisions', description: 'Run decisions and read their contracts.' },
  { name: 'Account', description: 'The key, its workspace, the plan and usage.' },
  { name: 'Executions', description: 'Recorded runs.' },
  { name: 'Secret URL', description: 'Run a decision from a secret URL, without an API key.' },
  { name: 'Agent tools (MCP)', description: 'The Model Context Protocol tool server for agents.' },
  { name: 'Partner', description: 'Sub-workspaces and embed sessions (partner mode only).' },
  { name: 'Service', description: 'Health and this description.' },
];

function headerRefs(names: string[]): Record<string, { $ref: string }> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** The error object with `error.code` narrowed to the codes one answer can carry. */
function errorSchema(codes: ErrorCode[]): JsonSchema {
  // `additionalProperties: true` says that this part only narrows: the other fields are described by Error.
  return {
    allOf: [
      ref('Error'),
      {
        type: 'object',
        properties: { error: { type: 'object', properties: { code: { enum: codes } }, additionalProperties: true } },
        additionalProperties: true,
      },
    ],
  };
}

function errorResponses(operation: Operation): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(operation.errors)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers = ['X-Request-ID'];
    // A refused credential (step 1) is answered before any window is counted, so it carries no rate-limit headers.
    if (operation.auth === 'api-key' && !codes.every((code) => code === 'INVALID_API_KEY')) headers.push(...RATE_LIMIT_HEADERS);
    if (status === 429 || codes.includes('SERVICE_UNAVAILABLE') || codes.includes('IDEMPOTENCY_CONFLICT')) headers.push('Retry-After');
    if (status === 401 && operation.path === '/mcp') headers.push('WWW-Authenticate');
    responses[String(status)] = {
      description: codes.map((code) => `\`${code}\``).join(', '),
      headers: headerRefs(headers),
      content: { 'application/json': { schema: errorSchema(codes) } },
    };
  }
  return responses;
}

function operationObject(operation: Operation): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const success of operation.success) {
    const headers = ['X-Request-ID', ...(operation.auth === 'api-key' ? RATE_LIMIT_HEADERS : []), ...(success.headers ?? [])];
    responses[String(success.status)] = {
      description: success.description,
      headers: headerRefs(headers),
      ...(success.schema ? { content: { 'application/json': { schema: success.schema } } } : {}),
    };
  }
  for (const [status, other] of Object.entries(operation.otherResponses ?? {})) {
    responses[status] = { description: other.description, headers: headerRefs(['X-Request-ID', ...(other.headers ?? [])]) };
  }
  Object.assign(responses, errorResponses(operation));

  const object: Record<string, unknown> = {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    security: operation.auth === 'api-key' ? [{ ApiKey: [] }] : operation.auth === 'hook' ? [{}, { WebhookSecret: [] }] : [],
    ...(operation.parameters ? { parameters: operation.parameters } : {}),
    ...(operation.requestBody
      ? {
          requestBody: {
            required: operation.requestBody.required,
            description: operation.requestBody.description ?? `At most ${REQUEST_BODY_MAX_BYTES} bytes (128 KB); larger bodies answer 413 PAYLOAD_TOO_LARGE.`,
            content: Object.fromEntries(Object.entries(operation.requestBody.content).map(([type, schema]) => [type, { schema }])),
          },
        }
      : {}),
    responses,
  };
  if (operation.windows) object['x-rate-limit-windows'] = operation.windows;
  return object;
}

function decisionCompletedWebhook(): Record<string, unknown> {
  return {
    post: {
      operationId: 'decisionCompleted',
      summary: 'A run whose webhook destination fired',
      description:
        'Sent to destinations of kind webhook, HTTPS only, no redirects followed, at least once: 6 attempts over about 7 hours, 10-second attempt timeout, ' +
        "`Retry-After` honored. Deduplicate on `id`. Verify `Service-Signature` with the workspace's `whsec_` signing secret; during a rotation it carries one `v1=` per valid secret.",
      parameters: [
        {
          name: 'Service-Signature',
          in: 'header',
          required: true,
          description: '`t=<unix seconds>,v1=<hex>[,v1=<hex>]`, `v1 = hex(HMAC-SHA256(whsec_ secret, "<t>." + raw body))`.',
          schema: { type: 'string' },
        },
        {
          name: 'webhook-id',
          in: 'header',
          description: 'Standard Webhooks: the delivery id (`dlv_…`), the same on every attempt.',
          schema: { type: 'string' },
        },
        { name: 'webhook-timestamp', in: 'header', description: 'Standard Webhooks: Unix seconds of the attempt.', schema: { type: 'string' } },
        { name: 'webhook-signature', in: 'header', description: 'Standard Webhooks: `v1,<base64>` signatures.', schema: { type: 'string' } },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: ref('DecisionCompletedEvent') } } },
      responses: { '2XX': { description: 'Received; any other answer (or none within 10 seconds) is retried, except 410, which stops retrying.' } },
    },
  };
}

/** The whole public API. */
export function openApiDocument(options: DocumentOptions): OpenApiDocument {
  const paths: Record<string, Record<string, any>> = {};
  for (const operation of OPERATIONS) {
    const item = (paths[operation.path] ??= {});
    item[operation.method] = operationObject(operation);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Decision Service API',
      version: options.apiVersion ?? 'v1',
      description:
        'Put an LLM-backed decision behind an API. JSON bodies, snake_case fields, one error shape (`error.code`, `message`, `request_id`, optional `details`). ' +
        "Rate limits are counted per workspace in fixed one-minute windows: the plan's requests a minute for decisions, reads and secret-URL calls each, and twice that for outcomes; see `x-rate-limit-windows` on each operation.",
    },
    servers: [{ url: options.serverUrl }],
    paths,
    webhooks: { 'decision.completed': decisionCompletedWebhook() },
    components: {
      schemas: componentSchemas(),
      parameters: PARAMETERS,
      headers: HEADERS,
      securitySchemes: {
        ApiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `svc_live_…` or `svc_test_…`. Server-side use only.' },
        WebhookSecret: { type: 'http', scheme: 'bearer', description: "A secret URL's `whsec_…` secret, as an alternative to `Service-Signature`." },
      },
    },
    tags: TAGS,
  };
}

/** Fastify-style route (`/v1/decisions/:slug`) to OpenAPI path (`/v1/decisions/{slug}`). */
export function openApiPath(route: string): string {
  return route.replace(/:(\w+)/g, '{$1}');
}

/** A path with its parameter names blanked, so that `/v1/workspaces/{ref}` and `/v1/workspaces/:id` compare equal. */
export function pathShape(path: string): string {
  return openApiPath(path).replace(/\{\w+\}/g, '{}');
}

/**
 * The routes among `routes` that the document does not describe: the public API (`/v1/…`, `/mcp`,
 * `/openapi.json`, `/health`), HEAD twins of GET routes left out.
 */
export function undocumentedRoutes(document: OpenApiDocument, routes: ReadonlyArray<{ method: string; url: string }>): string[] {
  const documented = new Set(
    Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${pathShape(path)}`)),
  );
  return routes
    .filter((route) => isPublicApiRoute(route.url) && route.method !== 'HEAD')
    .map((route) => `${route.method} ${pathShape(route.url)}`)
    .filter((route) => !documented.has(route));
}

/** Routes of the public API; the application (`/app/v1`) and operator (`/admin/v1`) APIs are not part of it. */
export function isPublicApiRoute(url: string): boolean {
  return url.startsWith('/v1/') || url === '/v1' || url === '/mcp' || url === '/openapi.json' || url === '/health';
}

import fc from 'fast-check';
import { ERROR_STATUS, EXECUTIONS_PAGE, REQUEST_BODY_MAX_BYTES, type ErrorCode } from '@ds/contracts';
import { isValidSlug } from '@ds/decision-schema';
import { isValidCallerToken } from '@ds/ids';
import { CALLER_TOKEN_SCHEMA, SLUG_SCHEMA } from './components';
import { isPublicApiRoute, openApiDocument, openApiPath, undocumentedRoutes, type OpenApiDocument } from './document';
import { checkAgainstSchema, resolveRef, type JsonSchema } from './json-schema';
import { OPERATIONS } from './operations';
import { validateOpenApi as validateWithStandardValidator } from '../../../test/support/openapi-validator';

const document = openApiDocument({ serverUrl: 'https://api.example.com' });

/** Every `$ref` in a document, and every schema node (to prove the checker understands each keyword). */
function walk(node: unknown, visit: (key: string, value: unknown) => void): void {
  if (Array.isArray(node)) return node.forEach((item) => walk(item, visit));
  if (typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    visit(key, value);
    walk(value, visit);
  }
}

function operation(method: string, path: string): any {
  const found = document.paths[path]?.[method];
  if (!found) throw new Error(`no ${method} ${path}`);
  return found;
}

function errorCodes(op: any, status: number): string[] {
  const schema = op.responses[String(status)]?.content['application/json'].schema;
  return schema ? schema.allOf[1].properties.error.properties.code.enum : [];
}

describe('the public OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document for the standard validator', () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(validateWithStandardValidator(document)).toEqual({ valid: true });
  });

  it('a broken document is refused by the same validator (the check can fail)', () => {
    const broken = structuredClone(document) as any;
    broken.paths['/health'].get.responses = 'none';
    expect(validateWithStandardValidator(broken).valid).toBe(false);
  });

  it('resolves every reference, and the schema checker understands every schema in it', () => {
    const refs: string[] = [];
    walk(document, (key, value) => key === '$ref' && refs.push(value as string));
    expect(refs.length).toBeGreaterThan(100);
    for (const target of new Set(refs)) expect(() => resolveRef(document, target)).not.toThrow();
    // Checking any value against every schema makes the checker read each keyword it meets on the way.
    for (const schema of Object.values(document.components.schemas)) expect(() => checkAgainstSchema(schema, {}, document)).not.toThrow();
  });

  it('describes every public path and method of the spec, and nothing of the application or operator APIs', () => {
    const described = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(described.sort()).toEqual(
      [
        'POST /v1/decisions/{slug}',
        'GET /v1/decisions',
        'GET /v1/decisions/{slug}',
        'GET /v1/decisions/{slug}/openapi.json',
        'GET /v1/me',
        'GET /v1/executions',
        'POST /v1/executions/{id}/outcome',
        'POST /v1/hooks/{token}',
        'POST /mcp',
        'GET /mcp',
        'DELETE /mcp',
        'GET /openapi.json',
        'GET /health',
        'POST /v1/workspaces',
        'GET /v1/workspaces',
        'GET /v1/workspaces/{ref}',
        'PATCH /v1/workspaces/{ref}',
        'DELETE /v1/workspaces/{ref}',
        'POST /v1/embed/sessions',
        'DELETE /v1/embed/sessions/{id}',
        'POST /v1/embed/sessions/revoke',
      ].sort(),
    );
    expect(Object.keys(document.paths).filter((path) => !isPublicApiRoute(path))).toEqual([]);
  });

  it('answers every error with the status ERROR_STATUS gives its code, grouped per status', () => {
    for (const op of OPERATIONS) {
      const rendered = operation(op.method, op.path);
      const listed = new Set<string>();
      for (const [status, response] of Object.entries<any>(rendered.responses)) {
        const codes: ErrorCode[] = response.content?.['application/json']?.schema?.allOf?.[1].properties.error.properties.code.enum ?? [];
        for (const code of codes) {
          expect({ code, status: Number(status) }).toEqual({ code, status: ERROR_STATUS[code] });
          listed.add(code);
        }
      }
      expect([...listed].sort()).toEqual([...new Set(op.errors)].sort());
    }
  });

  it("lists the run endpoint's errors from the order of checks", () => {
    const run = operation('post', '/v1/decisions/{slug}');
    expect(errorCodes(run, 400)).toEqual(['INVALID_REQUEST']);
    expect(errorCodes(run, 401)).toEqual(['INVALID_API_KEY']);
    expect(errorCodes(run, 402).sort()).toEqual(['CREDITS_EXHAUSTED', 'QUOTA_EXCEEDED', 'SPEND_CAP_REACHED']);
    expect(errorCodes(run, 404)).toEqual(['DECISION_NOT_FOUND']);
    expect(errorCodes(run, 409).sort()).toEqual(['DECISION_DISABLED', 'DECISION_NOT_DEPLOYED', 'IDEMPOTENCY_CONFLICT']);
    expect(errorCodes(run, 413)).toEqual(['PAYLOAD_TOO_LARGE']);
    expect(errorCodes(run, 422)).toEqual(['INVALID_STATE']);
    expect(errorCodes(run, 424)).toEqual(['ENGINE_NOT_CONFIGURED']);
    expect(errorCodes(run, 429)).toEqual(['RATE_LIMITED']);
    expect(errorCodes(run, 502).sort()).toEqual(['ENGINE_AUTH_FAILED', 'ENGINE_ERROR', 'ENGINE_INVALID_REQUEST']);
    expect(errorCodes(run, 503).sort()).toEqual(['ENGINE_RATE_LIMITED', 'ENGINE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
    expect(errorCodes(run, 504)).toEqual(['ENGINE_TIMEOUT']);
    expect(run.requestBody.description).toContain(String(REQUEST_BODY_MAX_BYTES));
  });

  it("lists the secret URL's error table", () => {
    const hook = operation('post', '/v1/hooks/{token}');
    const table: Record<number, string[]> = {
      400: ['INVALID_REQUEST'],
      401: ['UNAUTHORIZED'],
      402: ['CREDITS_EXHAUSTED', 'QUOTA_EXCEEDED', 'SPEND_CAP_REACHED'],
      404: ['NOT_FOUND'],
      409: ['DECISION_DISABLED', 'DECISION_NOT_DEPLOYED'],
      413: ['PAYLOAD_TOO_LARGE'],
      422: ['INVALID_STATE'],
      424: ['ENGINE_NOT_CONFIGURED'],
      429: ['RATE_LIMITED'],
    };
    for (const [status, codes] of Object.entries(table)) expect(errorCodes(hook, Number(status)).sort()).toEqual(codes);
    expect(hook.security).toEqual([{}, { WebhookSecret: [] }]);
    expect(Object.keys(hook.requestBody.content).sort()).toEqual(['application/json', 'text/plain']);
    expect(hook.parameters).toContainEqual({ $ref: '#/components/parameters/ServiceSignature' });
  });

  it('puts the rate-limit headers on authenticated answers, except the 401 that comes before the window', () => {
    const headersOf = (op: any, status: number) => Object.keys(op.responses[String(status)].headers).sort();
    const me = operation('get', '/v1/me');
    expect(headersOf(me, 200)).toEqual(['RateLimit', 'RateLimit-Policy', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-ID']);
    expect(headersOf(me, 401)).toEqual(['X-Request-ID']);
    expect(headersOf(me, 429)).toContain('Retry-After');
    expect(headersOf(me, 429)).toContain('X-RateLimit-Reset');
    const run = operation('post', '/v1/decisions/{slug}');
    expect(headersOf(run, 200)).toContain('Idempotent-Replayed');
    expect(headersOf(run, 409)).toContain('Retry-After');
    expect(headersOf(operation('post', '/mcp'), 401)).toEqual(['WWW-Authenticate', 'X-Request-ID']);
    expect(headersOf(operation('get', '/health'), 200)).toEqual(['X-Request-ID']);
  });

  it('needs the API key on /v1 and every method of /mcp, and nothing on the documents, the health check and the secret URL', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const expected = path === '/v1/hooks/{token}' ? [{}, { WebhookSecret: [] }] : path.startsWith('/v1/') || path === '/mcp' ? [{ ApiKey: [] }] : [];
        expect({ route: `${method} ${path}`, security: op.security }).toEqual({ route: `${method} ${path}`, security: expected });
      }
    }
    expect(document.components.securitySchemes.ApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('describes the decision.completed event under webhooks, carrying the run response', () => {
    const event = document.webhooks['decision.completed']?.post;
    expect(event.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/DecisionCompletedEvent' });
    expect(event.parameters.map((p: { name: string }) => p.name)).toContain('Service-Signature');
    const schema = document.components.schemas.DecisionCompletedEvent;
    expect(schema?.properties?.data).toEqual({ $ref: '#/components/schemas/RunResponse' });
    expect(schema?.properties?.type).toEqual({ const: 'decision.completed' });
  });

  it('takes the executions page limits from the constants the gateway checks with', () => {
    const limit = document.components.parameters.ExecutionsLimit as { schema: JsonSchema };
    expect(limit.schema).toMatchObject({ minimum: EXECUTIONS_PAGE.min, maximum: EXECUTIONS_PAGE.max, default: EXECUTIONS_PAGE.default });
  });
});

describe('patterns published in the document agree with the checks the services run', () => {
  const agree = (schema: JsonSchema, check: (value: string) => boolean, arbitrary: fc.Arbitrary<string>) =>
    fc.assert(
      fc.property(arbitrary, (value) => (checkAgainstSchema(schema, value).length === 0) === check(value)),
      { numRuns: 2000 },
    );

  it('slug', () => {
    const slugish = fc.stringMatching(/^[a-z0-9-]{0,70}$/);
    agree(SLUG_SCHEMA, isValidSlug, fc.oneof(slugish, fc.string(), fc.constantFrom('a', 'a-b', '-a', 'a-', 'a--b', 'A', 'a'.repeat(64), 'a'.repeat(65))));
  });

  it('Idempotency-Key and X-Request-ID', () => {
    const tokenish = fc.stringMatching(/^[A-Za-z0-9._:\- /é]{0,140}$/);
    agree(CALLER_TOKEN_SCHEMA, isValidCallerToken, fc.oneof(tokenish, fc.string(), fc.constantFrom('', 'a'.repeat(128), 'a'.repeat(129), 'key:1.2_3-4')));
  });
});

describe('undocumentedRoutes', () => {
  const doc: OpenApiDocument = document;

  it('finds a public route the document does not describe, whatever its parameters are called', () => {
    const routes = [
      { method: 'GET', url: '/v1/me' },
      { method: 'HEAD', url: '/v1/me' },
      { method: 'GET', url: '/v1/workspaces/:id' },
      { method: 'POST', url: '/v1/decisions/:slug/simulate' },
      { method: 'PUT', url: '/v1/me' },
      { method: 'GET', url: '/app/v1/workspaces/:ws/api-keys' },
      { method: 'PUT', url: '/admin/v1/workspaces/:ws/plan' },
      { method: 'GET', url: '/mcp' },
    ];
    expect(undocumentedRoutes(doc, routes)).toEqual(['POST /v1/decisions/{}/simulate', 'PUT /v1/me']);
  });

  it('turns router parameters into OpenAPI ones', () => {
    expect(openApiPath('/v1/decisions/:slug/openapi.json')).toBe('/v1/decisions/{slug}/openapi.json');
  });
});

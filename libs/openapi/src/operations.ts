// Every public operation: path, method, who may call it, what it takes, what it answers and which error codes it
// can answer with. The document (document.ts) is rendered from this table; statuses come from ERROR_STATUS.
import {
  ERROR_STATUS,
  EXECUTION_REASONS,
  EXECUTION_SOURCE_GROUPS,
  EXECUTION_STATUSES,
  EXECUTIONS_COUNT_CAP,
  EXECUTIONS_CURSOR_MAX_LENGTH,
  EXECUTIONS_PAGE,
  MAX_DECISION_VERSION,
  type ErrorCode,
} from '@ds/contracts';
import { CALLER_TOKEN_SCHEMA, ref, SLUG_SCHEMA } from './components';
import type { JsonSchema } from './json-schema';

export type Auth =
  /** No credential. */
  | 'public'
  /** `Authorization: Bearer svc_live_…|svc_test_…`; the request counts in `window`. */
  | 'api-key'
  /** The secret URL: the token in the path, and a proof when the hook has a secret. */
  | 'hook';

export type RateWindow = 'decisions' | 'reads' | 'webhooks' | 'outcomes';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description: string;
  schema: JsonSchema;
}

export interface Body {
  /** Media type → schema. */
  content: Record<string, JsonSchema>;
  required: boolean;
  description?: string;
}

export interface Success {
  status: number;
  description: string;
  /** Absent for bodiless answers (204). */
  schema?: JsonSchema;
  headers?: string[];
}

export interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI form: `/v1/decisions/{slug}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  /** The rate-limit windows the request counts in (MCP `run_decision` counts in two). */
  windows?: RateWindow[];
  parameters?: Array<Parameter | { $ref: string }>;
  requestBody?: Body;
  success: Success[];
  errors: ErrorCode[];
  /** Answers outside the error object (the MCP transport's 405 and 406). */
  otherResponses?: Record<string, { description: string; schema?: JsonSchema; headers?: string[] }>;
}

export const PARAMETERS: Record<string, Parameter> = {
  Slug: { name: 'slug', in: 'path', required: true, description: "The decision's slug. A malformed slug answers 404 DECISION_NOT_FOUND.", schema: SLUG_SCHEMA },
  Include: {
    name: 'include',
    in: 'query',
    description: 'Comma-separated; `probabilities` adds the distribution of every question. Other values are ignored.',
    schema: { type: 'string' },
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    description:
      'Replays the stored response of the same request for 24 hours (with `Idempotent-Replayed: true`, not billed). Invalid format: 400 INVALID_REQUEST.',
    schema: CALLER_TOKEN_SCHEMA,
  },
  DecisionVersion: {
    name: 'Decision-Version',
    in: 'header',
    description:
      'Runs this deployed version instead of the active one; the answer says which ran (`version`). Part of the idempotency fingerprint. ' +
      'Not a positive integer: 400 INVALID_REQUEST (with the body checks); a version the decision does not have: 404 DECISION_NOT_FOUND (with the decision checks).',
    schema: { type: 'integer', minimum: 1, maximum: MAX_DECISION_VERSION },
  },
  RequestId: {
    name: 'X-Request-ID',
    in: 'header',
    description:
      'Echoed back, stored with the execution and used as `error.request_id`. A value outside this format is replaced by a generated `req_…` id, never refused.',
    schema: CALLER_TOKEN_SCHEMA,
  },
  ExecutionsLimit: {
    name: 'limit',
    in: 'query',
    description: `Page size, ${EXECUTIONS_PAGE.min} to ${EXECUTIONS_PAGE.max}; otherwise 400 INVALID_REQUEST.`,
    schema: { type: 'integer', minimum: EXECUTIONS_PAGE.min, maximum: EXECUTIONS_PAGE.max, default: EXECUTIONS_PAGE.default },
  },
  ExecutionsCursor: {
    name: 'cursor',
    in: 'query',
    description: '`next_cursor` of the previous page.',
    schema: { type: 'string', minLength: 1, maxLength: EXECUTIONS_CURSOR_MAX_LENGTH },
  },
  ExecutionsDecision: { name: 'decision', in: 'query', description: "Only this decision's executions (its slug).", schema: { type: 'string' } },
  ExecutionsInclude: {
    name: 'include',
    in: 'query',
    description: `Comma-separated; \`trace\` adds each execution's rule trace; \`total_count\` adds \`total_count\`, how many executions match the filters, counted up to ${EXECUTIONS_COUNT_CAP.toLocaleString('en-US')} (\`total_capped\` says when more match). Other values are ignored.`,
    schema: { type: 'string' },
  },
  ExecutionsSource: {
    name: 'source',
    in: 'query',
    description:
      'Only executions from these source groups, comma-separated or repeated: `live` and `test` are the API, secret-URL and agent runs of live and test keys; `playground`, `replay` and `shadow` are runs of those sources; `all` is every source. Absent: every source.',
    schema: { type: 'string', pattern: `^(${[...EXECUTION_SOURCE_GROUPS, 'all'].join('|')})(,(${[...EXECUTION_SOURCE_GROUPS, 'all'].join('|')}))*$` },
  },
  ExecutionsVersion: {
    name: 'version',
    in: 'query',
    description: 'Only executions of this version (digits, no sign or leading zeros).',
    schema: { type: 'integer', minimum: 1, maximum: MAX_DECISION_VERSION },
  },
  ExecutionsAction: { name: 'action', in: 'query', description: 'Only executions that took this action.', schema: ref('Action') },
  ExecutionsReason: {
    name: 'reason',
    in: 'query',
    description: 'Only executions whose `action_reason.type` is this.',
    schema: { enum: [...EXECUTION_REASONS] },
  },
  ExecutionsErrorCode: {
    name: 'error_code',
    in: 'query',
    description: 'Only failed executions with this `error.code`, and engine-error fallbacks whose `action_reason.code` is this.',
    schema: { enum: Object.keys(ERROR_STATUS) },
  },
  ExecutionId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The `exec_…` id. Unknown, of another workspace, or malformed: 404 NOT_FOUND.',
    schema: { type: 'string', maxLength: 68 },
  },
  ExecutionsStatus: { name: 'status', in: 'query', description: 'Only executions with this status.', schema: { enum: [...EXECUTION_STATUSES] } },
  HookToken: {
    name: 'token',
    in: 'path',
    required: true,
    description: 'The secret URL token; it identifies the decision and the workspace. Unknown, rotated or turned-off tokens answer 404 NOT_FOUND.',
    schema: { type: 'string', pattern: '^whk_[A-Za-z0-9]{32}$' },
  },
  ServiceSignature: {
    name: 'Service-Signature',
    in: 'header',
    description:
      'Required when the hook has a secret, unless the secret is sent as `Authorization: Bearer whsec_…`. `t=<unix seconds>,v1=<hex>` with ' +
      '`v1 = hex(HMAC-SHA256(secret, "<t>." + raw body))`; `t` more than 300 seconds from the service clock is refused.',
    schema: { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-fA-F]+)+$' },
  },
  WorkspaceRef: { name: 'ref', in: 'path', required: true, description: 'The sub-workspace id, or `ext:<external_id>`.', schema: { type: 'string' } },
  ListLimit: { name: 'limit', in: 'query', description: 'Page size.', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  ListCursor: { name: 'cursor', in: 'query', description: '`next_cursor` of the previous page.', schema: { type: 'string' } },
  ExternalIdFilter: { name: 'external_id', in: 'query', description: 'Only the sub-workspace with this external id.', schema: { type: 'string' } },
  EmbedSessionId: { name: 'id', in: 'path', required: true, description: 'The embed session id (`emb_…`).', schema: { type: 'string', pattern: '^emb_' } },
};

const param = (name: keyof typeof PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });
const json = (schema: JsonSchema): Record<string, JsonSchema> => ({ 'application/json': schema });

/** Answers every authenticated operation can give besides its own. */
const API_KEY_ERRORS: ErrorCode[] = ['INVALID_API_KEY', 'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];
const PARTNER_ERRORS: ErrorCode[] = [...API_KEY_ERRORS, 'FORBIDDEN'];
const ENGINE_ERRORS: ErrorCode[] = [
  'ENGINE_NOT_CONFIGURED',
  'ENGINE_TIMEOUT',
  'ENGINE_RATE_LIMITED',
  'ENGINE_UNAVAILABLE',
  'ENGINE_INVALID_REQUEST',
  'ENGINE_AUTH_FAILED',
  'ENGINE_ERROR',
];
const BILLING_ERRORS: ErrorCode[] = ['CREDITS_EXHAUSTED', 'SPEND_CAP_REACHED', 'QUOTA_EXCEEDED'];

export const OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/v1/decisions/{slug}',
    operationId: 'runDecision',
    tag: 'Decisions',
    summary: 'Run a decision',
    description:
      'Runs the active version of the decision, or the version named by `Decision-Version`. Order of checks: API key (401), rate limit (429), slug format (404), body (413, 400), ' +
      'Idempotency-Key (400), idempotency (409), decision (404, 409), credits (402), state (422), engine (424, 502, 503, 504). ' +
      'Only a fresh 200 is billed; engine-error fallbacks, errors and replays are not.',
    auth: 'api-key',
    windows: ['decisions'],
    parameters: [param('Slug'), param('Include'), param('IdempotencyKey'), param('DecisionVersion'), param('RequestId')],
    requestBody: { required: true, content: json(ref('RunRequest')) },
    success: [
      {
        status: 200,
        description: 'The decision answered (or the fallback action after an engine error).',
        schema: ref('RunResponse'),
        headers: ['Idempotent-Replayed'],
      },
    ],
    errors: [
      ...API_KEY_ERRORS,
      'INVALID_REQUEST',
      'PAYLOAD_TOO_LARGE',
      'DECISION_NOT_FOUND',
      'IDEMPOTENCY_CONFLICT',
      'DECISION_NOT_DEPLOYED',
      'DECISION_DISABLED',
      ...BILLING_ERRORS,
      'INVALID_STATE',
      ...ENGINE_ERRORS,
    ],
  },
  {
    method: 'get',
    path: '/v1/decisions',
    operationId: 'listDecisions',
    tag: 'Decisions',
    summary: "List the workspace's decisions",
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('RequestId')],
    success: [{ status: 200, description: 'Slug, name, status and active version of every decision.', schema: ref('DecisionList') }],
    errors: [...API_KEY_ERRORS],
  },
  {
    method: 'get',
    path: '/v1/decisions/{slug}',
    operationId: 'getDecision',
    tag: 'Decisions',
    summary: "Read a decision's contract",
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('Slug'), param('RequestId')],
    success: [{ status: 200, description: 'The contract of the active version.', schema: ref('DecisionContract') }],
    errors: [...API_KEY_ERRORS, 'DECISION_NOT_FOUND', 'DECISION_NOT_DEPLOYED'],
  },
  {
    method: 'get',
    path: '/v1/decisions/{slug}/openapi.json',
    operationId: 'getDecisionOpenApi',
    tag: 'Decisions',
    summary: 'The OpenAPI 3.1 document narrowed to one decision',
    description:
      'Running this decision, its contract, its secret URL and its `decision.completed` event, with `state`, `result`, `confidence`, `scores` and `probabilities` typed from the active version, so a client generator produces a typed client for this decision. Changes only when a new version is deployed.',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('Slug'), param('RequestId')],
    success: [{ status: 200, description: 'An OpenAPI 3.1 document.', schema: ref('OpenApiDocument') }],
    errors: [...API_KEY_ERRORS, 'DECISION_NOT_FOUND', 'DECISION_NOT_DEPLOYED'],
  },
  {
    method: 'get',
    path: '/v1/me',
    operationId: 'getAccount',
    tag: 'Account',
    summary: "The key's workspace, the key, the plan and the period's usage",
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('RequestId')],
    success: [{ status: 200, description: 'The account.', schema: ref('Account') }],
    errors: [...API_KEY_ERRORS],
  },
  {
    method: 'get',
    path: '/v1/executions',
    operationId: 'listExecutions',
    tag: 'Executions',
    summary: 'List recent executions (never their inputs)',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [
      param('ExecutionsLimit'),
      param('ExecutionsCursor'),
      param('ExecutionsDecision'),
      param('ExecutionsStatus'),
      param('ExecutionsSource'),
      param('ExecutionsVersion'),
      param('ExecutionsAction'),
      param('ExecutionsReason'),
      param('ExecutionsErrorCode'),
      param('ExecutionsInclude'),
      param('RequestId'),
    ],
    success: [{ status: 200, description: 'Newest first.', schema: ref('ExecutionList') }],
    errors: [...API_KEY_ERRORS, 'INVALID_REQUEST'],
  },
  {
    method: 'post',
    path: '/v1/executions/{id}/outcome',
    operationId: 'recordOutcome',
    tag: 'Executions',
    summary: 'Report what turned out to be right for an execution',
    description:
      'Checked against the version that answered the execution: unknown question keys and values of the wrong kind answer 400 naming the bad paths in `details` (the first 50; the message counts the rest). ' +
      'Only live runs of a deployed version take an outcome (`source` `api`, `webhook` or `mcp`): a playground run, a replay’s run, a shadow run or a run of the draft answers 409 `CONFLICT`, before the body is checked. ' +
      "A repeat replaces the earlier outcome. Outcomes feed the application's quality report and calibration, and are deleted with their execution. Counts in the outcomes window (twice the plan's requests a minute), not in the reads window; not billed.",
    auth: 'api-key',
    windows: ['outcomes'],
    parameters: [param('ExecutionId'), param('RequestId')],
    requestBody: { required: true, content: json(ref('OutcomeRequest')) },
    success: [{ status: 200, description: 'The outcome as stored.', schema: ref('RecordedOutcome') }],
    errors: [...API_KEY_ERRORS, 'INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'NOT_FOUND', 'CONFLICT'],
  },
  {
    method: 'post',
    path: '/v1/hooks/{token}',
    operationId: 'runDecisionFromSecretUrl',
    tag: 'Secret URL',
    summary: 'Run a decision from its secret URL (no API key)',
    description:
      'A JSON object whose only key is `state` is unwrapped; anything else is the state. `text/plain` sends a text state as is; any other content type is read as JSON. ' +
      'With a secret, prove it with `Service-Signature` or `Authorization: Bearer whsec_…`; either suffices. More than 30 wrong proofs in a minute: 429 with `Retry-After: 60`. ' +
      'Counts in the webhooks window (the plan limit, shared by the workspace hooks), billed like API runs, recorded with `source: "webhook"`; no idempotency keys.',
    auth: 'hook',
    windows: ['webhooks'],
    parameters: [param('HookToken'), param('Include'), param('ServiceSignature'), param('RequestId')],
    requestBody: { required: true, content: { 'application/json': ref('HookBody'), 'text/plain': { type: 'string', minLength: 1 } } },
    success: [{ status: 200, description: 'The same body as the run endpoint.', schema: ref('RunResponse') }],
    errors: [
      'INVALID_REQUEST',
      'UNAUTHORIZED',
      ...BILLING_ERRORS,
      'NOT_FOUND',
      'DECISION_NOT_DEPLOYED',
      'DECISION_DISABLED',
      'PAYLOAD_TOO_LARGE',
      'INVALID_STATE',
      'RATE_LIMITED',
      ...ENGINE_ERRORS,
      'INTERNAL_ERROR',
      'SERVICE_UNAVAILABLE',
    ],
  },
  {
    method: 'post',
    path: '/mcp',
    operationId: 'mcp',
    tag: 'Agent tools (MCP)',
    summary: 'MCP tool server: JSON-RPC 2.0 over Streamable HTTP, stateless, JSON responses',
    description:
      'Send `Content-Type: application/json` and `Accept: application/json, text/event-stream`. No session and no initialize handshake are needed. ' +
      'Tools: get_account, list_decisions, get_decision, check_state, run_decision, list_executions, list_templates, get_template, validate_schema. ' +
      'Every request counts in the reads window; `run_decision` also in the decisions window, and is billed.',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('RequestId')],
    requestBody: { required: true, content: json(ref('JsonRpcRequest')) },
    success: [{ status: 200, description: 'The JSON-RPC response; tool errors are results with `isError: true`.', schema: ref('JsonRpcResponse') }],
    errors: [...API_KEY_ERRORS, 'INVALID_REQUEST', 'PAYLOAD_TOO_LARGE'],
    otherResponses: { '406': { description: 'The Accept header does not list both application/json and text/event-stream.' } },
  },
  ...(['get', 'delete'] as const).map((method): Operation => ({
    method,
    path: '/mcp',
    operationId: `mcp${method === 'get' ? 'Get' : 'Delete'}`,
    tag: 'Agent tools (MCP)',
    summary: 'Not supported: the server keeps no sessions and opens no event stream',
    description: 'The key is checked and the request counted in the reads window, as every request to /mcp is; then 405.',
    auth: 'api-key',
    windows: ['reads'],
    success: [],
    errors: [...API_KEY_ERRORS],
    otherResponses: { '405': { description: 'Method not allowed.', headers: ['Allow'] } },
  })),
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApi',
    tag: 'Service',
    summary: 'This OpenAPI 3.1 description of the public API',
    auth: 'public',
    success: [
      { status: 200, description: 'An OpenAPI 3.1 document, including the `decision.completed` event under `webhooks`.', schema: ref('OpenApiDocument') },
    ],
    errors: ['INTERNAL_ERROR'],
  },
  {
    method: 'get',
    path: '/health',
    operationId: 'health',
    tag: 'Service',
    summary: 'Health check',
    auth: 'public',
    success: [{ status: 200, description: 'The service answers.', schema: ref('Health') }],
    errors: [],
  },
  {
    method: 'post',
    path: '/v1/workspaces',
    operationId: 'createSubWorkspace',
    tag: 'Partner',
    summary: 'Create a sub-workspace, or update the one with this external_id',
    description: 'Partner mode only, with a key that has an author (403 FORBIDDEN with `details.reason` `partner_disabled` or `key_without_author`).',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('RequestId')],
    requestBody: { required: true, content: json(ref('SubWorkspaceCreate')) },
    success: [
      { status: 201, description: 'Created.', schema: ref('SubWorkspace') },
      { status: 200, description: 'It already existed: name, metadata and limits were updated.', schema: ref('SubWorkspace') },
    ],
    errors: [...PARTNER_ERRORS, 'INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'PLAN_LIMIT_REACHED'],
  },
  {
    method: 'get',
    path: '/v1/workspaces',
    operationId: 'listSubWorkspaces',
    tag: 'Partner',
    summary: 'List sub-workspaces',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('ListLimit'), param('ListCursor'), param('ExternalIdFilter'), param('RequestId')],
    success: [{ status: 200, description: 'A page of sub-workspaces.', schema: ref('SubWorkspaceList') }],
    errors: [...PARTNER_ERRORS, 'INVALID_REQUEST'],
  },
  {
    method: 'get',
    path: '/v1/workspaces/{ref}',
    operationId: 'getSubWorkspace',
    tag: 'Partner',
    summary: 'Read a sub-workspace',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('WorkspaceRef'), param('RequestId')],
    success: [{ status: 200, description: 'The sub-workspace.', schema: ref('SubWorkspace') }],
    errors: [...PARTNER_ERRORS, 'WORKSPACE_NOT_FOUND'],
  },
  {
    method: 'patch',
    path: '/v1/workspaces/{ref}',
    operationId: 'updateSubWorkspace',
    tag: 'Partner',
    summary: "Update a sub-workspace's name, metadata or limits",
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('WorkspaceRef'), param('RequestId')],
    requestBody: { required: true, content: json(ref('SubWorkspaceUpdate')) },
    success: [{ status: 200, description: 'The sub-workspace.', schema: ref('SubWorkspace') }],
    errors: [...PARTNER_ERRORS, 'INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'WORKSPACE_NOT_FOUND'],
  },
  {
    method: 'delete',
    path: '/v1/workspaces/{ref}',
    operationId: 'deleteSubWorkspace',
    tag: 'Partner',
    summary: 'Delete a sub-workspace with its decisions and executions',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('WorkspaceRef'), param('RequestId')],
    success: [{ status: 204, description: 'Deleted.' }],
    errors: [...PARTNER_ERRORS, 'WORKSPACE_NOT_FOUND'],
  },
  {
    method: 'post',
    path: '/v1/embed/sessions',
    operationId: 'createEmbedSession',
    tag: 'Partner',
    summary: 'Open the embeddable editor for one of your end users (server-side only)',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('RequestId')],
    requestBody: { required: true, content: json(ref('EmbedSessionRequest')) },
    success: [{ status: 201, description: 'The session and its one-time launch URL.', schema: ref('EmbedSession') }],
    errors: [...PARTNER_ERRORS, 'INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'WORKSPACE_NOT_FOUND', 'PLAN_LIMIT_REACHED'],
  },
  {
    method: 'delete',
    path: '/v1/embed/sessions/{id}',
    operationId: 'closeEmbedSession',
    tag: 'Partner',
    summary: 'Close one embed session',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('EmbedSessionId'), param('RequestId')],
    success: [{ status: 204, description: 'Closed.' }],
    errors: [...PARTNER_ERRORS, 'NOT_FOUND'],
  },
  {
    method: 'post',
    path: '/v1/embed/sessions/revoke',
    operationId: 'revokeEmbedSessions',
    tag: 'Partner',
    summary: 'Close the live sessions of a sub-workspace and/or one of your users',
    auth: 'api-key',
    windows: ['reads'],
    parameters: [param('RequestId')],
    requestBody: { required: true, content: json(ref('EmbedRevokeRequest')) },
    success: [{ status: 200, description: 'How many sessions were closed.', schema: ref('EmbedRevokeResponse') }],
    errors: [...PARTNER_ERRORS, 'INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'WORKSPACE_NOT_FOUND'],
  },
];

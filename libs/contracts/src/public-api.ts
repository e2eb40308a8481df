// Numbers and word lists of the public HTTP API that the gateway enforces and the OpenAPI document publishes:
// one definition, so the description cannot drift from the checks.
import type { PlanName } from './billing-ledger';
import type { ExecutionSource } from './decision-runner';

/** "128 KB" is 131,072 bytes (ARCHITECTURE.md): every request body. */
export const REQUEST_BODY_MAX_BYTES = 131_072;

/** `GET /v1/executions` paging: `limit` 1..100, default 20; `cursor` as returned by the previous page. */
export const EXECUTIONS_PAGE = { min: 1, max: 100, default: 20 } as const;
export const EXECUTIONS_CURSOR_MAX_LENGTH = 200;
/** `Decision-Version: N` on the run endpoint (and MCP `run_decision`'s `version`): a positive integer, at most this. */
export const MAX_DECISION_VERSION = 2_147_483_647;
export const DECISION_VERSION_PATTERN = /^[1-9][0-9]{0,9}$/;

export const EXECUTION_STATUSES = ['success', 'error'] as const;
export const EXECUTION_SOURCES = ['api', 'webhook', 'mcp'] as const satisfies readonly ExecutionSource[];

export const PLAN_NAMES = ['genesis', 'developer', 'growth', 'enterprise'] as const satisfies readonly PlanName[];
export const API_KEY_MODES = ['live', 'test'] as const;

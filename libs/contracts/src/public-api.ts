// Numbers and word lists of the public HTTP API that the gateway enforces and the OpenAPI document publishes:
// one definition, so the description cannot drift from the checks.
import type { PlanName } from './billing-ledger';
import type { ExecutionSource, ExecutionSourceGroup } from './decision-runner';
import { INT4_MAX } from './column-ranges';

/** "128 KB" is 131,072 bytes (ARCHITECTURE.md): every request body. */
export const REQUEST_BODY_MAX_BYTES = 131_072;

/** `GET /v1/executions` paging: `limit` 1..100, default 20; `cursor` as returned by the previous page. */
export const EXECUTIONS_PAGE = { min: 1, max: 100, default: 20 } as const;
export const EXECUTIONS_CURSOR_MAX_LENGTH = 200;
/**
 * `Decision-Version: N` on the run endpoint (and MCP `run_decision`'s `version`): a positive integer, at most this, the
 * bound of every version number any route reads (`VERSION_NUMBER_MAX` of `parseVersionText`, `parseVersionNumber`):
 * the `integer` column versions are stored in.
 */
export const MAX_DECISION_VERSION = INT4_MAX;

export const EXECUTION_STATUSES = ['success', 'error'] as const;
/** The `source` filter of the executions lists; `all` stands for every group. */
export const EXECUTION_SOURCE_GROUPS = ['live', 'test', 'playground', 'replay', 'shadow'] as const satisfies readonly ExecutionSourceGroup[];
/** The `reason` filter: the types of `action_reason`. */
export const EXECUTION_REASONS = ['policy', 'other_option', 'low_confidence', 'engine_error', 'default'] as const;
/** How far `include=total_count` counts: past it the total reads "10,000+", so a count never reads a whole table. */
export const EXECUTIONS_COUNT_CAP = 10_000;
/**
 * The sources of live runs: a caller's request through the API, the secret URL or an agent. Only these executions
 * (of a deployed version) take outcomes and count in the quality report and the calibration fit; playground runs,
 * replay copies and shadow runs never ran for a caller under the version they name.
 */
export const EXECUTION_SOURCES = ['api', 'webhook', 'mcp'] as const satisfies readonly ExecutionSource[];

/** Whether an execution is a live run of a deployed version (the draft's runs carry version 0). */
export function isLiveExecution(execution: { source: string; version: number }): boolean {
  return (EXECUTION_SOURCES as readonly string[]).includes(execution.source) && execution.version >= 1;
}

/** EXECUTION_SOURCES as an SQL list of literals, for statements that count live executions only. */
export const EXECUTION_SOURCES_SQL = EXECUTION_SOURCES.map((source) => `'${source}'`).join(', ');

export const PLAN_NAMES = ['genesis', 'developer', 'growth', 'enterprise'] as const satisfies readonly PlanName[];
export const API_KEY_MODES = ['live', 'test'] as const;

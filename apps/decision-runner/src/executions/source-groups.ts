import { EXECUTION_SOURCES_SQL } from '@ds/contracts';

/**
 * An execution's source group, as SQL over its own columns: the runs of callers (API, secret URL, agent) are `live`
 * or `test` by their key's mode, every other source is its own group. The indexes of the lists are built on this
 * very text, so a statement must use it unchanged (and unqualified) for PostgreSQL to match them.
 */
export const SOURCE_GROUP_SQL = `CASE WHEN source IN (${EXECUTION_SOURCES_SQL}) THEN CASE WHEN livemode THEN 'live' ELSE 'test' END ELSE source END`;

/**
 * The code an execution failed with, or the engine error an engine-error fallback answered 200 in place of; null for
 * every other run. A partial index holds the rows that have one, few in a healthy log, so the filter by it is cheap.
 */
export const ERROR_CODE_SQL = `coalesce(error->>'code', action_reason->>'code')`;

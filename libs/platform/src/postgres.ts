/** SQLSTATEs callers answer in their own words rather than as failures. */
const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

/** The SQLSTATE of a PostgreSQL error, whether from pg itself or wrapped by TypeORM (which copies it). */
function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A row with this key exists already: usually a race the caller answers as a conflict. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === UNIQUE_VIOLATION;
}

/** A row this one refers to does not exist. */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlState(error) === FOREIGN_KEY_VIOLATION;
}

/**
 * TypeORM answers an UPDATE or DELETE run through `query` on PostgreSQL with `[rows, affectedCount]` (the rows
 * being those of RETURNING), where a SELECT or INSERT answers the rows alone. Anything else is a statement these
 * helpers are not for, and throws rather than being read as rows or a count it is not.
 */
function updateResult(result: unknown): [unknown[], number] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result as [unknown[], number];
  throw new TypeError('expected the [rows, affectedCount] TypeORM answers for an UPDATE or DELETE');
}

/** The rows an UPDATE or DELETE … RETURNING answered through TypeORM's `query`. */
export function rowsReturned<T>(result: unknown): T[] {
  return updateResult(result)[0] as T[];
}

/** How many rows an UPDATE or DELETE run through TypeORM's `query` changed. */
export function rowsAffected(result: unknown): number {
  return updateResult(result)[1];
}

/** What `deleteInBatches` runs its statement through: TypeORM's `DataSource` or `EntityManager`. */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * Runs a DELETE that removes at most `batch` rows (its own `LIMIT`) until one removes fewer, and answers how many
 * went in all. Short statements keep locks brief and never near the statement timeout, however much is due.
 */
export async function deleteInBatches(db: Queryable, sql: string, parameters: unknown[], batch: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const count = rowsAffected(await db.query(sql, parameters));
    deleted += count;
    if (count < batch) return deleted;
  }
}

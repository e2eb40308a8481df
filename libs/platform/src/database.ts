import { DataSource, DataSourceOptions, EntitySchema, MixedList } from 'typeorm';
import { ConfigError, DEFAULT_SESSION_TIMEOUTS, redact, SessionTimeouts } from './config';
import { Logger } from './logger';
import { currentSpan } from './request-context';
import { inSpan, SpanKind } from './tracing';

export interface DatabaseDefinition {
  /** The service's own PostgreSQL schema; nobody else reads it. */
  schema: string;
  entities: MixedList<Function | string | EntitySchema>;
  migrations: MixedList<Function | string>;
}

/**
 * Migrations take their time (an index on a large table) and wait for each other's advisory lock while a
 * replica migrates, so they run on a connection of their own without the statement and lock limits.
 */
export const MIGRATION_SESSION_TIMEOUTS: SessionTimeouts = { statementMs: 0, lockMs: 0, idleInTransactionMs: 600_000 };

export function sessionOptions(schema: string, timeouts: SessionTimeouts): string {
  return [
    `-c search_path=${schema}`,
    `-c statement_timeout=${timeouts.statementMs}`,
    `-c lock_timeout=${timeouts.lockMs}`,
    `-c idle_in_transaction_session_timeout=${timeouts.idleInTransactionMs}`,
  ].join(' ');
}

export function dataSourceOptions(
  url: string,
  definition: DatabaseDefinition,
  poolSize: number,
  timeouts: SessionTimeouts = DEFAULT_SESSION_TIMEOUTS,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    schema: definition.schema,
    entities: definition.entities,
    migrations: definition.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // A condition whose value is missing must fail, never widen: TypeORM otherwise drops `undefined` and
    // `{ userId: undefined }` reads as "any user".
    invalidWhereValuesBehavior: { null: 'throw', undefined: 'throw' },
    // The service's schema comes first on every connection, so migrations and raw SQL name tables unqualified.
    extra: { max: poolSize, connectionTimeoutMillis: 5_000, application_name: definition.schema, options: sessionOptions(definition.schema, timeouts) },
  };
}

export async function openDatabase(url: string, definition: DatabaseDefinition, poolSize: number, timeouts?: SessionTimeouts): Promise<DataSource> {
  const dataSource = new DataSource(dataSourceOptions(url, definition, poolSize, timeouts));
  try {
    await dataSource.initialize();
    await dataSource.query('SELECT 1');
    return dataSource;
  } catch (error) {
    await dataSource.destroy().catch(() => undefined);
    const reason = (error as { code?: string; message?: string }).code ?? (error as Error).message;
    throw new ConfigError(`cannot reach PostgreSQL at ${redact(url)} (${reason}); set DATABASE_URL to a running PostgreSQL`);
  }
}

/**
 * Applies pending migrations of one schema. A session-level advisory lock keyed by the schema makes
 * concurrent replicas (or init containers) take turns instead of racing on the same DDL.
 */
export async function runMigrations(dataSource: DataSource, schema: string, logger: Logger): Promise<void> {
  await migrateWith(dataSource, schema, logger);
}

/** Applies pending migrations on a short-lived pool of two connections (the lock and the DDL) with the migration limits. */
export async function migrateDatabase(url: string, definition: DatabaseDefinition, logger: Logger): Promise<void> {
  const dataSource = await openDatabase(url, definition, 2, MIGRATION_SESSION_TIMEOUTS);
  try {
    await migrateWith(dataSource, definition.schema, logger);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * During a rolling update a migration's DDL runs beside the previous version's writes, which may take the same
 * tables' locks in the other order (a replay's item, then its execution): PostgreSQL then aborts one of the two,
 * and when that is the migration, its transaction is rolled back whole, so applying what is left again is safe.
 */
const MIGRATION_ATTEMPTS = 5;

function isDeadlock(error: unknown): boolean {
  const failed = error as { code?: string; driverError?: { code?: string } };
  return failed?.driverError?.code === '40P01' || failed?.code === '40P01';
}

async function migrateWith(dataSource: DataSource, schema: string, logger: Logger): Promise<void> {
  const lockRunner = dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    await lockRunner.query('SELECT pg_advisory_lock(hashtext($1))', [`decision-service:migrate:${schema}`]);
    await lockRunner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    for (let attempt = 1; ; attempt++) {
      try {
        const applied = await dataSource.runMigrations({ transaction: 'each' });
        if (applied.length > 0) logger.info({ schema, migrations: applied.map((m) => m.name) }, 'applied migrations');
        break;
      } catch (error) {
        if (attempt >= MIGRATION_ATTEMPTS || !isDeadlock(error)) throw error;
        logger.warn({ schema, attempt, err: error }, 'a migration deadlocked with the running version; applying the rest again');
        await new Promise((resolve) => setTimeout(resolve, attempt * 250));
      }
    }
  } finally {
    await lockRunner.query('SELECT pg_advisory_unlock(hashtext($1))', [`decision-service:migrate:${schema}`]).catch(() => undefined);
    await lockRunner.release();
  }
}

let queriesTraced = false;

/**
 * With tracing on, every query made while handling a request gets a span under that request's span.
 * TypeORM has no hook around its queries, so the PostgreSQL query runner's `query` is wrapped, once,
 * and only when tracing is on; queries outside a request (sweeps, migrations) are left alone.
 */
export function traceDatabaseQueries(): void {
  if (queriesTraced) return;
  queriesTraced = true;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- TypeORM's runner is not exported from its index
  const { PostgresQueryRunner } = require('typeorm/driver/postgres/PostgresQueryRunner') as {
    PostgresQueryRunner: { prototype: { query(...args: unknown[]): Promise<unknown> } };
  };
  const query = PostgresQueryRunner.prototype.query;
  PostgresQueryRunner.prototype.query = function tracedQuery(this: unknown, ...args: unknown[]): Promise<unknown> {
    const parent = currentSpan();
    if (parent === undefined) return query.apply(this, args);
    const operation = /^\s*([A-Za-z]+)/.exec(String(args[0]))?.[1]?.toUpperCase() ?? 'QUERY';
    return inSpan(`db ${operation}`, SpanKind.CLIENT, { 'db.system.name': 'postgresql', 'db.operation.name': operation }, parent, () =>
      query.apply(this, args),
    );
  };
}

import { DataSource, DataSourceOptions, EntitySchema, MixedList } from 'typeorm';
import { ConfigError, redact } from './config';
import { Logger } from './logger';

export interface DatabaseDefinition {
  /** The service's own PostgreSQL schema; nobody else reads it. */
  schema: string;
  entities: MixedList<Function | string | EntitySchema>;
  migrations: MixedList<Function | string>;
}

export function dataSourceOptions(url: string, definition: DatabaseDefinition, poolSize: number): DataSourceOptions {
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
    extra: { max: poolSize, connectionTimeoutMillis: 5_000, application_name: definition.schema, options: `-c search_path=${definition.schema}` },
  };
}

export async function openDatabase(url: string, definition: DatabaseDefinition, poolSize: number): Promise<DataSource> {
  const dataSource = new DataSource(dataSourceOptions(url, definition, poolSize));
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
  const lockRunner = dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    await lockRunner.query('SELECT pg_advisory_lock(hashtext($1))', [`decision-service:migrate:${schema}`]);
    await lockRunner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    if (applied.length > 0) logger.info({ schema, migrations: applied.map((m) => m.name) }, 'applied migrations');
  } finally {
    await lockRunner.query('SELECT pg_advisory_unlock(hashtext($1))', [`decision-service:migrate:${schema}`]).catch(() => undefined);
    await lockRunner.release();
  }
}

import { afterAll, beforeAll } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createLogger, DatabaseDefinition, dataSourceOptions, runMigrations } from '@ds/platform';
import { dropDatabase, freshDatabase } from '../e2e/support/cluster';

export interface MigratedDatabase {
  url: string;
  dataSource: DataSource;
  /** Closes the data source and drops the database. */
  drop(): Promise<void>;
}

/**
 * A database of its own for one spec file (`<purpose>_<random>_test`, refused otherwise), with one service's
 * schema and migrations, opened through the same options the service uses.
 */
export async function migratedDatabase(purpose: string, definition: DatabaseDefinition, poolSize: number): Promise<MigratedDatabase> {
  const url = await freshDatabase(purpose);
  const dataSource = new DataSource(dataSourceOptions(url, definition, poolSize));
  await dataSource.initialize();
  await runMigrations(dataSource, definition.schema, createLogger(definition.schema, 'silent'));
  return {
    url,
    dataSource,
    async drop() {
      if (dataSource.isInitialized) await dataSource.destroy();
      await dropDatabase(url);
    },
  };
}

/**
 * `migratedDatabase` for a whole spec file: made before its first test and dropped after its last. Its data source
 * and address are there once the tests start.
 */
export function useMigratedDatabase(purpose: string, definition: DatabaseDefinition, poolSize: number): Omit<MigratedDatabase, 'drop'> {
  let database: MigratedDatabase | undefined;
  beforeAll(async () => {
    database = await migratedDatabase(purpose, definition, poolSize);
  });
  afterAll(async () => {
    await database?.drop();
  });
  const opened = (): MigratedDatabase => {
    if (!database) throw new Error(`the ${purpose} database is opened in beforeAll; read it from a test or a hook`);
    return database;
  };
  return {
    get url() {
      return opened().url;
    },
    get dataSource() {
      return opened().dataSource;
    },
  };
}

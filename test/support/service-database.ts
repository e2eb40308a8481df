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

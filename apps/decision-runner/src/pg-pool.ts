import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * The pg pool under a DataSource, for statements on the run path: they skip TypeORM's query runner, query
 * builder and hydration, and run as named prepared statements on the same connections and session settings.
 */
export function pgPool(db: DataSource): Pool {
  return (db.driver as PostgresDriver).master as Pool;
}

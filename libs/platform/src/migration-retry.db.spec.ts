import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { migrateDatabase } from './database';
import { createLogger } from './logger';

/** Real PostgreSQL (the e2e server), in a schema of each test's own. */
const URL_ = process.env.E2E_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin<T>(use: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: URL_ });
  await db.connect();
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}

/** A migration whose first `failures` attempts end in the PostgreSQL error `code`, raised by the server itself. */
function flakyMigration(code: string, failures: number) {
  const calls = { up: 0 };
  class Flaky1700000000000 implements MigrationInterface {
    name = 'Flaky1700000000000';
    async up(q: QueryRunner): Promise<void> {
      calls.up++;
      await q.query('CREATE TABLE flaky (id int)');
      if (calls.up <= failures) await q.query(`DO $$ BEGIN RAISE EXCEPTION 'lost the lock race' USING ERRCODE = '${code}'; END $$`);
    }
    async down(q: QueryRunner): Promise<void> {
      await q.query('DROP TABLE flaky');
    }
  }
  return { migration: Flaky1700000000000, calls };
}

function capturingLogger() {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  return { logger: createLogger('decision-runner', 'info', sink), lines };
}

describe('migrations that lose a deadlock to the running version', () => {
  const schemas: string[] = [];
  afterAll(() => admin(async (db) => void (await Promise.all(schemas.map((schema) => db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))))));
  const schema = () => {
    const name = `migration_retry_${randomBytes(4).toString('hex')}`;
    schemas.push(name);
    return name;
  };

  it('are applied again, from a rolled-back start, until they go through', async () => {
    const name = schema();
    const { migration, calls } = flakyMigration('40P01', 2);
    const { logger, lines } = capturingLogger();
    await migrateDatabase(URL_, { schema: name, entities: [], migrations: [migration] }, logger);
    expect(calls.up).toBe(3);
    const applied = await admin((db) => db.query(`SELECT name FROM ${name}.migrations`));
    expect(applied.rows).toEqual([{ name: 'Flaky1700000000000' }]);
    expect(lines.filter((line) => line.includes('deadlocked'))).toHaveLength(2);
  });

  it('fail at once on any other error', async () => {
    const name = schema();
    const { migration, calls } = flakyMigration('23505', 1);
    await expect(migrateDatabase(URL_, { schema: name, entities: [], migrations: [migration] }, capturingLogger().logger)).rejects.toMatchObject({
      driverError: { code: '23505' },
    });
    expect(calls.up).toBe(1);
  });
});

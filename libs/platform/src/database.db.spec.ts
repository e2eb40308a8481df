import { Writable } from 'node:stream';
import { DataSource } from 'typeorm';
import { DEFAULT_SESSION_TIMEOUTS, SessionTimeouts } from './config';
import { dataSourceOptions, MIGRATION_SESSION_TIMEOUTS } from './database';
import { createLogger } from './logger';

/** Real PostgreSQL sessions (the e2e server), no tables: only the session settings and real driver errors. */
const URL_ = process.env.E2E_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const definition = { schema: 'public', entities: [], migrations: [] };

async function open(timeouts?: SessionTimeouts): Promise<DataSource> {
  const dataSource = new DataSource(dataSourceOptions(URL_, definition, 2, timeouts));
  return dataSource.initialize();
}

async function setting(db: DataSource, name: string): Promise<string> {
  const [row] = (await db.query(`SELECT current_setting($1) AS value`, [name])) as Array<{ value: string }>;
  // A SELECT without FROM returns exactly one row.
  return row!.value;
}

describe('database sessions', () => {
  const opened: DataSource[] = [];
  afterAll(async () => Promise.all(opened.map((db) => db.destroy())));

  it('carry the statement, lock and idle-in-transaction limits by default', async () => {
    const db = await open();
    opened.push(db);
    expect(DEFAULT_SESSION_TIMEOUTS).toEqual({ statementMs: 30_000, lockMs: 10_000, idleInTransactionMs: 60_000 });
    expect(await setting(db, 'statement_timeout')).toBe('30s');
    expect(await setting(db, 'lock_timeout')).toBe('10s');
    expect(await setting(db, 'idle_in_transaction_session_timeout')).toBe('1min');
  });

  it('cancel a statement that outlives its limit, and migrations run without one', async () => {
    const db = await open({ statementMs: 200, lockMs: 200, idleInTransactionMs: 1_000 });
    const migrations = await open(MIGRATION_SESSION_TIMEOUTS);
    opened.push(db, migrations);
    await expect(db.query('SELECT pg_sleep(2)')).rejects.toMatchObject({ driverError: { code: '57014' } });
    expect(await setting(migrations, 'statement_timeout')).toBe('0');
    expect(await setting(migrations, 'lock_timeout')).toBe('0');
  });

  it('fail a lock wait after the lock limit', async () => {
    const holder = await open();
    const waiter = await open({ statementMs: 5_000, lockMs: 200, idleInTransactionMs: 5_000 });
    opened.push(holder, waiter);
    const lockKey = Math.floor(Math.random() * 1e9);
    const runner = holder.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [lockKey]);
      await expect(waiter.query('SELECT pg_advisory_lock($1)', [lockKey])).rejects.toMatchObject({ driverError: { code: '55P03' } });
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [lockKey]);
      await runner.release();
    }
  });

  it('log a real failed statement without its parameters or the values PostgreSQL quotes', async () => {
    const db = await open();
    opened.push(db);
    const lines: string[] = [];
    const logger = createLogger('test', 'info', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
    const failure = await db.query('SELECT $1::int', ['svc_live_parameter_value']).catch((error: unknown) => error);
    expect((failure as { parameters?: unknown[] }).parameters).toEqual(['svc_live_parameter_value']);
    logger.error({ err: failure }, 'statement failed');
    const session = db.createQueryRunner();
    await session.connect();
    try {
      await session.query('CREATE TEMP TABLE accounts (email text UNIQUE)');
      await session.query('INSERT INTO accounts VALUES ($1)', ['victim@example.com']);
      const duplicate = await session.query('INSERT INTO accounts VALUES ($1)', ['victim@example.com']).catch((error: unknown) => error);
      expect((duplicate as { driverError?: { detail?: string } }).driverError?.detail).toContain('victim@example.com');
      logger.error({ err: duplicate }, 'statement failed');
    } finally {
      await session.release();
    }
    const output = lines.join('');
    expect(output).toContain('22P02');
    expect(output).toContain('accounts_email_key');
    expect(output).not.toContain('svc_live_parameter_value');
    expect(output).not.toContain('victim@example.com');
  });
});

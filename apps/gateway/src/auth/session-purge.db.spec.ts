import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createLogger, dataSourceOptions, runMigrations } from '@ds/platform';
import { GatewayConfig } from '../config';
import { gateway } from '../main';
import { MAX_OWNED_WORKSPACES, WorkspacesService } from '../workspaces/workspaces.service';
import { SessionPurge } from './session-purge';

/** Against a real PostgreSQL with the gateway's own migrations. */
const ADMIN_URL = process.env.E2E_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE = `gateway_retention_${randomBytes(4).toString('hex')}_test`;
const logger = createLogger('gateway', 'silent');
const NOW = new Date('2030-06-01T12:00:00Z');
const HOUR = 3_600_000;

let db: DataSource;

async function admin(sql: string): Promise<void> {
  if (!/^[a-z0-9_]+_test$/.test(DATABASE)) throw new Error(`refusing database ${DATABASE}: its name must end in _test`);
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  await admin(`CREATE DATABASE ${DATABASE}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${DATABASE}`;
  db = new DataSource(dataSourceOptions(url.toString(), gateway.database, 20));
  await db.initialize();
  await runMigrations(db, gateway.database.schema, logger);
});

afterAll(async () => {
  await db?.destroy();
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
});

async function user(id: string): Promise<void> {
  await db.query(`INSERT INTO users (id, email, name, password_hash, failed_sign_ins) VALUES ($1, $2, 'U', 'x', 0)`, [id, `${id}@example.com`]);
}

describe('expired sessions', () => {
  it('are deleted by the purge, and sessions still valid stay', async () => {
    await user('usr_sessions');
    const expiries = [-48 * HOUR, -1, 1, 24 * HOUR];
    for (const [i, offset] of expiries.entries()) {
      await db.query('INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [`hash_${i}`, 'usr_sessions', new Date(NOW.getTime() + offset)]);
    }
    const purge = new SessionPurge(db, { sessionPurgeIntervalMs: 0 } as GatewayConfig, logger);
    expect(await purge.purge(NOW)).toBe(2);
    const left = (await db.query('SELECT token_hash FROM sessions ORDER BY token_hash')) as Array<{ token_hash: string }>;
    expect(left.map((row) => row.token_hash)).toEqual(['hash_2', 'hash_3']);
    expect(await purge.purge(NOW)).toBe(0);
  });
});

describe('owned workspaces', () => {
  it(`stop at ${MAX_OWNED_WORKSPACES} per user even when the creations race`, async () => {
    await user('usr_owner');
    const workspaces = new WorkspacesService(db);
    const attempts = await Promise.allSettled(Array.from({ length: MAX_OWNED_WORKSPACES + 5 }, (_, i) => workspaces.create('usr_owner', `ws ${i}`)));
    expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).toHaveLength(MAX_OWNED_WORKSPACES);
    const refused = attempts.filter((attempt): attempt is PromiseRejectedResult => attempt.status === 'rejected');
    expect(refused).toHaveLength(5);
    for (const attempt of refused) expect(attempt.reason).toMatchObject({ code: 'CONFLICT' });
    const [{ owned }] = (await db.query(`SELECT count(*)::int AS owned FROM memberships WHERE user_id = 'usr_owner' AND role = 'owner'`)) as Array<{ owned: number }>;
    expect(owned).toBe(MAX_OWNED_WORKSPACES);
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { createLogger, dataSourceOptions, runMigrations } from '@ds/platform';
import { MembershipEntity, UserEntity, WorkspaceEntity } from '../entities';
import { gateway } from '../main';
import { WorkspacesService } from './workspaces.service';

/** A query without its owner must fail, never widen to "any owner": checked on a real PostgreSQL. */
const ADMIN_URL = process.env.E2E_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE = `gateway_${randomBytes(4).toString('hex')}_test`;

let db: DataSource;
const workspaceId = randomUUID();

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
  db = new DataSource(dataSourceOptions(url.toString(), gateway.database, 2));
  await db.initialize();
  await runMigrations(db, gateway.database.schema, createLogger('gateway', 'silent'));
  await db.getRepository(UserEntity).insert({ id: 'usr_owner', email: 'owner@example.com', name: 'Owner', passwordHash: 'x', failedSignIns: 0, lockedUntil: null });
  await db.getRepository(WorkspaceEntity).insert({ id: workspaceId, name: 'Acme' });
  await db.getRepository(MembershipEntity).insert({ workspaceId, userId: 'usr_owner', role: 'owner' });
});

afterAll(async () => {
  await db?.destroy();
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
});

describe('queries without their owner', () => {
  it('refuses undefined and null in find conditions instead of matching any row', async () => {
    const memberships = db.getRepository(MembershipEntity);
    await expect(memberships.findOneBy({ workspaceId, userId: undefined })).rejects.toThrow();
    await expect(memberships.findOneBy({ workspaceId, userId: null as unknown as string })).rejects.toThrow();
    await expect(memberships.findOneBy({ workspaceId, userId: 'usr_owner' })).resolves.toMatchObject({ role: 'owner' });
  });

  it('never grants a role to a caller without a user id', async () => {
    const workspaces = new WorkspacesService(db);
    const refused = await workspaces.requireRole(workspaceId, undefined as unknown as string, 'viewer').then(
      () => 'granted',
      (error: unknown) => (error instanceof ServiceError ? error.code : 'threw'),
    );
    expect(refused).not.toBe('granted');
    await expect(workspaces.requireRole(workspaceId, 'usr_owner', 'admin')).resolves.toBe('owner');
    await expect(workspaces.requireRole(workspaceId, 'usr_other', 'viewer')).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});

import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { MembershipEntity, UserEntity, WorkspaceEntity } from '../entities';
import { gateway } from '../main';
import { WorkspacesService } from './workspaces.service';
import { MigratedDatabase, migratedDatabase } from '../../../../test/support/service-database';

/** A query without its owner must fail, never widen to "any owner": checked on a real PostgreSQL. */

let database: MigratedDatabase;
let db: DataSource;
const workspaceId = randomUUID();

beforeAll(async () => {
  database = await migratedDatabase('gateway', gateway.database, 2);
  db = database.dataSource;
  await db
    .getRepository(UserEntity)
    .insert({ id: 'usr_owner', email: 'owner@example.com', name: 'Owner', passwordHash: 'x', failedSignIns: 0, lockedUntil: null });
  await db.getRepository(WorkspaceEntity).insert({ id: workspaceId, name: 'Acme' });
  await db.getRepository(MembershipEntity).insert({ workspaceId, userId: 'usr_owner', role: 'owner' });
});

afterAll(async () => {
  await database?.drop();
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

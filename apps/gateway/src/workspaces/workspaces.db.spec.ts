import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { MembershipEntity, UserEntity, WorkspaceEntity } from '../entities';
import { ActingUserPipe } from '../http/request-lifecycle';
import { gateway } from '../main';
import { WorkspacesService } from './workspaces.service';
import { useMigratedDatabase } from '../../../../test/support/service-database';

/** A query without its owner must fail, never widen to "any owner": checked on a real PostgreSQL. */

const database = useMigratedDatabase('gateway', gateway.database, 2);
let db: DataSource;
const workspaceId = randomUUID();

beforeAll(async () => {
  db = database.dataSource;
  await db
    .getRepository(UserEntity)
    .insert({ id: 'usr_owner', email: 'owner@example.com', name: 'Owner', passwordHash: 'x', failedSignIns: 0, lockedUntil: null });
  await db.getRepository(WorkspaceEntity).insert({ id: workspaceId, name: 'Acme' });
  await db.getRepository(MembershipEntity).insert({ workspaceId, userId: 'usr_owner', role: 'owner' });
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

describe('the acting user a deploy, a shadow or a replay records', () => {
  it('is the signed-in user with the address on file, the embedded editor’s user, and nobody for other callers', async () => {
    const acting = new ActingUserPipe(new WorkspacesService(db));
    await expect(acting.transform({ kind: 'user', userId: 'usr_owner', membership: null })).resolves.toEqual({
      user_id: 'usr_owner',
      email: 'owner@example.com',
    });
    await expect(acting.transform({ kind: 'user', userId: 'usr_gone', membership: null })).resolves.toEqual({ user_id: 'usr_gone', email: null });
    const user = { id: 'ext-7', name: 'Seven', email: 'seven@partner.example' };
    const session = { id: 'emb_1', workspaceId, user, permissions: [], origins: [], startPath: '/', locale: null, theme: null, expiresAt: '' };
    await expect(acting.transform({ kind: 'embed', session })).resolves.toEqual({ user_id: 'ext-7', email: 'seven@partner.example' });
    await expect(acting.transform({ kind: 'operator' })).resolves.toBeNull();
  });
});

describe('ownership', () => {
  async function person(id: string): Promise<void> {
    await db.getRepository(UserEntity).insert({ id, email: `${id}@example.com`, name: id, passwordHash: 'x', failedSignIns: 0, lockedUntil: null });
  }

  async function space(owner: string, members: Record<string, 'admin' | 'member' | 'viewer'> = {}): Promise<string> {
    const id = randomUUID();
    await db.getRepository(WorkspaceEntity).insert({ id, name: 'Handover' });
    await db.getRepository(MembershipEntity).insert({ workspaceId: id, userId: owner, role: 'owner' });
    for (const [userId, role] of Object.entries(members)) await db.getRepository(MembershipEntity).insert({ workspaceId: id, userId, role });
    return id;
  }

  const roles = async (ws: string) =>
    Object.fromEntries((await db.getRepository(MembershipEntity).findBy({ workspaceId: ws })).map((row) => [row.userId, row.role]));

  it('passes to a member, and the previous owner stays as an admin', async () => {
    await Promise.all(['usr_a1', 'usr_b1'].map(person));
    const ws = await space('usr_a1', { usr_b1: 'viewer' });
    const workspaces = new WorkspacesService(db);
    expect(await workspaces.transferOwnership(ws, 'usr_a1', 'usr_b1')).toEqual({ owner: 'usr_b1', previous_owner: 'usr_a1' });
    expect(await roles(ws)).toEqual({ usr_a1: 'admin', usr_b1: 'owner' });
  });

  it('refuses someone who is not a member, oneself, and a new owner at the ceiling', async () => {
    await Promise.all(['usr_a2', 'usr_b2', 'usr_c2'].map(person));
    const ws = await space('usr_a2', { usr_c2: 'member' });
    const workspaces = new WorkspacesService(db);
    await expect(workspaces.transferOwnership(ws, 'usr_a2', 'usr_b2')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(workspaces.transferOwnership(ws, 'usr_a2', 'usr_a2')).rejects.toMatchObject({ code: 'CONFLICT' });
    for (let i = 0; i < 10; i++) await space('usr_c2');
    await expect(workspaces.transferOwnership(ws, 'usr_a2', 'usr_c2')).rejects.toMatchObject({ code: 'CONFLICT', details: { limit: 10 } });
    expect(await roles(ws)).toEqual({ usr_a2: 'owner', usr_c2: 'member' });
  });

  it('leaves exactly one owner when two transfers race', async () => {
    await Promise.all(['usr_a3', 'usr_b3', 'usr_c3'].map(person));
    const ws = await space('usr_a3', { usr_b3: 'admin', usr_c3: 'admin' });
    const workspaces = new WorkspacesService(db);
    const outcomes = await Promise.allSettled([workspaces.transferOwnership(ws, 'usr_a3', 'usr_b3'), workspaces.transferOwnership(ws, 'usr_a3', 'usr_c3')]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(Object.values(await roles(ws)).filter((role) => role === 'owner')).toHaveLength(1);
  });

  it('lets a member leave, and not the owner', async () => {
    await Promise.all(['usr_a4', 'usr_b4'].map(person));
    const ws = await space('usr_a4', { usr_b4: 'viewer' });
    const workspaces = new WorkspacesService(db);
    await expect(workspaces.leave(ws, 'usr_a4')).rejects.toMatchObject({ code: 'CONFLICT' });
    await workspaces.leave(ws, 'usr_b4');
    expect(await roles(ws)).toEqual({ usr_a4: 'owner' });
    await expect(workspaces.leave(ws, 'usr_b4')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

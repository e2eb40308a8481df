import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { rowsReturned } from '@ds/platform';
import { MembershipEntity, Role, UserEntity, WorkspaceEntity } from '../entities';
import { canonicalEmail } from '../auth/email-address';
import { conflict, requireVerifiedAddress } from '../auth/verified-address';
import { Mailer, MAILER } from '../mail/mailer';
import { roleReaches, roleRefusal } from './roles';

/** The spec's ceiling on workspaces one user owns. */
export const MAX_OWNED_WORKSPACES = 10;
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

@Injectable()
export class WorkspacesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Optional() @Inject(MAILER) private readonly mailer?: Mailer,
  ) {}

  async create(userId: string, name: string): Promise<{ id: string; name: string }> {
    const id = randomUUID();
    await this.db.transaction(async (tx) => {
      // Serializes one user's creations so that concurrent requests cannot both pass the count.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`workspaces:owner:${userId}`]);
      const [counted] = (await tx.query(`SELECT count(*)::int AS owned FROM memberships WHERE user_id = $1 AND role = 'owner'`, [userId])) as Array<{
        owned: number;
      }>;
      // count(*) without GROUP BY answers exactly one row.
      if (counted!.owned >= MAX_OWNED_WORKSPACES) {
        throw new ServiceError('CONFLICT', `A user can own ${MAX_OWNED_WORKSPACES} workspaces; delete one or transfer its ownership first.`, {
          limit: MAX_OWNED_WORKSPACES,
        });
      }
      await tx.getRepository(WorkspaceEntity).insert({ id, name });
      await tx.getRepository(MembershipEntity).insert({ workspaceId: id, userId, role: 'owner' });
    });
    return { id, name };
  }

  /**
   * The caller's role must reach `minimum`. A workspace the caller does not belong to (or that does not
   * exist) is refused the same way, so workspace ids cannot be probed.
   */
  async requireRole(workspaceId: string, userId: string, minimum: Role): Promise<Role> {
    const membership = UUID_PATTERN.test(workspaceId) ? await this.db.getRepository(MembershipEntity).findOneBy({ workspaceId, userId }) : null;
    if (!membership) throw new ServiceError('FORBIDDEN', 'You are not a member of this workspace.', { reason: 'workspace_access' });
    if (!roleReaches(membership.role, minimum)) throw roleRefusal(membership.role, minimum);
    return membership.role;
  }

  /**
   * Adds an existing user with a role below Owner. It stands in for invitations: the e-mail must
   * already have an account, and a current member cannot be added again.
   */
  async addMember(workspaceId: string, input: { email: string; role: Exclude<Role, 'owner'> }): Promise<{ user_id: string; email: string; role: Role }> {
    const user = await this.db.getRepository(UserEntity).findOneBy({ email: canonicalEmail(input.email) });
    // The reason lets the application offer an invitation instead, which works for an address without an account.
    if (!user) throw new ServiceError('NOT_FOUND', 'No account uses this e-mail; send an invitation instead.', { reason: 'no_account' });
    await requireVerifiedAddress(
      this.db.manager,
      this.mailer,
      user.id,
      conflict,
      'This person has not verified their e-mail address yet; they can do so in the application, or you can send an invitation.',
    );
    const { role } = input;
    const inserted: unknown[] = await this.db.query(
      'INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING user_id',
      [workspaceId, user.id, role],
    );
    if (inserted.length === 0) throw new ServiceError('CONFLICT', 'This person is already a member of the workspace.');
    return { user_id: user.id, email: user.email, role };
  }

  /** Changes a member's role below Owner; the Owner's role changes only by transferring ownership. */
  async changeRole(workspaceId: string, userId: string, role: Exclude<Role, 'owner'>): Promise<{ user_id: string; role: Role }> {
    const current = await this.db.getRepository(MembershipEntity).findOneBy({ workspaceId, userId });
    if (!current) throw new ServiceError('NOT_FOUND', 'This person is not a member of the workspace.');
    if (current.role === 'owner') throw new ServiceError('CONFLICT', "The owner's role cannot be changed.");
    await this.db.getRepository(MembershipEntity).update({ workspaceId, userId }, { role });
    return { user_id: userId, role };
  }

  /** Removes a member; the Owner cannot be removed. */
  async removeMember(workspaceId: string, userId: string): Promise<void> {
    const current = await this.db.getRepository(MembershipEntity).findOneBy({ workspaceId, userId });
    if (!current) throw new ServiceError('NOT_FOUND', 'This person is not a member of the workspace.');
    if (current.role === 'owner') throw new ServiceError('CONFLICT', 'The owner cannot be removed from the workspace.');
    await this.db.getRepository(MembershipEntity).delete({ workspaceId, userId });
  }

  /**
   * Hands the workspace to another member, who must be able to own one more; the previous Owner stays as an
   * Admin. Serialised with the new owner's workspace creations, so the ceiling on owned workspaces holds.
   */
  async transferOwnership(workspaceId: string, ownerId: string, newOwnerId: string): Promise<{ owner: string; previous_owner: string }> {
    if (newOwnerId === ownerId) throw new ServiceError('CONFLICT', 'You already own this workspace.');
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`workspaces:owner:${newOwnerId}`]);
      const [target] = (await tx.query('SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2 FOR UPDATE', [
        workspaceId,
        newOwnerId,
      ])) as Array<{
        role: Role;
      }>;
      if (!target) throw new ServiceError('NOT_FOUND', 'This person is not a member of the workspace.');
      await requireVerifiedAddress(tx, this.mailer, newOwnerId, conflict, 'The new owner has not verified their e-mail address yet.');
      const [counted] = (await tx.query(`SELECT count(*)::int AS owned FROM memberships WHERE user_id = $1 AND role = 'owner'`, [newOwnerId])) as Array<{
        owned: number;
      }>;
      if (counted!.owned >= MAX_OWNED_WORKSPACES) {
        throw new ServiceError('CONFLICT', `The new owner already owns ${MAX_OWNED_WORKSPACES} workspaces.`, { limit: MAX_OWNED_WORKSPACES });
      }
      // Only the current Owner's own row is demoted: a concurrent transfer that got here first leaves nothing to demote.
      const demoted = rowsReturned(
        await tx.query(`UPDATE memberships SET role = 'admin' WHERE workspace_id = $1 AND user_id = $2 AND role = 'owner' RETURNING user_id`, [
          workspaceId,
          ownerId,
        ]),
      );
      if (demoted.length === 0) throw new ServiceError('CONFLICT', 'The workspace changed owner meanwhile.');
      await tx.query(`UPDATE memberships SET role = 'owner' WHERE workspace_id = $1 AND user_id = $2`, [workspaceId, newOwnerId]);
    });
    return { owner: newOwnerId, previous_owner: ownerId };
  }

  /** Leaves a workspace; the Owner must hand it over first (409). */
  async leave(workspaceId: string, userId: string): Promise<void> {
    const current = await this.db.getRepository(MembershipEntity).findOneBy({ workspaceId, userId });
    if (!current) throw new ServiceError('NOT_FOUND', 'You are not a member of this workspace.');
    if (current.role === 'owner') throw new ServiceError('CONFLICT', 'The owner cannot leave the workspace; transfer its ownership first.');
    await this.db.getRepository(MembershipEntity).delete({ workspaceId, userId, role: current.role });
  }

  async members(workspaceId: string): Promise<{ data: Array<{ user_id: string; email: string; name: string; role: Role }> }> {
    const rows: Array<{ user_id: string; email: string; name: string; role: Role }> = await this.db.query(
      'SELECT m.user_id, u.email, u.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 ORDER BY u.email',
      [workspaceId],
    );
    return { data: rows };
  }

  async emailOf(userId: string): Promise<string | null> {
    const user = await this.db.getRepository(UserEntity).findOne({ where: { id: userId }, select: { email: true } });
    return user?.email ?? null;
  }

  /** The workspaces the user belongs to, with the user's role in each, for the application's switcher. */
  async ofUser(userId: string): Promise<{ data: Array<{ id: string; name: string; role: Role }> }> {
    const rows: Array<{ id: string; name: string; role: Role }> = await this.db.query(
      'SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = $1 ORDER BY w.name, w.id',
      [userId],
    );
    return { data: rows };
  }

  async describe(workspaceId: string): Promise<{ id: string; name: string }> {
    const workspace = await this.db.getRepository(WorkspaceEntity).findOneByOrFail({ id: workspaceId });
    return { id: workspace.id, name: workspace.name };
  }

  /**
   * The workspace row of a partner's sub-workspace (its link lives in the partner service): written or renamed
   * from every answer that names it, so a row missing after a failure is written by the next call.
   */
  async ensureSubWorkspace(workspace: { id: string; name: string }): Promise<void> {
    await this.db.query('INSERT INTO workspaces (id, name) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name', [
      workspace.id,
      workspace.name,
    ]);
  }

  /**
   * Everything the gateway holds of a deleted workspace: keys (answered with their hashes, which every replica
   * then drops from its cache), idempotency records, memberships and the row. Deleting twice deletes nothing more.
   */
  async purge(workspaceId: string): Promise<string[]> {
    if (!UUID_PATTERN.test(workspaceId)) return [];
    return this.db.transaction(async (tx) => {
      const keys = rowsReturned<{ key_hash: string }>(await tx.query('DELETE FROM api_keys WHERE workspace_id = $1 RETURNING key_hash', [workspaceId]));
      await tx.query('DELETE FROM idempotency_keys WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM memberships WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM workspaces WHERE id = $1', [workspaceId]);
      return keys.map((key) => key.key_hash);
    });
  }

  /** Where e-mail goes out, a workspace goes onto a paid plan only with an Owner whose address is proven (409). */
  async requireVerifiedOwner(workspaceId: string): Promise<void> {
    const [owner] = (await this.db.query(`SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'`, [workspaceId])) as Array<{
      user_id: string;
    }>;
    if (!owner) return;
    await requireVerifiedAddress(
      this.db.manager,
      this.mailer,
      owner.user_id,
      conflict,
      "The workspace's Owner has not verified their e-mail address; a paid plan needs an Owner who has.",
    );
  }

  async exists(workspaceId: string): Promise<boolean> {
    return UUID_PATTERN.test(workspaceId) && (await this.db.getRepository(WorkspaceEntity).existsBy({ id: workspaceId }));
  }
}

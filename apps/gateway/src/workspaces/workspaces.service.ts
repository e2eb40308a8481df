import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { MembershipEntity, Role, WorkspaceEntity } from '../entities';

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

@Injectable()
export class WorkspacesService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(userId: string, name: unknown): Promise<{ id: string; name: string }> {
    if (typeof name !== 'string' || name.trim().length < 1 || name.length > 80) {
      throw new ServiceError('INVALID_REQUEST', 'The workspace name must be 1 to 80 characters.', [{ path: 'name', message: 'must be 1 to 80 characters' }]);
    }
    const id = randomUUID();
    await this.db.transaction(async (tx) => {
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
    if (RANK[membership.role] < RANK[minimum]) throw new ServiceError('FORBIDDEN', `This needs the ${minimum} role or higher.`);
    return membership.role;
  }

  async exists(workspaceId: string): Promise<boolean> {
    return UUID_PATTERN.test(workspaceId) && (await this.db.getRepository(WorkspaceEntity).existsBy({ id: workspaceId }));
  }
}

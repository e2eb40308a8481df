import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DecisionDetailsReply, GetDecisionRequest, ServiceError } from '@ds/contracts';
import { DecisionEntity, DecisionVersionEntity } from '../entities';

/** One decision as the application's editor and deploy screen read it. */
@Injectable()
export class DecisionDetails {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async get(request: GetDecisionRequest): Promise<DecisionDetailsReply> {
    const where = request.decision.startsWith('dec_')
      ? { id: request.decision, workspaceId: request.workspaceId }
      : { slug: request.decision, workspaceId: request.workspaceId };
    const decision = await this.db.getRepository(DecisionEntity).findOneBy(where);
    if (!decision) throw new ServiceError('NOT_FOUND', 'No such decision in this workspace.');
    const versions = await this.db.getRepository(DecisionVersionEntity).find({
      where: { decisionId: decision.id },
      select: { version: true },
      order: { version: 'DESC' },
    });
    const active =
      decision.activeVersion === null
        ? null
        : await this.db.getRepository(DecisionVersionEntity).findOneBy({ decisionId: decision.id, version: decision.activeVersion });
    return {
      id: decision.id,
      slug: decision.slug,
      name: decision.name,
      description: decision.description,
      status: decision.activeVersion === null ? 'draft' : 'deployed',
      revision: decision.revision,
      active_version: decision.activeVersion,
      endpoint_enabled: decision.endpointEnabled,
      draft: decision.draftSchema,
      active_schema: active?.schema ?? null,
      versions: versions.map((row) => row.version),
      updated_at: decision.updatedAt.toISOString(),
    };
  }
}

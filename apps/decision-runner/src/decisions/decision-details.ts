import { Injectable } from '@nestjs/common';
import { DecisionDetailsReply, GetDecisionRequest } from '@ds/contracts';
import { DecisionStore } from './decision.store';

/** One decision as the application's editor and deploy screen read it. */
@Injectable()
export class DecisionDetails {
  constructor(private readonly decisions: DecisionStore) {}

  async get(request: GetDecisionRequest): Promise<DecisionDetailsReply> {
    const decision = await this.decisions.requireByIdOrSlug(request.workspaceId, request.decision);
    const versions = await this.decisions.versionNumbers(decision.id);
    const active = decision.activeVersion === null ? null : await this.decisions.version(decision.id, decision.activeVersion);
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
      versions,
      updated_at: decision.updatedAt.toISOString(),
    };
  }
}

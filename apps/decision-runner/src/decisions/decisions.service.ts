import { Inject, Injectable } from '@nestjs/common';
import {
  CopyDecisionsReply,
  CopyDecisionsRequest,
  CreateDecisionRequest,
  DecisionCreatedReply,
  DecisionSummary,
  integerIssue,
  DeployedReply,
  DeployRequest,
  SaveDraftRequest,
  ServiceError,
  SetEndpointRequest,
  SUBJECTS,
} from '@ds/contracts';
import { checkDecisionMeta, decisionContract, DecisionContract } from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { isUniqueViolation, PLATFORM, RpcClient } from '@ds/platform';
import { DecisionRunnerConfig } from '../config';
import { DecisionCache } from './decision-cache';
import { decisionNotFound, DecisionStore } from './decision.store';
import { deployableDraft } from './deployable-draft';
import { VersionCache } from './version-cache';

@Injectable()
export class DecisionsService {
  constructor(
    private readonly decisions: DecisionStore,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.config) private readonly config: DecisionRunnerConfig,
    private readonly versions: VersionCache,
    private readonly runnable: DecisionCache,
  ) {}

  async create(request: CreateDecisionRequest): Promise<DecisionCreatedReply> {
    const metaIssues = checkDecisionMeta({ slug: request.slug, name: request.name, description: request.description });
    if (metaIssues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The decision is not valid.', metaIssues);
    const schema = deployableDraft(request.schema);
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId: request.workspaceId });
    const limit = account.plan.max_decisions;

    const created = await this.decisions.transaction(async (tx) => {
      await tx.lockCreates(request.workspaceId);
      if (limit !== null) {
        const used = await tx.count(request.workspaceId);
        if (used >= limit) {
          throw new ServiceError('PLAN_LIMIT_REACHED', `The ${account.plan.name} plan allows ${limit} decisions.`, {
            limit,
            used,
            upgradeUrl: `${this.config.appUrl}/app/billing/plans`,
          });
        }
      }
      const fields = {
        id: newId('dec'),
        workspaceId: request.workspaceId,
        slug: request.slug as string,
        name: request.name as string,
        description: (request.description as string | undefined) ?? null,
        draftSchema: schema,
        revision: 1,
        activeVersion: null,
        endpointEnabled: true,
      };
      try {
        await tx.insert(fields);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ServiceError('CONFLICT', `The slug ${fields.slug} is already taken in this workspace.`);
        }
        throw error;
      }
      return { id: fields.id, slug: fields.slug, name: fields.name, status: 'draft', revision: fields.revision } satisfies DecisionCreatedReply;
    });
    // Replicas may hold this slug as not found.
    this.runnable.changed(request.workspaceId, created.slug);
    return created;
  }

  async saveDraft(request: SaveDraftRequest): Promise<{ revision: number }> {
    const revisionIssue = integerIssue(request.revision, 'revision', 'integer', { min: 1 });
    if (revisionIssue) {
      throw new ServiceError('INVALID_REQUEST', 'revision must be a whole number.', [revisionIssue]);
    }
    const schema = deployableDraft(request.schema);
    const saved = await this.decisions.saveDraft(request, schema, request.revision);
    if (!saved) {
      const current = await this.decisions.require(request);
      throw new ServiceError('CONFLICT', 'The draft was saved by someone else meanwhile; reload it and save again.', {
        currentRevision: current.revision,
      });
    }
    return { revision: saved.revision };
  }

  async deploy(ref: DeployRequest): Promise<DeployedReply> {
    const decision = await this.decisions.require(ref);
    // Deploying re-validates the draft: rules may have become stricter since it was saved.
    const schema = deployableDraft(decision.draftSchema);
    const deployed = await this.decisions.transaction((tx) => tx.nextVersion(decision, schema, ref.deployedBy ?? null, null, ref.note ?? null));
    this.runnable.changed(ref.workspaceId, decision.slug);
    return deployed;
  }

  async setEndpoint(request: SetEndpointRequest): Promise<{ enabled: boolean }> {
    const slug = await this.decisions.setEndpoint(request, request.enabled);
    if (slug === undefined) throw decisionNotFound();
    this.runnable.changed(request.workspaceId, slug);
    return { enabled: request.enabled };
  }

  async list(workspaceId: string): Promise<{ data: DecisionSummary[] }> {
    const rows = await this.decisions.list(workspaceId);
    return {
      data: rows.map((row) => ({
        id: row.id,
        slug: row.slug,
        name: row.name,
        status: row.activeVersion === null ? 'draft' : 'deployed',
        active_version: row.activeVersion,
        endpoint_enabled: row.endpointEnabled,
      })),
    };
  }

  async contract(workspaceId: string, slug: string): Promise<DecisionContract> {
    const decision = await this.decisions.findBySlug({ workspaceId, slug });
    if (!decision) throw new ServiceError('DECISION_NOT_FOUND', `No decision ${slug} in this workspace.`);
    if (decision.activeVersion === null) throw new ServiceError('DECISION_NOT_DEPLOYED', `The decision ${slug} has never been deployed.`);
    const schema = await this.versions.get(decision.id, decision.activeVersion);
    return decisionContract({ slug, status: 'deployed', version: decision.activeVersion, schema });
  }

  /**
   * Seeds a sub-workspace with the partner's deployed decisions: each named slug's active version becomes the
   * copy's draft (and, with `deploy`, its version 1). Slugs that cannot be copied are skipped with a reason;
   * the sub-workspace's decision limit counts as for any create.
   */
  async copy(request: CopyDecisionsRequest): Promise<CopyDecisionsReply> {
    const slugs = Array.isArray(request.slugs) ? request.slugs.filter((slug): slug is string => typeof slug === 'string') : [];
    const account = await this.rpc.call(SUBJECTS.billing.account, { workspaceId: request.workspaceId });
    const limit = account.plan.max_decisions;
    const reply: CopyDecisionsReply = { created: [], skipped: [] };
    await this.decisions.transaction(async (tx) => {
      await tx.lockCreates(request.workspaceId);
      let used = await tx.count(request.workspaceId);
      for (const slug of slugs) {
        const source = await tx.findBySlug({ workspaceId: request.fromWorkspaceId, slug });
        if (!source) {
          reply.skipped.push({ slug, reason: 'not_found' });
          continue;
        }
        if (source.activeVersion === null) {
          reply.skipped.push({ slug, reason: 'not_deployed' });
          continue;
        }
        if (await tx.existsBySlug({ workspaceId: request.workspaceId, slug })) {
          reply.skipped.push({ slug, reason: 'exists' });
          continue;
        }
        if (limit !== null && used >= limit) {
          reply.skipped.push({ slug, reason: 'limit' });
          continue;
        }
        const version = await tx.versionOrFail(source.id, source.activeVersion);
        const id = newId('dec');
        await tx.insert({
          id,
          workspaceId: request.workspaceId,
          slug,
          name: source.name,
          description: source.description,
          draftSchema: version.schema,
          revision: 1,
          activeVersion: request.deploy ? 1 : null,
          endpointEnabled: true,
        });
        if (request.deploy) await tx.insertVersion({ decisionId: id, version: 1, schema: version.schema });
        used += 1;
        reply.created.push({ slug, id, deployed: request.deploy });
      }
    });
    for (const created of reply.created) this.runnable.changed(request.workspaceId, created.slug);
    return reply;
  }

  /** Removes a deleted workspace's decisions, versions, executions and their rollups; deleting twice deletes nothing more. */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    const slugs = await this.decisions.purgeWorkspace(workspaceId);
    for (const { slug } of slugs) this.runnable.changed(workspaceId, slug);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  CopyDecisionsReply,
  CopyDecisionsRequest,
  CreateDecisionRequest,
  DecisionCreatedReply,
  DecisionRef,
  DecisionSummary,
  integerIssue,
  DeployedReply,
  DeployRequest,
  SaveDraftRequest,
  ServiceError,
  SetEndpointRequest,
  SUBJECTS,
} from '@ds/contracts';
import { checkDecisionMeta, decisionContract, NormalizedSchema, validateSchema } from '@ds/decision-schema';
import { newId } from '@ds/ids';
import { isUniqueViolation, PLATFORM, RpcClient, rowsReturned } from '@ds/platform';
import { DecisionEntity, DecisionVersionEntity } from '../entities';
import { DecisionRunnerConfig } from '../config';
import { DecisionCache } from './decision-cache';
import { VersionCache } from './version-cache';
import { nextVersion } from './versions.service';
import { ROLLUP_TABLES } from '../executions/rollups';

@Injectable()
export class DecisionsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
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

    const created = await this.db.transaction(async (tx) => {
      // Serializes creates per workspace so that the plan's decision count holds under concurrency.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`decisions:${request.workspaceId}`]);
      if (limit !== null) {
        const used = await tx.getRepository(DecisionEntity).countBy({ workspaceId: request.workspaceId });
        if (used >= limit) {
          throw new ServiceError('PLAN_LIMIT_REACHED', `The ${account.plan.name} plan allows ${limit} decisions.`, {
            limit,
            used,
            upgradeUrl: `${this.config.appUrl}/app/billing/plans`,
          });
        }
      }
      const entity = tx.getRepository(DecisionEntity).create({
        id: newId('dec'),
        workspaceId: request.workspaceId,
        slug: request.slug as string,
        name: request.name as string,
        description: (request.description as string | undefined) ?? null,
        draftSchema: schema,
        revision: 1,
        activeVersion: null,
        endpointEnabled: true,
      });
      try {
        await tx.getRepository(DecisionEntity).insert(entity);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ServiceError('CONFLICT', `The slug ${entity.slug} is already taken in this workspace.`);
        }
        throw error;
      }
      return { id: entity.id, slug: entity.slug, name: entity.name, status: 'draft', revision: entity.revision } satisfies DecisionCreatedReply;
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
    const [saved] = rowsReturned<{ revision: number }>(
      await this.db.query(
        `UPDATE decisions SET draft_schema = $1, revision = revision + 1, updated_at = now()
          WHERE id = $2 AND workspace_id = $3 AND revision = $4 RETURNING revision`,
        [schema, request.decisionId, request.workspaceId, request.revision],
      ),
    );
    if (!saved) {
      const current = await this.find(request);
      throw new ServiceError('CONFLICT', 'The draft was saved by someone else meanwhile; reload it and save again.', {
        currentRevision: current.revision,
      });
    }
    return { revision: saved.revision };
  }

  async deploy(ref: DeployRequest): Promise<DeployedReply> {
    const decision = await this.find(ref);
    // Deploying re-validates the draft: rules may have become stricter since it was saved.
    const schema = deployableDraft(decision.draftSchema);
    const deployed = await this.db.transaction((tx) => nextVersion(tx, decision, schema, ref.deployedBy ?? null, null, ref.note ?? null));
    this.runnable.changed(ref.workspaceId, decision.slug);
    return deployed;
  }

  async setEndpoint(request: SetEndpointRequest): Promise<{ enabled: boolean }> {
    if (typeof request.enabled !== 'boolean') {
      throw new ServiceError('INVALID_REQUEST', 'enabled must be a boolean.', [{ path: 'enabled', message: 'must be a boolean' }]);
    }
    const [updated] = rowsReturned<{ slug: string }>(
      await this.db.query('UPDATE decisions SET endpoint_enabled = $1, updated_at = now() WHERE id = $2 AND workspace_id = $3 RETURNING slug', [
        request.enabled,
        request.decisionId,
        request.workspaceId,
      ]),
    );
    if (!updated) throw new ServiceError('NOT_FOUND', 'No such decision in this workspace.');
    this.runnable.changed(request.workspaceId, updated.slug);
    return { enabled: request.enabled };
  }

  async list(workspaceId: string): Promise<{ data: DecisionSummary[] }> {
    const rows = await this.db.getRepository(DecisionEntity).find({
      where: { workspaceId },
      order: { createdAt: 'ASC', id: 'ASC' },
      select: { id: true, slug: true, name: true, activeVersion: true, endpointEnabled: true },
    });
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

  async contract(workspaceId: string, slug: string): Promise<Record<string, unknown>> {
    const decision = await this.db.getRepository(DecisionEntity).findOneBy({ workspaceId, slug });
    if (!decision) throw new ServiceError('DECISION_NOT_FOUND', `No decision ${slug} in this workspace.`);
    if (decision.activeVersion === null) throw new ServiceError('DECISION_NOT_DEPLOYED', `The decision ${slug} has never been deployed.`);
    const schema = await this.versions.get(decision.id, decision.activeVersion);
    return decisionContract({ slug, status: 'deployed', version: decision.activeVersion, schema }) as unknown as Record<string, unknown>;
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
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`decisions:${request.workspaceId}`]);
      let used = await tx.getRepository(DecisionEntity).countBy({ workspaceId: request.workspaceId });
      for (const slug of slugs) {
        const source = await tx.getRepository(DecisionEntity).findOneBy({ workspaceId: request.fromWorkspaceId, slug });
        if (!source) {
          reply.skipped.push({ slug, reason: 'not_found' });
          continue;
        }
        if (source.activeVersion === null) {
          reply.skipped.push({ slug, reason: 'not_deployed' });
          continue;
        }
        if (await tx.getRepository(DecisionEntity).existsBy({ workspaceId: request.workspaceId, slug })) {
          reply.skipped.push({ slug, reason: 'exists' });
          continue;
        }
        if (limit !== null && used >= limit) {
          reply.skipped.push({ slug, reason: 'limit' });
          continue;
        }
        const version = await tx.getRepository(DecisionVersionEntity).findOneByOrFail({ decisionId: source.id, version: source.activeVersion });
        const id = newId('dec');
        await tx.getRepository(DecisionEntity).insert({
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
        if (request.deploy) await tx.getRepository(DecisionVersionEntity).insert({ decisionId: id, version: 1, schema: version.schema });
        used += 1;
        reply.created.push({ slug, id, deployed: request.deploy });
      }
    });
    for (const created of reply.created) this.runnable.changed(request.workspaceId, created.slug);
    return reply;
  }

  /** Removes a deleted workspace's decisions, versions, executions and their rollups; deleting twice deletes nothing more. */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    const slugs = await this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM executions WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM playground_reservations WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM lab_turns WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM lab_budgets WHERE workspace_id = $1', [workspaceId]);
      for (const table of ROLLUP_TABLES) await tx.query(`DELETE FROM ${table} WHERE workspace_id = $1`, [workspaceId]);
      // Versions go with their decision (ON DELETE CASCADE).
      return rowsReturned<{ slug: string }>(await tx.query('DELETE FROM decisions WHERE workspace_id = $1 RETURNING slug', [workspaceId]));
    });
    for (const { slug } of slugs) this.runnable.changed(workspaceId, slug);
  }

  private async find(ref: DecisionRef): Promise<DecisionEntity> {
    const decision = await this.db.getRepository(DecisionEntity).findOneBy({ id: ref.decisionId, workspaceId: ref.workspaceId });
    if (!decision) throw new ServiceError('NOT_FOUND', 'No such decision in this workspace.');
    return decision;
  }
}

/** The draft as a deploy takes it: validated again, since rules may have become stricter since it was saved. */
export function deployableDraft(schema: unknown): NormalizedSchema {
  const result = validateSchema(schema);
  if (!result.valid) throw new ServiceError('INVALID_SCHEMA', 'The decision schema is not valid.', result.issues);
  return result.schema;
}

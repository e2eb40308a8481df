import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import {
  CompareVersionsReply,
  CompareVersionsRequest,
  DecisionRef,
  Deployer,
  DeployedReply,
  ReviewVersionReply,
  ReviewVersionRequest,
  RollbackRequest,
  ServiceError,
  SUBJECTS,
  VersionListReply,
} from '@ds/contracts';
import {
  BreakingChange,
  breakingChanges,
  contractChanges,
  headerSecretNames,
  jsonDiff,
  MissingSecret,
  missingSecrets,
  NormalizedSchema,
  parseVersionText,
  reviewVersions,
  validateSchema,
} from '@ds/decision-schema';
import { PLATFORM, RpcClient, rowsReturned } from '@ds/platform';
import { DecisionEntity, DecisionVersionEntity } from '../entities';
import { DecisionCache } from './decision-cache';

/**
 * A decision's deployed versions: their history, two side by side, and rollback. Versions never change and
 * numbers only grow: a rollback deploys a copy of an earlier version as the next one.
 */
@Injectable()
export class VersionsService {
  private readonly logger = new Logger(VersionsService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    private readonly runnable: DecisionCache,
  ) {}

  /** Newest first, each with its contract changes and its review against the version before it. */
  async list(ref: DecisionRef): Promise<VersionListReply> {
    const decision = await this.find(ref);
    const rows = await this.db.getRepository(DecisionVersionEntity).find({ where: { decisionId: decision.id }, order: { version: 'ASC' } });
    const data = rows.map((row, i) => ({
      version: row.version,
      deployed_at: row.createdAt.toISOString(),
      deployed_by: row.deployedBy,
      rolled_back_from: row.rolledBackFrom,
      note: row.note,
      active: row.version === decision.activeVersion,
      shadow: row.version === decision.shadowVersion,
      contract_changes: contractChanges(i === 0 ? null : (rows[i - 1]!.schema as NormalizedSchema), row.schema as NormalizedSchema),
      review: reviewVersions(i === 0 ? null : (rows[i - 1]!.schema as NormalizedSchema), row.schema as NormalizedSchema),
    }));
    return { data: data.reverse() };
  }

  async compare(request: CompareVersionsRequest): Promise<CompareVersionsReply> {
    const decision = await this.find(request);
    const from = await this.version(decision, versionText(request.from, 'from'));
    const to = await this.version(decision, versionText(request.to, 'to'));
    return {
      from: { version: from.version, schema: from.schema },
      to: { version: to.version, schema: to.schema },
      schema_changes: jsonDiff(from.schema, to.schema),
      contract_changes: contractChanges(from.schema as NormalizedSchema, to.schema as NormalizedSchema),
      review: reviewVersions(from.schema as NormalizedSchema, to.schema as NormalizedSchema),
      missing_secrets: await this.missingSecrets(request.workspaceId, to.schema as NormalizedSchema),
    };
  }

  /** What deploying the draft (no `version`) or rolling back to `version` changes against the active version. */
  async review(request: ReviewVersionRequest): Promise<ReviewVersionReply> {
    const decision = await this.find(request);
    const target = request.version === undefined ? null : await this.version(decision, versionText(request.version, 'version'));
    const active = decision.activeVersion === null ? null : await this.version(decision, decision.activeVersion);
    let schema: NormalizedSchema | null;
    if (target !== null) schema = target.schema as NormalizedSchema;
    else {
      // Validated as a deploy validates it: a draft that would be refused has nothing to review.
      const checked = validateSchema(decision.draftSchema);
      schema = checked.valid ? checked.schema : null;
    }
    return {
      from: active?.version ?? null,
      to: target?.version ?? null,
      review: schema === null ? null : reviewVersions((active?.schema as NormalizedSchema | undefined) ?? null, schema),
      missing_secrets: schema === null ? [] : await this.missingSecrets(request.workspaceId, schema),
    };
  }

  /**
   * The headers naming a secret the workspace does not have, from the names the delivery service lists (never a
   * value). Null when it does not answer: a review is still worth reading without the check.
   */
  private async missingSecrets(workspaceId: string, schema: NormalizedSchema): Promise<MissingSecret[] | null> {
    if (schema.destinations.every((destination) => headerSecretNames(destination.headers).length === 0)) return [];
    try {
      const { data } = await this.rpc.call(SUBJECTS.delivery.listSecrets, { workspaceId });
      return missingSecrets(
        schema,
        data.map((secret) => secret.name),
      );
    } catch (error) {
      this.logger.warn(`The workspace's secret names could not be read for a review: ${(error as Error).message}`);
      return null;
    }
  }

  /** Deploys a copy of `version` as the next version, which becomes active; the draft is left as it is. */
  async rollback(request: RollbackRequest): Promise<DeployedReply> {
    const decision = await this.find(request);
    const source = await this.version(decision, versionText(request.version, 'version'));
    const deployed = await this.db.transaction((tx) => nextVersion(tx, decision, source.schema, request.deployedBy ?? null, source.version));
    this.runnable.changed(request.workspaceId, decision.slug);
    return deployed;
  }

  private async find(ref: DecisionRef): Promise<DecisionEntity> {
    const decision = await this.db.getRepository(DecisionEntity).findOneBy({ id: ref.decisionId, workspaceId: ref.workspaceId });
    if (!decision) throw new ServiceError('NOT_FOUND', 'No such decision in this workspace.');
    return decision;
  }

  private async version(decision: DecisionEntity, version: number): Promise<DecisionVersionEntity> {
    const row = await this.db.getRepository(DecisionVersionEntity).findOneBy({ decisionId: decision.id, version });
    if (!row) throw new ServiceError('NOT_FOUND', `The decision ${decision.slug} has no version ${version}.`);
    return row;
  }
}

/** A version named in a path or a query string (rollback, compare): canonical digits only, as every route reads them. */
function versionText(value: unknown, path: string): number {
  const parsed = parseVersionText(value, path);
  if (parsed.ok) return parsed.value;
  throw new ServiceError('INVALID_REQUEST', `${path} must be a version number.`, [parsed.issue]);
}

/**
 * The number the next deploy takes. A shadow deployed from the draft can be newer than the active version, so the
 * count goes on from the highest number deployed; rows from before shadows have no `latest_version`, and there
 * the active version was the highest.
 */
const NEXT_VERSION = 'GREATEST(COALESCE(latest_version, 0), COALESCE(active_version, 0)) + 1';

/**
 * Makes `schema` the next version and the active one, unless another deploy moved the active version since
 * `decision` was read (409, nothing written). Shared by deploy, rollback and promoting a shadow.
 */
export async function nextVersion(
  tx: EntityManager,
  decision: DecisionEntity,
  schema: object,
  deployedBy: Deployer | null,
  rolledBackFrom: number | null,
  note: string | null = null,
): Promise<DeployedReply> {
  const [updated] = rowsReturned<{ active_version: number }>(
    await tx.query(
      `UPDATE decisions SET active_version = ${NEXT_VERSION}, latest_version = ${NEXT_VERSION}, updated_at = now()
        WHERE id = $1 AND workspace_id = $2 AND active_version IS NOT DISTINCT FROM $3 RETURNING active_version`,
      [decision.id, decision.workspaceId, decision.activeVersion],
    ),
  );
  const version = updated?.active_version;
  if (version === undefined) throw new ServiceError('CONFLICT', 'Another deploy of this decision finished first; reload and deploy again.');
  await tx.getRepository(DecisionVersionEntity).insert({ decisionId: decision.id, version, schema, deployedBy, rolledBackFrom, note });
  return { version, breaking: await breakingAgainstActive(tx, decision, schema) };
}

/**
 * What `schema` breaks for callers of the version active when `decision` was read, which the deploy's conditional
 * update has just confirmed is the one replaced; nothing when no version was active.
 */
export async function breakingAgainstActive(tx: EntityManager, decision: DecisionEntity, schema: object): Promise<BreakingChange[]> {
  if (decision.activeVersion === null) return [];
  const active = await tx.getRepository(DecisionVersionEntity).findOneByOrFail({ decisionId: decision.id, version: decision.activeVersion });
  return breakingChanges(active.schema as NormalizedSchema, schema as NormalizedSchema);
}

/**
 * Deploys `schema` as the next version without making it active: the version a shadow runs. The decision row's
 * update takes its lock, so concurrent deploys still number one after the other.
 */
export async function nextInactiveVersion(tx: EntityManager, decision: DecisionEntity, schema: object, deployedBy: Deployer | null): Promise<number> {
  const [updated] = rowsReturned<{ latest_version: number }>(
    await tx.query(
      `UPDATE decisions SET latest_version = ${NEXT_VERSION}, updated_at = now()
        WHERE id = $1 AND workspace_id = $2 AND active_version IS NOT NULL RETURNING latest_version`,
      [decision.id, decision.workspaceId],
    ),
  );
  const version = updated?.latest_version;
  if (version === undefined) throw new ServiceError('CONFLICT', 'The decision has no active version to shadow; deploy it first.');
  await tx.getRepository(DecisionVersionEntity).insert({ decisionId: decision.id, version, schema, deployedBy, rolledBackFrom: null });
  return version;
}

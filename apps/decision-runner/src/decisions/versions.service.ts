import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  CompareVersionsReply,
  CompareVersionsRequest,
  DecisionRef,
  DeployedReply,
  ReviewVersionReply,
  ReviewVersionRequest,
  RollbackRequest,
  ServiceError,
  SUBJECTS,
  VersionListReply,
} from '@ds/contracts';
import {
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
import { PLATFORM, RpcClient } from '@ds/platform';
import { DecisionEntity, DecisionVersionEntity } from '../entities';
import { DecisionCache } from './decision-cache';
import { DecisionStore } from './decision.store';

/**
 * A decision's deployed versions: their history, two side by side, and rollback. Versions never change and
 * numbers only grow: a rollback deploys a copy of an earlier version as the next one.
 */
@Injectable()
export class VersionsService {
  private readonly logger = new Logger(VersionsService.name);

  constructor(
    private readonly decisions: DecisionStore,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    private readonly runnable: DecisionCache,
  ) {}

  /** Newest first, each with its contract changes and its review against the version before it. */
  async list(ref: DecisionRef): Promise<VersionListReply> {
    const decision = await this.decisions.require(ref);
    const rows = await this.decisions.versions(decision.id);
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
    const decision = await this.decisions.require(request);
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
    const decision = await this.decisions.require(request);
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
    const decision = await this.decisions.require(request);
    const source = await this.version(decision, versionText(request.version, 'version'));
    const deployed = await this.decisions.transaction((tx) => tx.nextVersion(decision, source.schema, request.deployedBy ?? null, source.version));
    this.runnable.changed(request.workspaceId, decision.slug);
    return deployed;
  }

  private async version(decision: DecisionEntity, version: number): Promise<DecisionVersionEntity> {
    const row = await this.decisions.version(decision.id, version);
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

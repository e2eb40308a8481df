import { Injectable } from '@nestjs/common';
import { DecisionRef, DeployedReply, PromoteShadowRequest, ServiceError, ShadowReply, StartShadowRequest } from '@ds/contracts';
import { NormalizedSchema, parseVersionNumber, ShadowComparison, shadowRate, sharedQuestions, SHADOW_RATE_MAX, SHADOW_RATE_MIN } from '@ds/decision-schema';
import { DecisionEntity } from '../entities';
import { DecisionCache } from '../decisions/decision-cache';
import { DecisionStore } from '../decisions/decision.store';
import { deployableDraft } from '../decisions/deployable-draft';
import { VersionCache } from '../decisions/version-cache';
import { LabGate, LabPool } from '../lab/lab-pool';
import { ExecutionStore } from '../executions/execution.store';

/**
 * A decision's shadow: a deployed version that sampled live runs of the active version also go through, compared
 * with it as the runs come in; promoted to active or stopped in one step.
 */
@Injectable()
export class ShadowService {
  private readonly comparing = new Map<string, Promise<ShadowComparison>>();

  constructor(
    private readonly decisions: DecisionStore,
    private readonly executions: ExecutionStore,
    private readonly runnable: DecisionCache,
    private readonly versions: VersionCache,
    private readonly pool: LabPool,
    private readonly gate: LabGate,
  ) {}

  async get(ref: DecisionRef): Promise<ShadowReply> {
    return this.reply(await this.decisions.require(ref));
  }

  /**
   * Starts a shadow at `rate` percent: of `version` (deployed, not the active one), or without it of the draft,
   * deployed as a new version that does not become active. Naming the running shadow's version changes its rate
   * and keeps its comparison; another version replaces it.
   */
  async start(request: StartShadowRequest): Promise<ShadowReply> {
    const decision = await this.decisions.require(request);
    const rate = shadowRate(request.rate);
    if (rate === null) {
      throw new ServiceError('INVALID_REQUEST', `rate must be a whole percent from ${SHADOW_RATE_MIN} to ${SHADOW_RATE_MAX}.`, [
        { path: 'rate', message: `must be an integer from ${SHADOW_RATE_MIN} to ${SHADOW_RATE_MAX}` },
      ]);
    }
    const named = request.version === undefined || request.version === null ? null : bodyVersion(request.version);
    if (decision.activeVersion === null) throw new ServiceError('CONFLICT', 'The decision has no active version to shadow; deploy it first.');
    if (named !== null) {
      if (named === decision.activeVersion) throw new ServiceError('CONFLICT', `Version ${named} is the active version; a shadow must be another one.`);
      const exists = await this.decisions.versionExists(decision.id, named);
      if (!exists) throw new ServiceError('NOT_FOUND', `The decision ${decision.slug} has no version ${named}.`);
    }
    const draft = named === null ? deployableDraft(decision.draftSchema) : null;
    await this.decisions.transaction(async (tx) => {
      const version = draft !== null ? await tx.nextInactiveVersion(decision, draft, request.startedBy ?? null) : named!;
      const updated = await tx.startShadow(decision, version, rate, request.startedBy ?? null);
      if (!updated) throw new ServiceError('CONFLICT', 'Another deploy of this decision finished first; reload and start the shadow again.');
    });
    this.runnable.changed(decision.workspaceId, decision.slug);
    return this.get(request);
  }

  /**
   * Makes the shadow's version active and ends the shadow. A shadow newer than the active version becomes active as
   * it is; an older one is deployed as a copy, as a rollback is, so version numbers only grow.
   */
  async promote(request: PromoteShadowRequest): Promise<DeployedReply> {
    const decision = await this.decisions.require(request);
    const shadow = decision.shadowVersion;
    if (shadow === null) throw new ServiceError('CONFLICT', 'No shadow runs for this decision.');
    const deployed = await this.decisions.transaction(async (tx) => {
      if (decision.activeVersion !== null && shadow > decision.activeVersion) {
        const updated = await tx.promoteShadow(decision, decision.activeVersion, shadow);
        if (!updated) throw new ServiceError('CONFLICT', 'The decision changed meanwhile; reload and promote again.');
        const promoted = await tx.versionOrFail(decision.id, shadow);
        return { version: shadow, breaking: await tx.breakingAgainstActive(decision, promoted.schema) };
      }
      const source = await tx.versionOrFail(decision.id, shadow);
      const copy = await tx.nextVersion(decision, source.schema, request.deployedBy ?? null, shadow);
      const cleared = await tx.clearShadow(decision.id, shadow);
      if (!cleared) throw new ServiceError('CONFLICT', 'The shadow changed meanwhile; reload and promote again.');
      return copy;
    });
    this.runnable.changed(decision.workspaceId, decision.slug);
    return deployed;
  }

  /** Ends the shadow, if one runs; its recorded runs stay. */
  async stop(ref: DecisionRef): Promise<ShadowReply> {
    const decision = await this.decisions.require(ref);
    await this.decisions.stopShadow(decision);
    this.runnable.changed(decision.workspaceId, decision.slug);
    return this.get(ref);
  }

  private async reply(decision: DecisionEntity): Promise<ShadowReply> {
    if (decision.shadowVersion === null || decision.shadowRate === null || decision.shadowStartedAt === null) {
      return { active_version: decision.activeVersion, shadow: null, comparison: null };
    }
    return {
      active_version: decision.activeVersion,
      shadow: {
        version: decision.shadowVersion,
        rate: decision.shadowRate,
        started_at: decision.shadowStartedAt.toISOString(),
        started_by: decision.shadowStartedBy,
      },
      comparison: await this.comparison(decision, decision.shadowVersion, decision.shadowStartedAt),
    };
  }

  /**
   * Reads of one comparison that arrive while it is being computed share it: a loop of reads costs one comparison
   * at a time on the lab threads, and other workspaces' lab work does not queue behind copies of it.
   */
  private comparison(decision: DecisionEntity, shadowVersion: number, since: Date): Promise<ShadowComparison> {
    const key = `${decision.id}:${decision.activeVersion}:${shadowVersion}:${since.getTime()}`;
    const running = this.comparing.get(key);
    if (running) return running;
    const computed = this.compare(decision, shadowVersion, since).finally(() => this.comparing.delete(key));
    this.comparing.set(key, computed);
    return computed;
  }

  private async compare(decision: DecisionEntity, shadowVersion: number, since: Date): Promise<ShadowComparison> {
    const [live, shadow] = await Promise.all([
      decision.activeVersion === null ? Promise.resolve(null) : this.versions.get(decision.id, decision.activeVersion),
      this.versions.get(decision.id, shadowVersion),
    ]);
    const pairs = await this.gate.run(() => this.executions.shadowPairs(decision.id, shadowVersion, since));
    return this.pool.run({ kind: 'shadow', questions: sharedQuestions((live as NormalizedSchema | null)?.questions ?? [], shadow.questions), pairs });
  }
}

/** The version in a shadow's body: a JSON number, as every body takes a version (a string "2" is refused). */
function bodyVersion(value: unknown): number {
  const parsed = parseVersionNumber(value, 'version');
  if (parsed.ok) return parsed.value;
  throw new ServiceError('INVALID_REQUEST', 'version must be a version number, or absent to shadow the draft.', [parsed.issue]);
}

import { DataSource, EntityManager } from 'typeorm';
import { DecisionRef, Deployer, DeployedReply, ServiceError } from '@ds/contracts';
import { BreakingChange, breakingChanges, NormalizedSchema } from '@ds/decision-schema';
import { rowsReturned } from '@ds/platform';
import { DecisionEntity, DecisionVersionEntity } from '../entities';
import { ROLLUP_TABLES } from '../executions/rollups';
import { pgPool } from '../pg-pool';

/** A decision named by its slug, as runs and contracts name it. */
export interface DecisionSlugRef {
  workspaceId: string;
  slug: string;
}

/** What a run needs of a decision row. */
export interface RunnableDecision {
  id: string;
  slug: string;
  activeVersion: number | null;
  endpointEnabled: boolean;
  /** The version evaluated after sampled runs of the active one, and the percent sampled. */
  shadow: { version: number; rate: number } | null;
}

const FIND_DECISION = {
  name: 'decision-runner.find-decision',
  text: 'SELECT id, slug, active_version, endpoint_enabled, shadow_version, shadow_rate FROM decisions WHERE workspace_id = $1 AND slug = $2',
};

/** The fields a new decision row is written with; the rest take their column defaults. */
export type NewDecision = Pick<
  DecisionEntity,
  'id' | 'workspaceId' | 'slug' | 'name' | 'description' | 'draftSchema' | 'revision' | 'activeVersion' | 'endpointEnabled'
>;

/**
 * The number the next deploy takes. A shadow deployed from the draft can be newer than the active version, so the
 * count goes on from the highest number deployed; rows from before shadows have no `latest_version`, and there
 * the active version was the highest.
 */
const NEXT_VERSION = 'GREATEST(COALESCE(latest_version, 0), COALESCE(active_version, 0)) + 1';

const CLEARED = 'shadow_version = NULL, shadow_rate = NULL, shadow_started_at = NULL, shadow_started_by = NULL';

/**
 * Decisions and their deployed versions, the decision-runner's own tables. The store is bound to the pool or, inside
 * `transaction`, to one transaction, so a service writes several rows atomically without holding a connection itself.
 */
export class DecisionStore {
  constructor(private readonly db: EntityManager) {}

  static of(db: DataSource): DecisionStore {
    return new DecisionStore(db.manager);
  }

  transaction<T>(work: (tx: DecisionStore) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(new DecisionStore(tx)));
  }

  find(ref: DecisionRef): Promise<DecisionEntity | null> {
    return this.db.getRepository(DecisionEntity).findOneBy({ id: ref.decisionId, workspaceId: ref.workspaceId });
  }

  /** The decision a run by slug needs, or null: a prepared statement straight on the pool, as it is read on the run path. */
  async runnable(workspaceId: string, slug: string): Promise<RunnableDecision | null> {
    const { rows } = await pgPool(this.db.connection).query<{
      id: string;
      slug: string;
      active_version: number | null;
      endpoint_enabled: boolean;
      shadow_version: number | null;
      shadow_rate: number | null;
    }>({
      ...FIND_DECISION,
      values: [workspaceId, slug],
    });
    const row = rows[0];
    if (!row) return null;
    const shadow = row.shadow_version !== null && row.shadow_rate !== null ? { version: row.shadow_version, rate: row.shadow_rate } : null;
    return { id: row.id, slug: row.slug, activeVersion: row.active_version, endpointEnabled: row.endpoint_enabled, shadow };
  }

  /** The decision, or the 404 every route that names a decision by id answers. */
  async require(ref: DecisionRef): Promise<DecisionEntity> {
    const decision = await this.find(ref);
    if (!decision) throw decisionNotFound();
    return decision;
  }

  /** As `require`, for a caller that needs only to know the decision is there: no row is read. */
  async requireExists(ref: DecisionRef): Promise<void> {
    const rows: unknown[] = await this.db.query('SELECT 1 FROM decisions WHERE id = $1 AND workspace_id = $2', [ref.decisionId, ref.workspaceId]);
    if (rows.length === 0) throw decisionNotFound();
  }

  /** By id when `decision` is one (`dec_…`), else by slug, as the application's screens name a decision. */
  async requireByIdOrSlug(workspaceId: string, decision: string): Promise<DecisionEntity> {
    const where = decision.startsWith('dec_') ? { id: decision, workspaceId } : { slug: decision, workspaceId };
    const found = await this.db.getRepository(DecisionEntity).findOneBy(where);
    if (!found) throw decisionNotFound();
    return found;
  }

  /** The id of the decision named by id (`dec_…`) or slug in this workspace; the 404 when there is none. */
  async requireId(workspaceId: string, column: 'id' | 'slug', value: string): Promise<string> {
    const rows = (await this.db.query(`SELECT id FROM decisions WHERE workspace_id = $1 AND ${column} = $2`, [workspaceId, value])) as Array<{ id: string }>;
    const found = rows[0];
    if (!found) throw decisionNotFound();
    return found.id;
  }

  /** The policies of each of `versions`, as their schemas list them. */
  async policies(decisionId: string, versions: number[]): Promise<Array<{ version: number; policies: unknown }>> {
    return (await this.db.query(`SELECT version, schema->'policies' AS policies FROM decision_versions WHERE decision_id = $1 AND version = ANY($2)`, [
      decisionId,
      versions,
    ])) as Array<{ version: number; policies: unknown }>;
  }

  findBySlug(ref: DecisionSlugRef): Promise<DecisionEntity | null> {
    return this.db.getRepository(DecisionEntity).findOneBy({ workspaceId: ref.workspaceId, slug: ref.slug });
  }

  existsBySlug(ref: DecisionSlugRef): Promise<boolean> {
    return this.db.getRepository(DecisionEntity).existsBy({ workspaceId: ref.workspaceId, slug: ref.slug });
  }

  count(workspaceId: string): Promise<number> {
    return this.db.getRepository(DecisionEntity).countBy({ workspaceId });
  }

  /** Serializes creates per workspace (inside a transaction) so that the plan's decision count holds under concurrency. */
  async lockCreates(workspaceId: string): Promise<void> {
    await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`decisions:${workspaceId}`]);
  }

  async insert(fields: NewDecision): Promise<DecisionEntity> {
    const entity = this.db.getRepository(DecisionEntity).create(fields);
    await this.db.getRepository(DecisionEntity).insert(entity);
    return entity;
  }

  /** The workspace's decisions in the order they were created, with the columns a list shows. */
  list(workspaceId: string): Promise<DecisionEntity[]> {
    return this.db.getRepository(DecisionEntity).find({
      where: { workspaceId },
      order: { createdAt: 'ASC', id: 'ASC' },
      select: { id: true, slug: true, name: true, activeVersion: true, endpointEnabled: true },
    });
  }

  /** Saves the draft when `revision` is still the current one; undefined when it is not (or there is no such decision). */
  async saveDraft(ref: DecisionRef, schema: object, revision: unknown): Promise<{ revision: number } | undefined> {
    const [saved] = rowsReturned<{ revision: number }>(
      await this.db.query(
        `UPDATE decisions SET draft_schema = $1, revision = revision + 1, updated_at = now()
          WHERE id = $2 AND workspace_id = $3 AND revision = $4 RETURNING revision`,
        [schema, ref.decisionId, ref.workspaceId, revision],
      ),
    );
    return saved;
  }

  /** Switches the public endpoint; the decision's slug, or undefined when there is no such decision. */
  async setEndpoint(ref: DecisionRef, enabled: boolean): Promise<string | undefined> {
    const [updated] = rowsReturned<{ slug: string }>(
      await this.db.query('UPDATE decisions SET endpoint_enabled = $1, updated_at = now() WHERE id = $2 AND workspace_id = $3 RETURNING slug', [
        enabled,
        ref.decisionId,
        ref.workspaceId,
      ]),
    );
    return updated?.slug;
  }

  version(decisionId: string, version: number): Promise<DecisionVersionEntity | null> {
    return this.db.getRepository(DecisionVersionEntity).findOneBy({ decisionId, version });
  }

  /** A version known to exist (the active one of a decision just read, a shadow's): its absence is a broken invariant. */
  versionOrFail(decisionId: string, version: number): Promise<DecisionVersionEntity> {
    return this.db.getRepository(DecisionVersionEntity).findOneByOrFail({ decisionId, version });
  }

  versionExists(decisionId: string, version: number): Promise<boolean> {
    return this.db.getRepository(DecisionVersionEntity).existsBy({ decisionId, version });
  }

  /** Every deployed version, oldest first. */
  versions(decisionId: string): Promise<DecisionVersionEntity[]> {
    return this.db.getRepository(DecisionVersionEntity).find({ where: { decisionId }, order: { version: 'ASC' } });
  }

  /** The numbers of the deployed versions, newest first. */
  async versionNumbers(decisionId: string): Promise<number[]> {
    const rows = await this.db.getRepository(DecisionVersionEntity).find({
      where: { decisionId },
      select: { version: true },
      order: { version: 'DESC' },
    });
    return rows.map((row) => row.version);
  }

  async insertVersion(row: Pick<DecisionVersionEntity, 'decisionId' | 'version' | 'schema'>): Promise<void> {
    await this.db.getRepository(DecisionVersionEntity).insert(row);
  }

  /**
   * Makes `schema` the next version and the active one, unless another deploy moved the active version since
   * `decision` was read (409, nothing written). Shared by deploy, rollback and promoting a shadow.
   */
  async nextVersion(
    decision: DecisionEntity,
    schema: object,
    deployedBy: Deployer | null,
    rolledBackFrom: number | null,
    note: string | null = null,
  ): Promise<DeployedReply> {
    const [updated] = rowsReturned<{ active_version: number }>(
      await this.db.query(
        `UPDATE decisions SET active_version = ${NEXT_VERSION}, latest_version = ${NEXT_VERSION}, updated_at = now()
          WHERE id = $1 AND workspace_id = $2 AND active_version IS NOT DISTINCT FROM $3 RETURNING active_version`,
        [decision.id, decision.workspaceId, decision.activeVersion],
      ),
    );
    const version = updated?.active_version;
    if (version === undefined) throw new ServiceError('CONFLICT', 'Another deploy of this decision finished first; reload and deploy again.');
    await this.db.getRepository(DecisionVersionEntity).insert({ decisionId: decision.id, version, schema, deployedBy, rolledBackFrom, note });
    return { version, breaking: await this.breakingAgainstActive(decision, schema) };
  }

  /**
   * What `schema` breaks for callers of the version active when `decision` was read, which the deploy's conditional
   * update has just confirmed is the one replaced; nothing when no version was active.
   */
  async breakingAgainstActive(decision: DecisionEntity, schema: object): Promise<BreakingChange[]> {
    if (decision.activeVersion === null) return [];
    const active = await this.db.getRepository(DecisionVersionEntity).findOneByOrFail({ decisionId: decision.id, version: decision.activeVersion });
    return breakingChanges(active.schema as NormalizedSchema, schema as NormalizedSchema);
  }

  /**
   * Deploys `schema` as the next version without making it active: the version a shadow runs. The decision row's
   * update takes its lock, so concurrent deploys still number one after the other.
   */
  async nextInactiveVersion(decision: DecisionEntity, schema: object, deployedBy: Deployer | null): Promise<number> {
    const [updated] = rowsReturned<{ latest_version: number }>(
      await this.db.query(
        `UPDATE decisions SET latest_version = ${NEXT_VERSION}, updated_at = now()
          WHERE id = $1 AND workspace_id = $2 AND active_version IS NOT NULL RETURNING latest_version`,
        [decision.id, decision.workspaceId],
      ),
    );
    const version = updated?.latest_version;
    if (version === undefined) throw new ServiceError('CONFLICT', 'The decision has no active version to shadow; deploy it first.');
    await this.db.getRepository(DecisionVersionEntity).insert({ decisionId: decision.id, version, schema, deployedBy, rolledBackFrom: null });
    return version;
  }

  /**
   * Sets the shadow to `version` at `rate`, keeping when and by whom it started if that version already shadowed;
   * false when another deploy moved the active version since `decision` was read.
   */
  async startShadow(decision: DecisionEntity, version: number, rate: number, startedBy: Deployer | null): Promise<boolean> {
    const [updated] = rowsReturned(
      await this.db.query(
        `UPDATE decisions SET shadow_rate = $4,
                shadow_started_at = CASE WHEN shadow_version IS NOT DISTINCT FROM $3 THEN shadow_started_at ELSE now() END,
                shadow_started_by = CASE WHEN shadow_version IS NOT DISTINCT FROM $3 THEN shadow_started_by ELSE $5::jsonb END,
                shadow_version = $3, updated_at = now()
          WHERE id = $1 AND workspace_id = $2 AND active_version IS NOT DISTINCT FROM $6 RETURNING id`,
        [decision.id, decision.workspaceId, version, rate, JSON.stringify(startedBy), decision.activeVersion],
      ),
    );
    return updated !== undefined;
  }

  /** Makes the shadow (newer than the active version) active and ends it; false when either changed since `decision` was read. */
  async promoteShadow(decision: DecisionEntity, activeVersion: number, shadow: number): Promise<boolean> {
    const [updated] = rowsReturned(
      await this.db.query(
        `UPDATE decisions SET active_version = shadow_version, ${CLEARED}, updated_at = now()
          WHERE id = $1 AND workspace_id = $2 AND active_version = $3 AND shadow_version = $4 RETURNING id`,
        [decision.id, decision.workspaceId, activeVersion, shadow],
      ),
    );
    return updated !== undefined;
  }

  /** Ends the shadow of `version` after its copy was deployed; false when the shadow changed meanwhile. */
  async clearShadow(decisionId: string, shadow: number): Promise<boolean> {
    const [cleared] = rowsReturned(
      await this.db.query(`UPDATE decisions SET ${CLEARED} WHERE id = $1 AND shadow_version = $2 RETURNING id`, [decisionId, shadow]),
    );
    return cleared !== undefined;
  }

  /** Ends whatever shadow runs. */
  async stopShadow(decision: DecisionEntity): Promise<void> {
    await this.db.query(`UPDATE decisions SET ${CLEARED}, updated_at = now() WHERE id = $1 AND workspace_id = $2`, [decision.id, decision.workspaceId]);
  }

  /** Removes a deleted workspace's decisions, versions, executions and their rollups in one transaction; the slugs removed. */
  purgeWorkspace(workspaceId: string): Promise<Array<{ slug: string }>> {
    return this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM executions WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM playground_reservations WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM lab_turns WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM lab_budgets WHERE workspace_id = $1', [workspaceId]);
      for (const table of ROLLUP_TABLES) await tx.query(`DELETE FROM ${table} WHERE workspace_id = $1`, [workspaceId]);
      // Versions go with their decision (ON DELETE CASCADE).
      return rowsReturned<{ slug: string }>(await tx.query('DELETE FROM decisions WHERE workspace_id = $1 RETURNING slug', [workspaceId]));
    });
  }
}

/** The one answer to a decision id that is not in the caller's workspace. */
export function decisionNotFound(): ServiceError {
  return new ServiceError('NOT_FOUND', 'No such decision in this workspace.');
}

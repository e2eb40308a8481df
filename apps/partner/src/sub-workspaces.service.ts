import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import {
  AccountReply,
  CopyDecisionsReply,
  ListSubWorkspacesReply,
  PartnerCaller,
  PartnerSettingsReply,
  ServiceError,
  SetPartnerSettingsRequest,
  SubWorkspaceView,
  SUBJECTS,
  UpsertSubWorkspaceReply,
  ValidationIssue,
} from '@ds/contracts';
import {
  checkListQuery,
  checkPartnerSettings,
  checkSubWorkspace,
  encodeCursor,
  Limits,
  limitsAbovePlan,
  parseRef,
  SUB_WORKSPACES_PER_PLAN,
  SubWorkspaceFields,
  subWorkspaceOverrides,
} from '@ds/partner';
import { NatsLink, PLATFORM, publishWorkspaceDeleted, RpcClient, rowsReturned } from '@ds/platform';
import { PartnerConfig } from './config';

export interface SubWorkspaceRow {
  id: string;
  partner_workspace_id: string;
  external_id: string;
  name: string;
  metadata: Record<string, string>;
  max_decisions: number | null;
  monthly_decisions: number | null;
  created_at: Date;
}

export interface PartnerSettings {
  enabled: boolean;
  allowedOrigins: string[];
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COLUMNS = 'id, partner_workspace_id, external_id, name, metadata, max_decisions, monthly_decisions, created_at';

export function invalid(issues: ValidationIssue[], message = 'The request is not valid.'): ServiceError {
  return new ServiceError('INVALID_REQUEST', message, issues);
}

function notFound(): ServiceError {
  return new ServiceError('WORKSPACE_NOT_FOUND', 'No sub-workspace with this reference among yours.');
}

/**
 * Sub-workspaces: the partner service keeps the link (partner, external id, name, metadata, limits); the
 * workspace row itself is the gateway's, written by the gateway from the answer. Limits become the
 * sub-workspace's billing plan (the partner's plan with `max_decisions`, and `monthly_decisions` as a hard-capped
 * included volume), so the runner and the ledger enforce them where they enforce every plan.
 */
@Injectable()
export class SubWorkspacesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.nats) private readonly nats: NatsLink,
    @Inject(PLATFORM.config) private readonly config: PartnerConfig,
  ) {}

  async setSettings(request: SetPartnerSettingsRequest): Promise<PartnerSettingsReply> {
    const { settings, issues } = checkPartnerSettings({ enabled: request.enabled, allowed_origins: request.allowed_origins });
    if (!settings) throw invalid(issues, 'The partner settings are not valid.');
    if (settings.enabled && (await this.db.query('SELECT 1 FROM sub_workspaces WHERE id::text = $1', [request.workspaceId])).length > 0) {
      throw new ServiceError('CONFLICT', 'A sub-workspace cannot be a partner itself.');
    }
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO partner_settings (workspace_id, enabled, allowed_origins) VALUES ($1, $2, $3)
         ON CONFLICT (workspace_id) DO UPDATE SET enabled = EXCLUDED.enabled, allowed_origins = EXCLUDED.allowed_origins, updated_at = now()`,
        [request.workspaceId, settings.enabled, JSON.stringify(settings.allowedOrigins)],
      );
      // Turning partner mode off ends every embed session it opened; turning it on again does not revive them.
      if (!settings.enabled) {
        await tx.query(`UPDATE embed_sessions SET closed_at = now() WHERE partner_workspace_id = $1 AND closed_at IS NULL`, [request.workspaceId]);
      }
    });
    return { enabled: settings.enabled, allowed_origins: settings.allowedOrigins };
  }

  /** Partner endpoints need partner mode, then a key that a user created. */
  async authorize(caller: PartnerCaller): Promise<PartnerSettings> {
    const row = await this.enabledSettings(this.db.manager, caller.partnerWorkspaceId);
    if (caller.authorId === null) throw new ServiceError('FORBIDDEN', 'Partner endpoints need an API key created by a user.', { reason: 'key_without_author' });
    return { enabled: true, allowedOrigins: row.allowed_origins };
  }

  /** The workspace's partner settings, or 403 when partner mode is off (or the workspace was deleted). */
  private async enabledSettings(manager: EntityManager, workspaceId: string): Promise<{ enabled: true; allowed_origins: string[] }> {
    const [row] = (await manager.query('SELECT enabled, allowed_origins FROM partner_settings WHERE workspace_id = $1', [workspaceId])) as Array<{
      enabled: boolean;
      allowed_origins: string[];
    }>;
    if (!row?.enabled) throw new ServiceError('FORBIDDEN', 'Partner mode is not enabled for this workspace.', { reason: 'partner_disabled' });
    return { enabled: true, allowed_origins: row.allowed_origins };
  }

  /** Create-or-update (also used by embed sessions that create their workspace, whose fields sit under `prefix`). */
  async upsert(caller: PartnerCaller, body: Record<string, unknown>, prefix = ''): Promise<UpsertSubWorkspaceReply> {
    await this.authorize(caller);
    const { fields, issues } = checkSubWorkspace(body, 'create', prefix);
    if (issues.length > 0) throw invalid(issues, 'The sub-workspace is not valid.');
    const partnerPlan = await this.partnerPlan(caller.partnerWorkspaceId);
    const aboveLimits = limitsAbovePlan(fields.limits, partnerPlan, prefix);
    if (aboveLimits.length > 0) throw invalid(aboveLimits, "The sub-workspace's limits exceed the partner's plan.");
    const { row, created } = await this.db.transaction(async (tx) => {
      // One partner's creates queue here, so the plan's count holds and two creates of one external_id meet
      // an existing row rather than a unique violation.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sub-workspaces:${caller.partnerWorkspaceId}`]);
      // Checked again under the lock: the partner's Owner may have deleted the workspace since authorize().
      await this.enabledSettings(tx, caller.partnerWorkspaceId);
      const existing = await this.findByExternalId(tx, caller.partnerWorkspaceId, fields.external_id as string);
      if (existing) return { row: await this.applyUpdate(tx, existing, fields), created: false };
      const limit = SUB_WORKSPACES_PER_PLAN[partnerPlan.name];
      if (limit !== null) {
        const [counted] = (await tx.query('SELECT count(*)::int AS used FROM sub_workspaces WHERE partner_workspace_id = $1', [
          caller.partnerWorkspaceId,
        ])) as Array<{ used: number }>;
        // count(*) without GROUP BY answers exactly one row.
        const { used } = counted!;
        if (used >= limit) {
          throw new ServiceError('PLAN_LIMIT_REACHED', `The ${partnerPlan.name} plan allows ${limit} sub-workspaces.`, {
            scope: 'workspaces',
            limit,
            used,
            upgradeUrl: `${this.config.appUrl}/app/billing/plans`,
          });
        }
      }
      const [inserted] = (await tx.query(
        `INSERT INTO sub_workspaces (id, partner_workspace_id, external_id, name, metadata, max_decisions, monthly_decisions)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (partner_workspace_id, external_id) DO NOTHING RETURNING ${COLUMNS}`,
        [
          randomUUID(),
          caller.partnerWorkspaceId,
          fields.external_id,
          fields.name,
          JSON.stringify(fields.metadata ?? {}),
          fields.limits?.max_decisions ?? null,
          fields.limits?.monthly_decisions ?? null,
        ],
      )) as SubWorkspaceRow[];
      if (inserted) return { row: inserted, created: true };
      // A replica without this lock (an older version) inserted it first.
      const raced = await this.findByExternalId(tx, caller.partnerWorkspaceId, fields.external_id as string);
      if (!raced) throw new ServiceError('CONFLICT', 'The sub-workspace was created and deleted concurrently; retry.');
      return { row: await this.applyUpdate(tx, raced, fields), created: false };
    });
    await this.applyLimits(row, partnerPlan);
    let seed: CopyDecisionsReply | undefined;
    if (created && fields.seed) {
      seed = await this.rpc.call(SUBJECTS.runner.copyDecisions, {
        workspaceId: row.id,
        fromWorkspaceId: caller.partnerWorkspaceId,
        slugs: fields.seed.decisions,
        deploy: fields.seed.deploy,
      });
    }
    const workspace = await this.view(row);
    if (created) workspace.seed = seed ?? { created: [], skipped: [] };
    return { created, workspace };
  }

  async list(caller: PartnerCaller, query: Record<string, unknown>): Promise<ListSubWorkspacesReply> {
    await this.authorize(caller);
    const { limit, after, externalId, issues } = checkListQuery(query);
    if (issues.length > 0) throw invalid(issues, 'The query parameters are not valid.');
    const conditions = ['partner_workspace_id = $1'];
    const parameters: unknown[] = [caller.partnerWorkspaceId];
    if (externalId !== null) {
      parameters.push(externalId);
      conditions.push(`external_id = $${parameters.length}`);
    }
    if (after !== null) {
      parameters.push(after.createdAt, after.id);
      conditions.push(`(created_at, id) > ($${parameters.length - 1}::timestamptz, $${parameters.length}::uuid)`);
    }
    parameters.push(limit + 1);
    const rows = (await this.db.query(
      `SELECT ${COLUMNS} FROM sub_workspaces WHERE ${conditions.join(' AND ')} ORDER BY created_at, id LIMIT $${parameters.length}`,
      parameters,
    )) as SubWorkspaceRow[];
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: await Promise.all(page.map((row) => this.view(row))),
      next_cursor: rows.length > limit && last ? encodeCursor(last.created_at.toISOString(), last.id) : null,
    };
  }

  async get(caller: PartnerCaller, ref: string): Promise<SubWorkspaceView> {
    await this.authorize(caller);
    return this.view(await this.resolve(this.db.manager, caller.partnerWorkspaceId, ref));
  }

  async update(caller: PartnerCaller, ref: string, body: Record<string, unknown>): Promise<SubWorkspaceView> {
    await this.authorize(caller);
    const { fields, issues } = checkSubWorkspace(body, 'update');
    if (issues.length > 0) throw invalid(issues, 'The sub-workspace is not valid.');
    const partnerPlan = await this.partnerPlan(caller.partnerWorkspaceId);
    const aboveLimits = limitsAbovePlan(fields.limits, partnerPlan);
    if (aboveLimits.length > 0) throw invalid(aboveLimits, "The sub-workspace's limits exceed the partner's plan.");
    const row = await this.db.transaction(async (tx) => this.applyUpdate(tx, await this.resolve(tx, caller.partnerWorkspaceId, ref, true), fields));
    await this.applyLimits(row, partnerPlan);
    return this.view(row);
  }

  /**
   * Announces the deletion on WORKSPACE_EVENTS first (every owner removes its rows from it, this service's own
   * links and sessions included), then removes the link at once so the reference answers 404 from now on.
   */
  async delete(caller: PartnerCaller, ref: string): Promise<{ id: string }> {
    await this.authorize(caller);
    const row = await this.resolve(this.db.manager, caller.partnerWorkspaceId, ref);
    await this.announceDeletion(row.id, row.partner_workspace_id);
    return { id: row.id };
  }

  /**
   * The Owner deletes a workspace of their own. A sub-workspace is its partner's to delete, and a partner must
   * delete its sub-workspaces first: they would be left without anyone to manage them. Partner mode is switched
   * off under the lock that creates take, so no sub-workspace appears between the count and the announcement.
   */
  async deleteOwn(workspaceId: string): Promise<{ id: string }> {
    if (!UUID_PATTERN.test(workspaceId)) throw new ServiceError('NOT_FOUND', 'No such workspace.');
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sub-workspaces:${workspaceId}`]);
      if ((await tx.query('SELECT 1 FROM sub_workspaces WHERE id = $1', [workspaceId])).length > 0) {
        throw new ServiceError('CONFLICT', 'This workspace belongs to a partner, which deletes it through the partner API.');
      }
      const [counted] = (await tx.query('SELECT count(*)::int AS used FROM sub_workspaces WHERE partner_workspace_id = $1', [workspaceId])) as Array<{
        used: number;
      }>;
      // count(*) without GROUP BY answers exactly one row.
      const { used } = counted!;
      if (used > 0) {
        throw new ServiceError('CONFLICT', `The workspace has ${used} sub-workspaces; delete them through the partner API first.`, { sub_workspaces: used });
      }
      await tx.query('DELETE FROM partner_settings WHERE workspace_id = $1', [workspaceId]);
    });
    await this.announceDeletion(workspaceId, null);
    return { id: workspaceId };
  }

  /** Every owner removes its rows on the event (this service's own consumer included); ours go at once as well. */
  private async announceDeletion(workspaceId: string, partnerWorkspaceId: string | null): Promise<void> {
    await publishWorkspaceDeleted(this.nats.connection, { workspaceId, partnerWorkspaceId, deletedAt: new Date().toISOString() });
    await this.purge(workspaceId);
  }

  /** Everything this service holds of a deleted workspace; deleting twice deletes nothing more. */
  async purge(workspaceId: string): Promise<void> {
    if (!UUID_PATTERN.test(workspaceId)) return;
    await this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM embed_sessions WHERE workspace_id = $1', [workspaceId]);
      await tx.query('DELETE FROM sub_workspaces WHERE id = $1', [workspaceId]);
      await tx.query('DELETE FROM partner_settings WHERE workspace_id = $1', [workspaceId]);
    });
  }

  /** The partner's sub-workspace named by `ref`, or 404 for an unknown one and for another partner's. */
  async resolve(manager: EntityManager, partnerWorkspaceId: string, ref: string, forUpdate = false): Promise<SubWorkspaceRow> {
    const parsed = parseRef(ref);
    if (!parsed) throw notFound();
    const lock = forUpdate ? ' FOR UPDATE' : '';
    const [row] = (
      parsed.kind === 'id'
        ? await manager.query(`SELECT ${COLUMNS} FROM sub_workspaces WHERE id = $1 AND partner_workspace_id = $2${lock}`, [parsed.id, partnerWorkspaceId])
        : await manager.query(`SELECT ${COLUMNS} FROM sub_workspaces WHERE external_id = $1 AND partner_workspace_id = $2${lock}`, [
            parsed.externalId,
            partnerWorkspaceId,
          ])
    ) as SubWorkspaceRow[];
    if (!row) throw notFound();
    return row;
  }

  private async findByExternalId(manager: EntityManager, partnerWorkspaceId: string, externalId: string): Promise<SubWorkspaceRow | null> {
    const [row] = (await manager.query(`SELECT ${COLUMNS} FROM sub_workspaces WHERE partner_workspace_id = $1 AND external_id = $2 FOR UPDATE`, [
      partnerWorkspaceId,
      externalId,
    ])) as SubWorkspaceRow[];
    return row ?? null;
  }

  /** `name`, `metadata` and the limits named in the request change; anything absent stays. */
  private async applyUpdate(manager: EntityManager, row: SubWorkspaceRow, fields: SubWorkspaceFields): Promise<SubWorkspaceRow> {
    const limits: Limits = {
      max_decisions: fields.limits && 'max_decisions' in fields.limits ? (fields.limits.max_decisions ?? null) : row.max_decisions,
      monthly_decisions: fields.limits && 'monthly_decisions' in fields.limits ? (fields.limits.monthly_decisions ?? null) : row.monthly_decisions,
    };
    const [updated] = rowsReturned<SubWorkspaceRow>(
      await manager.query(
        `UPDATE sub_workspaces SET name = $2, metadata = $3, max_decisions = $4, monthly_decisions = $5, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
        [row.id, fields.name ?? row.name, JSON.stringify(fields.metadata ?? row.metadata), limits.max_decisions, limits.monthly_decisions],
      ),
    );
    // A delete does not take the partner's lock, so the row read in this transaction may be gone by now.
    if (updated === undefined) throw new Error(`Sub-workspace ${row.id} was deleted while it was being updated.`);
    return updated;
  }

  private async partnerPlan(partnerWorkspaceId: string): Promise<AccountReply['plan']> {
    return (await this.rpc.call(SUBJECTS.billing.account, { workspaceId: partnerWorkspaceId })).plan;
  }

  /** The sub-workspace's plan: the partner's with its overrides, narrowed to its own limits where set (null: the partner's). */
  private async applyLimits(row: SubWorkspaceRow, partnerPlan: AccountReply['plan']): Promise<void> {
    const overrides = subWorkspaceOverrides(partnerPlan, { max_decisions: row.max_decisions, monthly_decisions: row.monthly_decisions });
    await this.rpc.call(SUBJECTS.billing.setPlan, { workspaceId: row.id, plan: partnerPlan.name, overrides });
  }

  async view(row: SubWorkspaceRow): Promise<SubWorkspaceView> {
    const [decisions, account] = await Promise.all([
      this.rpc.call(SUBJECTS.runner.listDecisions, { workspaceId: row.id }),
      this.rpc.call(SUBJECTS.billing.account, { workspaceId: row.id }),
    ]);
    return {
      id: row.id,
      external_id: row.external_id,
      name: row.name,
      metadata: row.metadata,
      limits: { max_decisions: row.max_decisions, monthly_decisions: row.monthly_decisions },
      usage: {
        decisions: decisions.data.length,
        period_used: account.usage.used,
        period_start: account.usage.period_start,
        period_end: account.usage.period_end,
      },
      created_at: row.created_at.toISOString(),
    };
  }
}

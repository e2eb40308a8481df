import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RETENTION_BATCH_MAX, RetentionRequest, SUBJECTS } from '@ds/contracts';
import { deleteInBatches, Logger, onOneReplica, PeriodicJob, PLATFORM, RpcClient } from '@ds/platform';
import { MINUTE_GRAIN, MINUTE_GRAIN_KEPT_MS } from '@ds/decision-schema';
import { DecisionRunnerConfig } from '../config';
import { ROLLUP_TABLES } from '../executions/rollups';

/** Who knows how long each workspace keeps its execution log: the billing ledger, from the plan and the setting. */
export interface RetentionSource {
  retentionDays(workspaceIds: string[]): Promise<Record<string, number>>;
}

export const RETENTION_SOURCE = Symbol('retention-source');

const BILLING_TIMEOUT_MS = 10_000;
/** Executions deleted per statement: short statements, short locks, nothing that nears the statement timeout. */
const DELETE_BATCH = 1_000;
const LOCK_KEY = 'decision-runner:execution-retention';

@Injectable()
export class BillingRetention implements RetentionSource {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  async retentionDays(workspaceIds: string[]): Promise<Record<string, number>> {
    const request: RetentionRequest = { workspaceIds };
    return (await this.rpc.call(SUBJECTS.billing.retention, request, { timeoutMs: BILLING_TIMEOUT_MS })).retentionDays;
  }
}

export interface PurgeReport {
  workspaces: number;
  deleted: number;
  /** Workspaces whose rollups outlived their deletion and went in this round. */
  deletedWorkspaceRollups: number;
}

/**
 * Deletes executions older than their workspace's retention (its setting within the plan's `retention_days`). Workspaces are
 * walked in pages, their retention asked of the billing ledger per page, and each one's old executions
 * deleted in batches. One replica purges at a time (an advisory lock); the others skip the round.
 */
@Injectable()
export class ExecutionRetention {
  private readonly job: PeriodicJob;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(RETENTION_SOURCE) private readonly retention: RetentionSource,
    @Inject(PLATFORM.config) config: DecisionRunnerConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {
    this.job = new PeriodicJob(config.executionPurgeIntervalMs, () => this.purge(), logger, 'execution retention purge failed');
  }

  start(): void {
    this.job.start();
  }

  stop(): Promise<void> {
    return this.job.stop();
  }

  /** One round; answers null when another replica holds the round. */
  purge(now = new Date()): Promise<PurgeReport | null> {
    return onOneReplica(this.db, LOCK_KEY, () => this.purgeAll(now));
  }

  /**
   * The next workspace ids (after `after`, at most RETENTION_BATCH_MAX) with rows in `table`, whose index leads with
   * workspace_id: it skips from one id to the next through the index instead of reading every row.
   */
  private async workspaceIdsIn(table: string, after: string): Promise<string[]> {
    const page = (await this.db.query(
      `WITH RECURSIVE ids AS (
         (SELECT workspace_id FROM ${table} WHERE workspace_id > $1 ORDER BY workspace_id LIMIT 1)
         UNION ALL
         SELECT (SELECT t.workspace_id FROM ${table} t WHERE t.workspace_id > ids.workspace_id ORDER BY t.workspace_id LIMIT 1)
         FROM ids WHERE ids.workspace_id IS NOT NULL
       )
       SELECT workspace_id FROM ids WHERE workspace_id IS NOT NULL LIMIT $2`,
      [after, RETENTION_BATCH_MAX],
    )) as Array<{ workspace_id: string }>;
    return page.map((row) => row.workspace_id);
  }

  private async purgeAll(now: Date): Promise<PurgeReport> {
    const report: PurgeReport = { workspaces: 0, deleted: 0, deletedWorkspaceRollups: 0 };
    let after = '';
    for (;;) {
      const ids = await this.workspaceIdsIn('executions', after);
      const last = ids.at(-1);
      if (last === undefined) break;
      const days = await this.retention.retentionDays(ids);
      for (const workspaceId of ids) {
        const keepDays = days[workspaceId];
        // A workspace the ledger did not answer for keeps everything: deleting on a guess cannot be undone.
        if (keepDays === undefined || !Number.isInteger(keepDays) || keepDays <= 0) continue;
        const deleted = await this.purgeWorkspace(workspaceId, new Date(now.getTime() - keepDays * 86_400_000));
        report.workspaces++;
        report.deleted += deleted;
      }
      after = last;
    }
    await this.purgeMinuteRollups(now);
    // Budgets count one UTC day; a lapsed turn is taken over by the next run anyway, and gone here otherwise.
    await this.db.query(`DELETE FROM lab_budgets WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date`, [now]);
    await this.db.query(`DELETE FROM lab_turns WHERE expires_at < $1`, [now]);
    report.deletedWorkspaceRollups = await this.purgeRollupsOfDeletedWorkspaces();
    if (report.deleted > 0) this.logger.info(report, 'purged executions past their retention');
    if (report.deletedWorkspaceRollups > 0) this.logger.info(report, 'purged the rollups of deleted workspaces');
    return report;
  }

  /**
   * Rollups of workspaces with no decision left, which means deleted ones (a decision goes only with its workspace):
   * a runner of the version before rollup shards deleted only the tables it knew, or a batch of runs committed just
   * after the deletion. Nothing reads them again; they go here. Answers how many workspaces had some.
   */
  private async purgeRollupsOfDeletedWorkspaces(): Promise<number> {
    const deletedWorkspaces = new Set<string>();
    for (const table of ROLLUP_TABLES) {
      let after = '';
      for (;;) {
        const ids = await this.workspaceIdsIn(table, after);
        const last = ids.at(-1);
        if (last === undefined) break;
        const orphans = (await this.db.query(
          `SELECT asked.workspace_id FROM unnest($1::text[]) AS asked (workspace_id)
           WHERE NOT EXISTS (SELECT 1 FROM decisions WHERE decisions.workspace_id = asked.workspace_id)`,
          [ids],
        )) as Array<{ workspace_id: string }>;
        for (const { workspace_id: workspaceId } of orphans) {
          await deleteInBatches(
            this.db,
            `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE workspace_id = $1 LIMIT ${DELETE_BATCH})`,
            [workspaceId],
            DELETE_BATCH,
          );
          deletedWorkspaces.add(workspaceId);
        }
        after = last;
      }
    }
    return deletedWorkspaces.size;
  }

  private async purgeWorkspace(workspaceId: string, cutoff: Date): Promise<number> {
    const deleted = await deleteInBatches(
      this.db,
      `DELETE FROM executions WHERE id IN (
         SELECT id FROM executions WHERE workspace_id = $1 AND created_at < $2 ORDER BY created_at LIMIT ${DELETE_BATCH})`,
      [workspaceId, cutoff],
      DELETE_BATCH,
    );
    // A replay keeps copies of the answers it compared: it goes once it started before the cutoff (its items with it).
    await this.db.query(`DELETE FROM replays WHERE workspace_id = $1 AND created_at < $2 AND status <> 'running'`, [workspaceId, cutoff]);
    // Rollups go with the executions they count: a bucket once all of it is past the cutoff (a straddling one waits a round).
    for (const table of ROLLUP_TABLES) {
      await deleteInBatches(
        this.db,
        `DELETE FROM ${table} WHERE ctid IN (
           SELECT ctid FROM ${table} WHERE workspace_id = $1 AND bucket + grain * interval '1 second' <= $2 LIMIT ${DELETE_BATCH})`,
        [workspaceId, cutoff],
        DELETE_BATCH,
      );
    }
    return deleted;
  }

  /** Minute rollups serve only recent ranges; older ones are read from hour rollups. */
  private async purgeMinuteRollups(now: Date): Promise<void> {
    const cutoff = new Date(now.getTime() - MINUTE_GRAIN_KEPT_MS);
    for (const table of ROLLUP_TABLES) {
      await deleteInBatches(
        this.db,
        `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE grain = $1 AND bucket < $2 LIMIT ${DELETE_BATCH})`,
        [MINUTE_GRAIN, cutoff],
        DELETE_BATCH,
      );
    }
  }
}

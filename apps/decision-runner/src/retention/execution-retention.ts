import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RetentionRequest, SUBJECTS } from '@ds/contracts';
import { Logger, onOneReplica, PeriodicJob, PLATFORM, RpcClient } from '@ds/platform';
import { MINUTE_GRAIN_KEPT_MS } from '@ds/decision-schema';
import { DecisionRunnerConfig } from '../config';
import { ROLLUP_TABLES } from '../executions/rollups';
import { RetentionStore } from './retention.store';

/** Who knows how long each workspace keeps its execution log: the billing ledger, from the plan and the setting. */
export interface RetentionSource {
  retentionDays(workspaceIds: string[]): Promise<Record<string, number>>;
}

export const RETENTION_SOURCE = Symbol('retention-source');

const BILLING_TIMEOUT_MS = 10_000;
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
  private readonly store: RetentionStore;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(RETENTION_SOURCE) private readonly retention: RetentionSource,
    @Inject(PLATFORM.config) config: DecisionRunnerConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {
    this.store = new RetentionStore(db);
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

  private async purgeAll(now: Date): Promise<PurgeReport> {
    const report: PurgeReport = { workspaces: 0, deleted: 0, deletedWorkspaceRollups: 0 };
    let after = '';
    for (;;) {
      const ids = await this.store.workspaceIdsIn('executions', after);
      const last = ids.at(-1);
      if (last === undefined) break;
      const days = await this.retention.retentionDays(ids);
      for (const workspaceId of ids) {
        const keepDays = days[workspaceId];
        // A workspace the ledger did not answer for keeps everything: deleting on a guess cannot be undone.
        if (keepDays === undefined || !Number.isInteger(keepDays) || keepDays <= 0) continue;
        const deleted = await this.store.purgeWorkspace(workspaceId, new Date(now.getTime() - keepDays * 86_400_000));
        report.workspaces++;
        report.deleted += deleted;
      }
      after = last;
    }
    await this.purgeMinuteRollups(now);
    // Budgets count one UTC day; a lapsed turn is taken over by the next run anyway, and gone here otherwise.
    await this.store.purgeLabLimits(now);
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
        const ids = await this.store.workspaceIdsIn(table, after);
        const last = ids.at(-1);
        if (last === undefined) break;
        for (const workspaceId of await this.store.withoutDecisions(ids)) {
          await this.store.purgeWorkspaceRows(table, workspaceId);
          deletedWorkspaces.add(workspaceId);
        }
        after = last;
      }
    }
    return deletedWorkspaces.size;
  }

  /** Minute rollups serve only recent ranges; older ones are read from hour rollups. */
  private async purgeMinuteRollups(now: Date): Promise<void> {
    await this.store.purgeMinuteRollups(new Date(now.getTime() - MINUTE_GRAIN_KEPT_MS));
  }
}

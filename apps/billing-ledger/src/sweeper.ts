import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { Lease } from '@ds/billing';
import { ExecutionOutcomesReply, ExecutionOutcomesRequest, LeaseExecutionsRequest, ServiceError, SUBJECTS } from '@ds/contracts';
import { looksLikeId } from '@ds/ids';
import { Logger, Metrics, PeriodicJob, PLATFORM, RpcClient } from '@ds/platform';
import { BillingConfig } from './config';
import { CreditsService } from './credits.service';
import { LeasesService } from './leases.service';
import { LedgerStore } from './ledger.store';
import { ReservationsService } from './reservations.service';

export type Outcomes = ExecutionOutcomesReply['outcomes'];

/** Who knows whether an execution was answered with a fresh 200: the runner, which recorded it. */
export interface ExecutionOutcomes {
  outcomes(workspaceId: string, executionIds: string[]): Promise<OutcomesWithDecisions>;
  /** The billable executions recorded between `from` and `to` that took a unit of the lease. */
  leaseExecutions(workspaceId: string, leaseId: string, from: Date, to: Date): Promise<LeaseExecutions>;
}

/** The runner's answers, with the decision of each execution it recorded (absent from a runner that does not say). */
export interface OutcomesWithDecisions {
  outcomes: Outcomes;
  decisions?: Record<string, string>;
}

export interface LeaseExecutions {
  billable: string[];
  decisions?: Record<string, string>;
}

export const EXECUTION_OUTCOMES = Symbol('execution-outcomes');

const RUNNER_TIMEOUT_MS = 5_000;
const CLAIM_BATCH = 500;
/** A replica that dies mid-sweep leaves its claims; another takes them over after this long. */
const CLAIM_LEASE_MS = 60_000;
/** How far two hosts' clocks may disagree about when a leased run was recorded. */
const CLOCK_SKEW_MS = 60_000;

@Injectable()
export class RunnerOutcomes implements ExecutionOutcomes {
  constructor(@Inject(PLATFORM.rpc) private readonly rpc: RpcClient) {}

  async outcomes(workspaceId: string, executionIds: string[]): Promise<OutcomesWithDecisions> {
    const request: ExecutionOutcomesRequest = { workspaceId, executionIds };
    return this.rpc.call(SUBJECTS.runner.executionOutcomes, request, { timeoutMs: RUNNER_TIMEOUT_MS });
  }

  async leaseExecutions(workspaceId: string, leaseId: string, from: Date, to: Date): Promise<LeaseExecutions> {
    const request: LeaseExecutionsRequest = { workspaceId, leaseId, from: from.toISOString(), to: to.toISOString() };
    return this.rpc.call(SUBJECTS.runner.leaseExecutions, request, { timeoutMs: RUNNER_TIMEOUT_MS });
  }
}

export interface SweepReport {
  committed: number;
  released: number;
  left: number;
  expiredGrants: number;
  leasesReclaimed: number;
  leasesClosed: number;
}

/**
 * Settles reservations nobody settled (the runner died between its answer and the settle, or the settle was
 * lost): it asks the runner what became of each execution, commits `billable` and releases `not_billable` and
 * `unknown` (no execution recorded, so no client got a 200). Claims are taken with SKIP LOCKED, so replicas share
 * the work, and settling is idempotent, so a claim taken twice still bills once. It also expires promotional
 * credits.
 */
@Injectable()
export class Sweeper {
  private readonly job: PeriodicJob;
  private readonly settled: Counter<'outcome'>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly reservations: ReservationsService,
    private readonly credits: CreditsService,
    @Inject(EXECUTION_OUTCOMES) private readonly runner: ExecutionOutcomes,
    @Inject(PLATFORM.config) private readonly config: BillingConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Inject(PLATFORM.metrics) metrics: Metrics,
    // Named: a `T | null` parameter's design type is Object, which Nest would resolve to nothing.
    @Optional() @Inject(LeasesService) private readonly leases: LeasesService | null = null,
  ) {
    this.settled = new Counter({
      name: 'decision_service_billing_sweeper_settled_total',
      help: 'Reservations settled by the sweeper instead of the runner, by what the runner said of the execution',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
    this.job = new PeriodicJob(config.sweepIntervalMs, () => this.sweep(), logger, 'billing sweep failed');
  }

  start(): void {
    this.job.start();
  }

  stop(): Promise<void> {
    return this.job.stop();
  }

  async sweep(now = new Date()): Promise<SweepReport> {
    const report: SweepReport = { committed: 0, released: 0, left: 0, expiredGrants: 0, leasesReclaimed: 0, leasesClosed: 0 };
    const claimed = await this.claim();
    for (const [workspaceId, executionIds] of claimed) await this.settleWorkspace(workspaceId, executionIds, report);
    report.expiredGrants = await this.credits.expireDue(new Date());
    if (this.leases?.enabled) {
      const leases = await this.leases.sweep(now, (lease) => this.settleLostLeaseRuns(lease));
      report.leasesReclaimed = leases.reclaimed;
      report.leasesClosed = leases.closed;
    }
    if (report.committed + report.released + report.left + report.expiredGrants + report.leasesReclaimed + report.leasesClosed > 0)
      this.logger.info(report, 'billing sweep');
    return report;
  }

  /**
   * A runner that died between recording a leased run and publishing its settlement left the run billed nowhere
   * but in its execution: before the lease is closed, the runner is asked for the lease's billable executions and
   * each is settled against the lease (a repeat of a settlement that did arrive changes nothing). The window runs
   * from the grant to the longest a run may last after the lease's time, widened for the clocks of two hosts.
   */
  private async settleLostLeaseRuns(lease: Lease): Promise<boolean> {
    const from = new Date(lease.grantedAt.getTime() - CLOCK_SKEW_MS);
    const to = new Date(lease.takesUntil.getTime() + this.config.settleAfterMs + CLOCK_SKEW_MS);
    let billable: string[];
    let decisions: Record<string, string>;
    try {
      ({ billable, decisions = {} } = await this.runner.leaseExecutions(lease.workspaceId, lease.id, from, to));
    } catch (error) {
      this.logger.warn({ err: error, leaseId: lease.id }, 'the runner did not say which runs a lease paid for; closing it on the next sweep');
      return false;
    }
    if (billable.length === 0) return true;
    const outcomes = await this.reservations.settleBatch(
      billable.map((executionId) => ({
        workspaceId: lease.workspaceId,
        executionId,
        billable: true,
        leaseId: lease.id,
        ...decisionOf(decisions, executionId),
      })),
      'sweeper',
    );
    const refused = outcomes.filter((outcome) => outcome instanceof ServiceError);
    if (refused.length > 0) this.logger.error({ leaseId: lease.id, refused: refused.length }, 'could not bill runs of a lease whose settlement was lost');
    this.settled.inc({ outcome: 'billable' }, billable.length - refused.length);
    return true;
  }

  private async claim(): Promise<Map<string, string[]>> {
    const rows = await new LedgerStore(this.db.manager).claimUnsettled(this.config.settleAfterMs, CLAIM_BATCH, CLAIM_LEASE_MS);
    const byWorkspace = new Map<string, string[]>();
    for (const row of rows) byWorkspace.set(row.workspace_id, [...(byWorkspace.get(row.workspace_id) ?? []), row.execution_id]);
    return byWorkspace;
  }

  private async settleWorkspace(workspaceId: string, executionIds: string[], report: SweepReport): Promise<void> {
    let outcomes: Outcomes;
    let decisions: Record<string, string>;
    try {
      ({ outcomes, decisions = {} } = await this.runner.outcomes(workspaceId, executionIds));
    } catch (error) {
      this.logger.warn(
        { err: error, workspaceId, count: executionIds.length },
        'the runner did not say what became of unsettled executions; retrying on the next sweep',
      );
      await this.unclaim(executionIds);
      report.left += executionIds.length;
      return;
    }
    const unanswered: string[] = [];
    for (const executionId of executionIds) {
      const outcome = outcomes[executionId];
      if (outcome !== 'billable' && outcome !== 'not_billable' && outcome !== 'unknown') {
        unanswered.push(executionId);
        continue;
      }
      try {
        const { state } = await this.reservations.settle(
          { workspaceId, executionId, billable: outcome === 'billable', ...decisionOf(decisions, executionId) },
          'sweeper',
        );
        report[state]++;
        this.settled.inc({ outcome });
        this.logger.info({ workspaceId, executionId, outcome, reservationState: state }, 'settled an unsettled reservation');
      } catch (error) {
        this.logger.error({ err: error, workspaceId, executionId, outcome }, 'could not settle an unsettled reservation');
        unanswered.push(executionId);
      }
    }
    await this.unclaim(unanswered);
    report.left += unanswered.length;
  }

  private async unclaim(executionIds: string[]): Promise<void> {
    await new LedgerStore(this.db.manager).unclaimUnsettled(executionIds);
  }
}

/** The decision the runner named for the execution, when it named a well-formed one: a settlement is never refused for it. */
function decisionOf(decisions: Record<string, string>, executionId: string): { decisionId?: string } {
  const decisionId = Object.hasOwn(decisions, executionId) ? decisions[executionId] : undefined;
  return looksLikeId('dec', decisionId) ? { decisionId } : {};
}

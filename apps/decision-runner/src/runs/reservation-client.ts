import { Inject, Injectable, Optional } from '@nestjs/common';
import { JetStreamClient } from 'nats';
import { BillingSettlement, BillingSettlementBatch, SETTLEMENT_STREAM, SUBJECTS } from '@ds/contracts';
import { GroupCommit, Logger, PLATFORM, publishTraced, RpcClient } from '@ds/platform';
import { RUNNER_JETSTREAM } from './jetstream';

import { LEASE_TAKER, LeaseTaker } from './lease-taker';

/** Settlements one message carries at most: well inside NATS's 1 MB, and one ledger transaction's worth. */
const SETTLEMENTS_PER_MESSAGE = 256;

/**
 * The runner's side of billing. Step 6 reserves one decision for the execution (or answers the 402); once the
 * execution is recorded the reservation is settled: committed for a fresh 200, released otherwise.
 *
 * A commit is an event on the SETTLEMENTS stream, not a request: the run waits only for JetStream to store it
 * (so that `/v1/me` right after the answer can count it), never for the ledger, which posts settlements in
 * batches. A held decision counts as used until it is posted, which is right for a commit: the decision is
 * billed either way. A release is different: until it is applied, the decision it frees is still counted, and a
 * run that follows at once at a quota, credit or spend-cap edge would be refused although nothing was billed.
 * So a release is asked of the ledger directly and applied before the run answers; releases are the rare case
 * (an error, an engine-error fallback), so the batching still carries the common one. A release the ledger
 * cannot be reached for goes on the stream like a commit.
 *
 * With a lease counter (REDIS_URL), step 6 first takes a unit of the workspace's budget lease (LeaseTaker): the
 * settlement then names the lease, a commit is posted against it, and an unbilled unit is handed back to the
 * counter at once (or, when the lease no longer gives units, freed by the ledger as above).
 *
 * Settling an execution twice changes nothing, so a message stored twice bills nothing twice. A settlement that
 * cannot be published is made good by the ledger's sweeper, which asks the runner for the execution's outcome
 * (or, for a leased run, for the lease's billable executions before the lease closes). A
 * settlement is sent even after the caller stopped waiting: that is when a reservation most needs releasing.
 */
@Injectable()
export class ReservationClient {
  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(RUNNER_JETSTREAM) private readonly jetstream: JetStreamClient,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    @Optional() @Inject(LEASE_TAKER) private readonly leases: LeaseTaker | null = null,
  ) {}

  /**
   * Settlements published together: those arriving while a publish is in flight go in the next message, so
   * under load one JetStream write and one acknowledgement carry many runs, and a lone run is not delayed.
   */
  private readonly published = new GroupCommit<BillingSettlement>(
    async (settlements) => {
      const batch: BillingSettlementBatch = { settlements: [...settlements] };
      await publishTraced(this.jetstream, SETTLEMENT_STREAM.name, SETTLEMENT_STREAM.batchSubject, JSON.stringify(batch), {});
    },
    { maxBatch: SETTLEMENTS_PER_MESSAGE },
  );

  /** Step 6; answers the lease the decision was taken from, or null when it was reserved on its own. */
  async reserve(workspaceId: string, executionId: string): Promise<string | null> {
    const leaseId = (await this.leases?.take(workspaceId)) ?? null;
    if (leaseId !== null) return leaseId;
    await this.rpc.call(SUBJECTS.billing.reserve, { workspaceId, executionId });
    return null;
  }

  /** `decisionId` rides along so that the ledger books the billed decision under it (usage per decision). */
  async settle(workspaceId: string, executionId: string, decisionId: string, billable: boolean, leaseId: string | null = null): Promise<void> {
    if (!billable && leaseId !== null && (await this.leases?.handBack(workspaceId, leaseId))) return;
    const settlement: BillingSettlement =
      leaseId === null ? { workspaceId, executionId, decisionId, billable } : { workspaceId, executionId, decisionId, billable, leaseId };
    if (!billable) {
      try {
        await this.rpc.call(SUBJECTS.billing.settle, settlement);
        return;
      } catch (error) {
        this.logger.warn({ err: error, executionId }, 'could not release the reservation at once; publishing the release instead');
      }
    }
    try {
      await this.published.add(settlement);
    } catch (error) {
      this.logger.warn({ err: error, executionId, billable }, 'could not publish the settlement; the ledger will settle it from the execution');
    }
  }
}

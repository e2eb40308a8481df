import { Inject, Injectable } from '@nestjs/common';
import { BillingReserveReply, BillingSettleReply, SUBJECTS } from '@ds/contracts';
import { Logger, PLATFORM, RpcClient } from '@ds/platform';

/**
 * The runner's side of billing. Step 6 reserves one decision for the execution (or answers the 402);
 * once the execution is recorded the reservation is settled: committed for a fresh 200, released
 * otherwise. A settle that does not arrive is made good by the ledger, which asks the runner for the
 * execution's outcome, so the run never waits on billing after its answer is known. A settle is sent even
 * after the caller stopped waiting: that is when a reservation most needs releasing.
 */
@Injectable()
export class Billing {
  constructor(
    @Inject(PLATFORM.rpc) private readonly rpc: RpcClient,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  async reserve(workspaceId: string, executionId: string): Promise<void> {
    await this.rpc.call<BillingReserveReply>(SUBJECTS.billing.reserve, { workspaceId, executionId });
  }

  async settle(workspaceId: string, executionId: string, billable: boolean): Promise<void> {
    try {
      await this.rpc.call<BillingSettleReply>(SUBJECTS.billing.settle, { workspaceId, executionId, billable }, { outlivesCaller: true });
    } catch (error) {
      this.logger.warn({ err: error, executionId, billable }, 'could not settle billing now; the ledger will settle it from the execution');
    }
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { BillingReserveReply, BillingReserveRequest, BillingSettleReply, BillingSettleRequest, ServiceError } from '@ds/contracts';
import { consumptionOrder, currentPeriod, decideReservation, holdTransfers, paidBy, periodAccounts, settlementTransfers } from '@ds/billing';
import { PLATFORM } from '@ds/platform';
import { BillingConfig } from './config';
import { ReservationEntity } from './entities';
import { LedgerStore } from './ledger.store';
import { effectivePlan } from './plans';
import { checkIds } from './requests';

@Injectable()
export class ReservationsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PLATFORM.config) private readonly config: BillingConfig,
  ) {}

  /**
   * Step 6: under the workspace's lock, checks in the spec's order and holds one decision's worth. Asked again for
   * the same execution it holds nothing more: a pending or committed reservation answers reserved, a released one
   * is a CONFLICT (the run was already given up, and going ahead could only give it away).
   */
  async reserve(request: BillingReserveRequest): Promise<BillingReserveReply> {
    checkIds({ workspaceId: request.workspaceId, executionId: request.executionId });
    const now = new Date();
    return this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      const account = await ledger.lockAccount(request.workspaceId, now);
      const period = currentPeriod(account.periodAnchor, now);
      // Written first, so that it doubles as the duplicate check; a refusal rolls it back.
      const existing = await claimReservation(manager, { executionId: request.executionId, workspaceId: request.workspaceId, state: 'pending', periodStart: period.start });
      if (existing) return reserveAgain(existing, request.workspaceId);

      const plan = effectivePlan(account.plan, account.overrides);
      const accounts = periodAccounts(request.workspaceId, account.currency, period.start);
      const view = await ledger.periodView(accounts, request.workspaceId, account.currency);
      const verdict = decideReservation({
        plan,
        includedUsed: Number(view.includedVolume.debitsPosted + view.includedVolume.debitsPending),
        overageUsed: Number(view.overageVolume.debitsPosted + view.overageVolume.debitsPending),
        sources: consumptionOrder(view.sources, now),
        spentMicros: view.spend.creditsPosted + view.spend.creditsPending,
        spendCapCents: account.spendCapCents,
        currency: account.currency,
        periodEnd: period.end,
        billingUrl: this.config.billingUrl,
        upgradeUrl: this.config.upgradeUrl,
      });
      if (verdict.kind === 'refused') throw new ServiceError(verdict.code, verdict.message, verdict.details);

      await ledger.ensureLedgerAccounts(view.missing);
      await ledger.post(holdTransfers(request.executionId, request.workspaceId, account.currency, verdict, accounts));
      return { reserved: true };
    });
  }

  /**
   * Commits (billable) or releases the execution's holds, once. The same outcome again answers the same state;
   * the other outcome is a CONFLICT. Releasing an execution that holds nothing answers released.
   */
  async settle(request: BillingSettleRequest, settledBy: 'runner' | 'sweeper' = 'runner'): Promise<BillingSettleReply> {
    checkIds({ workspaceId: request.workspaceId, executionId: request.executionId });
    if (typeof request.billable !== 'boolean') throw new ServiceError('INVALID_REQUEST', 'The billing request is not valid.', [{ path: 'billable', message: 'must be a boolean' }]);
    const target = request.billable ? 'committed' : 'released';
    return this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      await ledger.lockExistingAccount(request.workspaceId);
      const reservations = manager.getRepository(ReservationEntity);
      const reservation = await reservations.findOneBy({ executionId: request.executionId });
      if (!reservation) {
        if (!request.billable) return { state: 'released' };
        throw new ServiceError('NOT_FOUND', `No reservation exists for execution ${request.executionId}.`);
      }
      if (reservation.workspaceId !== request.workspaceId) throw new ServiceError('CONFLICT', `Execution ${request.executionId} belongs to another workspace.`);
      const { holds, charged } = await ledger.holdsOf(request.executionId);
      if (reservation.state === 'pending') {
        await ledger.post(settlementTransfers(holds, request.billable));
        await reservations.update({ executionId: request.executionId }, { state: target, settledAt: new Date(), settledBy, sweepClaimedUntil: null });
      } else if (reservation.state !== target) {
        throw new ServiceError('CONFLICT', `Execution ${request.executionId} was already ${reservation.state}.`);
      }
      if (target === 'released') return { state: target };
      return { state: target, paid_by: paidBy(holds, charged) };
    });
  }
}

function reserveAgain(existing: ReservationEntity, workspaceId: string): BillingReserveReply {
  if (existing.workspaceId !== workspaceId) throw new ServiceError('CONFLICT', `Execution ${existing.executionId} belongs to another workspace.`);
  if (existing.state === 'released') throw new ServiceError('CONFLICT', `The reservation of execution ${existing.executionId} was already released.`);
  return { reserved: true };
}

/** Inserts the reservation unless one exists for the execution id, which it then answers. */
async function claimReservation(
  manager: EntityManager,
  reservation: Pick<ReservationEntity, 'executionId' | 'workspaceId' | 'state' | 'periodStart'>,
): Promise<ReservationEntity | null> {
  const inserted = await manager.createQueryBuilder().insert().into(ReservationEntity).values(reservation).orIgnore().returning(['execution_id']).execute();
  if (inserted.raw.length > 0) return null;
  return manager.getRepository(ReservationEntity).findOneByOrFail({ executionId: reservation.executionId });
}

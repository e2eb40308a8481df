import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AccountReply, PlanName, ServiceError, SetPlanRequest } from '@ds/contracts';
import { AccountEntity } from './entities';
import { checkOverrides, effectivePlan, PLAN_NAMES, PlanOverrides } from './plans';

@Injectable()
export class AccountsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A workspace the ledger has not seen yet starts on the free plan, with its period anchored now. */
  async account(workspaceId: string): Promise<AccountReply> {
    const account = await this.ensure(workspaceId);
    const plan = effectivePlan(account.plan, account.overrides);
    const period = currentPeriod(account.periodAnchor, new Date());
    return {
      plan,
      usage: { period_start: period.start.toISOString(), period_end: period.end.toISOString(), used: 0, included: plan.included_decisions },
    };
  }

  async setPlan(request: SetPlanRequest): Promise<AccountReply> {
    if (typeof request.plan !== 'string' || !PLAN_NAMES.includes(request.plan as PlanName)) {
      throw new ServiceError('INVALID_REQUEST', `plan must be one of ${PLAN_NAMES.join(', ')}.`, [{ path: 'plan', message: 'unknown plan' }]);
    }
    const issues = checkOverrides(request.overrides);
    if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The plan overrides are not valid.', issues);
    await this.ensure(request.workspaceId);
    await this.db.getRepository(AccountEntity).update(
      { workspaceId: request.workspaceId },
      { plan: request.plan as PlanName, overrides: (request.overrides ?? {}) as PlanOverrides },
    );
    return this.account(request.workspaceId);
  }

  private async ensure(workspaceId: string): Promise<AccountEntity> {
    const repository = this.db.getRepository(AccountEntity);
    const existing = await repository.findOneBy({ workspaceId });
    if (existing) return existing;
    await repository
      .createQueryBuilder()
      .insert()
      .values({ workspaceId, plan: 'genesis', overrides: {}, periodAnchor: new Date() })
      .orIgnore()
      .execute();
    return repository.findOneByOrFail({ workspaceId });
  }
}

/** Monthly periods counted from the anchor's day and time, clamped to short months. */
export function currentPeriod(anchor: Date, now: Date): { start: Date; end: Date } {
  let months = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  let start = addMonths(anchor, months);
  if (start > now) start = addMonths(anchor, --months);
  return { start, end: addMonths(anchor, months + 1) };
}

function addMonths(anchor: Date, months: number): Date {
  const target = new Date(anchor);
  const day = anchor.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}

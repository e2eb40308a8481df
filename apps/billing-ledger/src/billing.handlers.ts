import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  BillingReserveRequest,
  BillingSettleRequest,
  GrantCreditsRequest,
  GrantLeaseRequest,
  RetentionRequest,
  SetExecutionRetentionRequest,
  SetPlanRequest,
  SetSpendCapRequest,
  SUBJECTS,
  WorkspaceScoped,
} from '@ds/contracts';
import { AccountsService } from './accounts.service';
import { CreditsService } from './credits.service';
import { LeasesService } from './leases.service';
import { ReservationsService } from './reservations.service';

@Controller()
export class BillingHandlers {
  constructor(
    private readonly accounts: AccountsService,
    private readonly credits: CreditsService,
    private readonly reservations: ReservationsService,
    private readonly leases: LeasesService,
  ) {}

  @MessagePattern(SUBJECTS.billing.reserve)
  reserve(@Payload() request: BillingReserveRequest) {
    return this.reservations.reserve(request);
  }

  @MessagePattern(SUBJECTS.billing.settle)
  settle(@Payload() request: BillingSettleRequest) {
    return this.reservations.settle(request);
  }

  @MessagePattern(SUBJECTS.billing.grantLease)
  grantLease(@Payload() request: GrantLeaseRequest) {
    return this.leases.grant(request);
  }

  @MessagePattern(SUBJECTS.billing.account)
  account(@Payload() request: WorkspaceScoped) {
    return this.accounts.account(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.billing.usageByDay)
  usageByDay(@Payload() request: WorkspaceScoped) {
    return this.accounts.usageByDay(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.billing.setPlan)
  setPlan(@Payload() request: SetPlanRequest) {
    return this.accounts.setPlan(request);
  }

  @MessagePattern(SUBJECTS.billing.grantCredits)
  grantCredits(@Payload() request: GrantCreditsRequest) {
    return this.credits.grant(request);
  }

  @MessagePattern(SUBJECTS.billing.retention)
  retention(@Payload() request: RetentionRequest) {
    return this.accounts.retention(request);
  }

  @MessagePattern(SUBJECTS.billing.getExecutionRetention)
  executionRetention(@Payload() request: WorkspaceScoped) {
    return this.accounts.executionRetention(request);
  }

  @MessagePattern(SUBJECTS.billing.setExecutionRetention)
  setExecutionRetention(@Payload() request: SetExecutionRetentionRequest) {
    return this.accounts.setExecutionRetention(request);
  }

  @MessagePattern(SUBJECTS.billing.setSpendCap)
  setSpendCap(@Payload() request: SetSpendCapRequest) {
    return this.accounts.setSpendCap(request);
  }
}

import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { SetPlanRequest, SUBJECTS, WorkspaceScoped } from '@ds/contracts';
import { AccountsService } from './accounts.service';

@Controller()
export class BillingHandlers {
  constructor(private readonly accounts: AccountsService) {}

  @MessagePattern(SUBJECTS.billing.account)
  account(@Payload() request: WorkspaceScoped) {
    return this.accounts.account(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.billing.setPlan)
  setPlan(@Payload() request: SetPlanRequest) {
    return this.accounts.setPlan(request);
  }
}

import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DecisionRef, ResolveHookRequest, SUBJECTS } from '@ds/contracts';
import { HooksService } from './hooks.service';

@Controller()
export class HooksHandlers {
  constructor(private readonly hooks: HooksService) {}

  @MessagePattern(SUBJECTS.runner.resolveHook)
  resolve(@Payload() request: ResolveHookRequest) {
    return this.hooks.resolve(request.tokenHash);
  }

  @MessagePattern(SUBJECTS.runner.hookState)
  state(@Payload() request: DecisionRef) {
    return this.hooks.state(request);
  }

  @MessagePattern(SUBJECTS.runner.enableHook)
  enable(@Payload() request: DecisionRef) {
    return this.hooks.enable(request);
  }

  @MessagePattern(SUBJECTS.runner.disableHook)
  disable(@Payload() request: DecisionRef) {
    return this.hooks.disable(request);
  }

  @MessagePattern(SUBJECTS.runner.rotateHook)
  rotate(@Payload() request: DecisionRef) {
    return this.hooks.rotate(request);
  }

  @MessagePattern(SUBJECTS.runner.createHookSecret)
  createSecret(@Payload() request: DecisionRef) {
    return this.hooks.createSecret(request);
  }

  @MessagePattern(SUBJECTS.runner.deleteHookSecret)
  deleteSecret(@Payload() request: DecisionRef) {
    return this.hooks.deleteSecret(request);
  }
}

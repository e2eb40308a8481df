import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DecisionRef, PromoteShadowRequest, StartShadowRequest, SUBJECTS } from '@ds/contracts';
import { ShadowService } from './shadow.service';

@Controller()
export class ShadowHandlers {
  constructor(private readonly shadows: ShadowService) {}

  @MessagePattern(SUBJECTS.runner.getShadow)
  get(@Payload() request: DecisionRef) {
    return this.shadows.get(request);
  }

  @MessagePattern(SUBJECTS.runner.startShadow)
  start(@Payload() request: StartShadowRequest) {
    return this.shadows.start(request);
  }

  @MessagePattern(SUBJECTS.runner.promoteShadow)
  promote(@Payload() request: PromoteShadowRequest) {
    return this.shadows.promote(request);
  }

  @MessagePattern(SUBJECTS.runner.stopShadow)
  stop(@Payload() request: DecisionRef) {
    return this.shadows.stop(request);
  }
}

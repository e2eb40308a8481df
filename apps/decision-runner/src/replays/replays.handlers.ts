import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DecisionRef, ReplayEligibleRequest, ReplayExecutionsRequest, ReplayRef, StartReplayRequest, SUBJECTS } from '@ds/contracts';
import { ReplaysService } from './replays.service';

@Controller()
export class ReplaysHandlers {
  constructor(private readonly replays: ReplaysService) {}

  @MessagePattern(SUBJECTS.runner.startReplay)
  start(@Payload() request: StartReplayRequest) {
    return this.replays.start(request);
  }

  @MessagePattern(SUBJECTS.runner.listReplays)
  list(@Payload() request: DecisionRef) {
    return this.replays.list(request);
  }

  @MessagePattern(SUBJECTS.runner.getReplay)
  get(@Payload() request: ReplayRef) {
    return this.replays.get(request);
  }

  @MessagePattern(SUBJECTS.runner.replayExecutions)
  executions(@Payload() request: ReplayExecutionsRequest) {
    return this.replays.executions(request);
  }

  @MessagePattern(SUBJECTS.runner.replayEligible)
  eligible(@Payload() request: ReplayEligibleRequest) {
    return this.replays.eligible(request);
  }

  @MessagePattern(SUBJECTS.runner.cancelReplay)
  cancel(@Payload() request: ReplayRef) {
    return this.replays.cancel(request);
  }
}

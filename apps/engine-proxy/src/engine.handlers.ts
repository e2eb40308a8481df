import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { AnswerQuestionsRequest, SUBJECTS } from '@ds/contracts';
import { EngineService } from './engine.service';

@Controller()
export class EngineHandlers {
  constructor(private readonly engine: EngineService) {}

  @MessagePattern(SUBJECTS.engine.answer)
  answer(@Payload() request: AnswerQuestionsRequest) {
    return this.engine.answer(request);
  }
}

import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  AnswerQuestionsRequest,
  CompleteTextRequest,
  SetEngineSettingsRequest,
  SetProviderKeyRequest,
  SUBJECTS,
  TestProviderKeyRequest,
  WorkspaceScoped,
} from '@ds/contracts';
import { CredentialsService } from './credentials/credentials.service';
import { EngineService } from './engine.service';

@Controller()
export class EngineHandlers {
  constructor(
    private readonly engine: EngineService,
    private readonly credentials: CredentialsService,
  ) {}

  @MessagePattern(SUBJECTS.engine.answer)
  answer(@Payload() request: AnswerQuestionsRequest) {
    return this.engine.answer(request);
  }

  @MessagePattern(SUBJECTS.engine.complete)
  complete(@Payload() request: CompleteTextRequest) {
    return this.engine.complete(request);
  }

  @MessagePattern(SUBJECTS.engine.setProviderKey)
  setProviderKey(@Payload() request: SetProviderKeyRequest) {
    return this.credentials.setKey(request);
  }

  @MessagePattern(SUBJECTS.engine.getProviderKey)
  getProviderKey(@Payload() request: WorkspaceScoped) {
    return this.credentials.getKey(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.engine.deleteProviderKey)
  deleteProviderKey(@Payload() request: WorkspaceScoped) {
    return this.credentials.deleteKey(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.engine.testProviderKey)
  testProviderKey(@Payload() request: TestProviderKeyRequest) {
    return this.engine.testKey(request);
  }

  @MessagePattern(SUBJECTS.engine.getSettings)
  getSettings(@Payload() request: WorkspaceScoped) {
    return this.credentials.settings(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.engine.setSettings)
  setSettings(@Payload() request: SetEngineSettingsRequest) {
    return this.credentials.setSettings(request);
  }
}

import { SUBJECTS } from '@ds/contracts';
import { subjectHandlers } from '@ds/platform';
import { CredentialsService } from './credentials/credentials.service';
import { EngineService } from './engine.service';

export const EngineHandlers = subjectHandlers('EngineHandlers', { engine: EngineService, credentials: CredentialsService }, (on) => [
  on(SUBJECTS.engine.answer, ({ engine }, request) => engine.answer(request)),
  on(SUBJECTS.engine.complete, ({ engine }, request) => engine.complete(request)),
  on(SUBJECTS.engine.setProviderKey, ({ credentials }, request) => credentials.setKey(request)),
  on(SUBJECTS.engine.getProviderKey, ({ credentials }, request) => credentials.getKey(request.workspaceId)),
  on(SUBJECTS.engine.deleteProviderKey, ({ credentials }, request) => credentials.deleteKey(request.workspaceId)),
  on(SUBJECTS.engine.testProviderKey, ({ engine }, request) => engine.testKey(request)),
  on(SUBJECTS.engine.getSettings, ({ credentials }, request) => credentials.settings(request.workspaceId)),
  on(SUBJECTS.engine.setSettings, ({ credentials }, request) => credentials.setSettings(request)),
]);

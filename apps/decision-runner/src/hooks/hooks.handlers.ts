import { SUBJECTS } from '@ds/contracts';
import { subjectHandlers } from '@ds/platform';
import { HooksService } from './hooks.service';

export const HooksHandlers = subjectHandlers('HooksHandlers', { hooks: HooksService }, (on) => [
  on(SUBJECTS.runner.resolveHook, ({ hooks }, request) => hooks.resolve(request.tokenHash)),
  on(SUBJECTS.runner.hookState, ({ hooks }, request) => hooks.state(request)),
  on(SUBJECTS.runner.enableHook, ({ hooks }, request) => hooks.enable(request)),
  on(SUBJECTS.runner.disableHook, ({ hooks }, request) => hooks.disable(request)),
  on(SUBJECTS.runner.rotateHook, ({ hooks }, request) => hooks.rotate(request)),
  on(SUBJECTS.runner.createHookSecret, ({ hooks }, request) => hooks.createSecret(request)),
  on(SUBJECTS.runner.deleteHookSecret, ({ hooks }, request) => hooks.deleteSecret(request)),
]);

import { SUBJECTS } from '@ds/contracts';
import { subjectHandlers } from '@ds/platform';
import { ShadowService } from './shadow.service';

export const ShadowHandlers = subjectHandlers('ShadowHandlers', { shadows: ShadowService }, (on) => [
  on(SUBJECTS.runner.getShadow, ({ shadows }, request) => shadows.get(request)),
  on(SUBJECTS.runner.startShadow, ({ shadows }, request) => shadows.start(request)),
  on(SUBJECTS.runner.promoteShadow, ({ shadows }, request) => shadows.promote(request)),
  on(SUBJECTS.runner.stopShadow, ({ shadows }, request) => shadows.stop(request)),
]);

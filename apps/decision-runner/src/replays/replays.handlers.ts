import { SUBJECTS } from '@ds/contracts';
import { subjectHandlers } from '@ds/platform';
import { ReplaysService } from './replays.service';

export const ReplaysHandlers = subjectHandlers('ReplaysHandlers', { replays: ReplaysService }, (on) => [
  on(SUBJECTS.runner.startReplay, ({ replays }, request) => replays.start(request)),
  on(SUBJECTS.runner.listReplays, ({ replays }, request) => replays.list(request)),
  on(SUBJECTS.runner.getReplay, ({ replays }, request) => replays.get(request)),
  on(SUBJECTS.runner.replayExecutions, ({ replays }, request) => replays.executions(request)),
  on(SUBJECTS.runner.replayEligible, ({ replays }, request) => replays.eligible(request)),
  on(SUBJECTS.runner.cancelReplay, ({ replays }, request) => replays.cancel(request)),
]);

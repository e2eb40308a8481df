import { SUBJECTS } from '@ds/contracts';
import { subjectHandlers } from '@ds/platform';
import { DecisionDetails } from './decisions/decision-details';
import { DecisionsService } from './decisions/decisions.service';
import { VersionsService } from './decisions/versions.service';
import { ExecutionsQuery } from './executions/executions.query';
import { OverviewQuery } from './executions/overview.query';
import { PlaygroundService } from './playground/playground.service';
import { OutcomesService } from './quality/outcomes.service';
import { QualityService } from './quality/quality.service';
import { RunService } from './runs/run.service';

export const RunnerHandlers = subjectHandlers(
  'RunnerHandlers',
  {
    runs: RunService,
    decisions: DecisionsService,
    executions: ExecutionsQuery,
    details: DecisionDetails,
    playground: PlaygroundService,
    versions: VersionsService,
    outcomes: OutcomesService,
    quality: QualityService,
    overviews: OverviewQuery,
  },
  (on) => [
    on(SUBJECTS.runner.run, ({ runs }, request) => runs.run(request)),
    on(SUBJECTS.runner.listDecisions, ({ decisions }, request) => decisions.list(request.workspaceId)),
    on(SUBJECTS.runner.getContract, ({ decisions }, request) => decisions.contract(request.workspaceId, request.slug)),
    on(SUBJECTS.runner.createDecision, ({ decisions }, request) => decisions.create(request)),
    on(SUBJECTS.runner.saveDraft, ({ decisions }, request) => decisions.saveDraft(request)),
    on(SUBJECTS.runner.deploy, ({ decisions }, request) => decisions.deploy(request)),
    on(SUBJECTS.runner.listVersions, ({ versions }, request) => versions.list(request)),
    on(SUBJECTS.runner.compareVersions, ({ versions }, request) => versions.compare(request)),
    on(SUBJECTS.runner.reviewVersion, ({ versions }, request) => versions.review(request)),
    on(SUBJECTS.runner.rollback, ({ versions }, request) => versions.rollback(request)),
    on(SUBJECTS.runner.setEndpoint, ({ decisions }, request) => decisions.setEndpoint(request)),
    on(SUBJECTS.runner.copyDecisions, ({ decisions }, request) => decisions.copy(request)),
    on(SUBJECTS.runner.executionOutcomes, ({ executions }, request) => executions.outcomes(request)),
    on(SUBJECTS.runner.leaseExecutions, ({ executions }, request) => executions.leaseExecutions(request)),
    on(SUBJECTS.runner.listExecutions, ({ executions }, request) => executions.list(request)),
    on(SUBJECTS.runner.decisionOverview, ({ overviews }, request) => overviews.overview(request)),
    on(SUBJECTS.runner.getDecision, ({ details }, request) => details.get(request)),
    on(SUBJECTS.runner.playground, ({ playground }, request) => playground.run(request)),
    on(SUBJECTS.runner.executionInput, ({ executions }, request) => executions.input(request)),
    on(SUBJECTS.runner.recordOutcome, ({ outcomes }, request) => outcomes.record(request)),
    on(SUBJECTS.runner.qualityReport, ({ quality }, request) => quality.report(request)),
    on(SUBJECTS.runner.fitCalibration, ({ quality }, request) => quality.fit(request)),
  ],
);

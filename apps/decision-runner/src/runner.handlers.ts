import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ExecutionInputRequest,
  CopyDecisionsRequest,
  CreateDecisionRequest,
  CompareVersionsRequest,
  DecisionOverviewRequest,
  DecisionRef,
  DeployRequest,
  RollbackRequest,
  ReviewVersionRequest,
  ExecutionOutcomesRequest,
  LeaseExecutionsRequest,
  FitCalibrationRequest,
  GetContractRequest,
  GetDecisionRequest,
  ListExecutionsRequest,
  PlaygroundRunRequest,
  QualityReportRequest,
  RecordOutcomeRequest,
  RunDecisionRequest,
  SaveDraftRequest,
  SetEndpointRequest,
  SUBJECTS,
  WorkspaceScoped,
} from '@ds/contracts';
import { DecisionDetails } from './decisions/decision-details';
import { DecisionsService } from './decisions/decisions.service';
import { VersionsService } from './decisions/versions.service';
import { ExecutionsQuery } from './executions/executions.query';
import { OverviewQuery } from './executions/overview.query';
import { PlaygroundService } from './playground/playground.service';
import { OutcomesService } from './quality/outcomes.service';
import { QualityService } from './quality/quality.service';
import { RunService } from './runs/run.service';

@Controller()
export class RunnerHandlers {
  constructor(
    private readonly runs: RunService,
    private readonly decisions: DecisionsService,
    private readonly executions: ExecutionsQuery,
    private readonly details: DecisionDetails,
    private readonly playground: PlaygroundService,
    private readonly versions: VersionsService,
    private readonly outcomes: OutcomesService,
    private readonly quality: QualityService,
    private readonly overviews: OverviewQuery,
  ) {}

  @MessagePattern(SUBJECTS.runner.run)
  run(@Payload() request: RunDecisionRequest) {
    return this.runs.run(request);
  }

  @MessagePattern(SUBJECTS.runner.listDecisions)
  listDecisions(@Payload() request: WorkspaceScoped) {
    return this.decisions.list(request.workspaceId);
  }

  @MessagePattern(SUBJECTS.runner.getContract)
  getContract(@Payload() request: GetContractRequest) {
    return this.decisions.contract(request.workspaceId, request.slug);
  }

  @MessagePattern(SUBJECTS.runner.createDecision)
  create(@Payload() request: CreateDecisionRequest) {
    return this.decisions.create(request);
  }

  @MessagePattern(SUBJECTS.runner.saveDraft)
  saveDraft(@Payload() request: SaveDraftRequest) {
    return this.decisions.saveDraft(request);
  }

  @MessagePattern(SUBJECTS.runner.deploy)
  deploy(@Payload() request: DeployRequest) {
    return this.decisions.deploy(request);
  }

  @MessagePattern(SUBJECTS.runner.listVersions)
  listVersions(@Payload() request: DecisionRef) {
    return this.versions.list(request);
  }

  @MessagePattern(SUBJECTS.runner.compareVersions)
  compareVersions(@Payload() request: CompareVersionsRequest) {
    return this.versions.compare(request);
  }

  @MessagePattern(SUBJECTS.runner.reviewVersion)
  reviewVersion(@Payload() request: ReviewVersionRequest) {
    return this.versions.review(request);
  }

  @MessagePattern(SUBJECTS.runner.rollback)
  rollback(@Payload() request: RollbackRequest) {
    return this.versions.rollback(request);
  }

  @MessagePattern(SUBJECTS.runner.setEndpoint)
  setEndpoint(@Payload() request: SetEndpointRequest) {
    return this.decisions.setEndpoint(request);
  }

  @MessagePattern(SUBJECTS.runner.copyDecisions)
  copyDecisions(@Payload() request: CopyDecisionsRequest) {
    return this.decisions.copy(request);
  }

  @MessagePattern(SUBJECTS.runner.executionOutcomes)
  executionOutcomes(@Payload() request: ExecutionOutcomesRequest) {
    return this.executions.outcomes(request);
  }

  @MessagePattern(SUBJECTS.runner.leaseExecutions)
  leaseExecutions(@Payload() request: LeaseExecutionsRequest) {
    return this.executions.leaseExecutions(request);
  }

  @MessagePattern(SUBJECTS.runner.listExecutions)
  listExecutions(@Payload() request: ListExecutionsRequest) {
    return this.executions.list(request);
  }

  @MessagePattern(SUBJECTS.runner.decisionOverview)
  decisionOverview(@Payload() request: DecisionOverviewRequest) {
    return this.overviews.overview(request);
  }

  @MessagePattern(SUBJECTS.runner.getDecision)
  getDecision(@Payload() request: GetDecisionRequest) {
    return this.details.get(request);
  }

  @MessagePattern(SUBJECTS.runner.playground)
  playgroundRun(@Payload() request: PlaygroundRunRequest) {
    return this.playground.run(request);
  }

  @MessagePattern(SUBJECTS.runner.executionInput)
  executionInput(@Payload() request: ExecutionInputRequest) {
    return this.executions.input(request);
  }

  @MessagePattern(SUBJECTS.runner.recordOutcome)
  recordOutcome(@Payload() request: RecordOutcomeRequest) {
    return this.outcomes.record(request);
  }

  @MessagePattern(SUBJECTS.runner.qualityReport)
  qualityReport(@Payload() request: QualityReportRequest) {
    return this.quality.report(request);
  }

  @MessagePattern(SUBJECTS.runner.fitCalibration)
  fitCalibration(@Payload() request: FitCalibrationRequest) {
    return this.quality.fit(request);
  }
}

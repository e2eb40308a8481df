import 'reflect-metadata';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Logger, NatsLink, PLATFORM, RpcClient, runServiceMain, ServiceDefinition, WorkspaceDeletions } from '@ds/platform';
import { DecisionRunnerConfig, readDecisionRunnerConfig } from './config';
import { DecisionCache } from './decisions/decision-cache';
import { DecisionDetails } from './decisions/decision-details';
import { DecisionStore } from './decisions/decision.store';
import { DecisionsService } from './decisions/decisions.service';
import { VersionCache } from './decisions/version-cache';
import { VersionsService } from './decisions/versions.service';
import { DecisionEntity, DecisionVersionEntity, ExecutionEntity } from './entities';
import { ExecutionRecorder } from './executions/execution-recorder';
import { ExecutionStore } from './executions/execution.store';
import { ExecutionsQuery } from './executions/executions.query';
import { OverviewQuery } from './executions/overview.query';
import { HookStore } from './hooks/hook.store';
import { HooksHandlers } from './hooks/hooks.handlers';
import { HooksService } from './hooks/hooks.service';
import { LabLimits } from './lab/lab-limits.store';
import { LabGate, LabPool } from './lab/lab-pool';
import { Initial1763780000000 } from './migrations/1763780000000-initial';
import { ExecutionRetention1764400000000 } from './migrations/1764400000000-execution-retention';
import { DecisionHooks1795448775114 } from './migrations/1795448775114-decision-hooks';
import { SealedHookSecrets1795600000001 } from './migrations/1795600000001-sealed-hook-secrets';
import { ExecutionOutcomes1796012873514 } from './migrations/1796012873514-execution-outcomes';
import { ExecutionRollups1796031415926 } from './migrations/1796031415926-execution-rollups';
import { PlaygroundReservations1796031470523 } from './migrations/1796031470523-playground-reservations';
import { ExecutionTraces1796041729301 } from './migrations/1796041729301-execution-traces';
import { VersionHistory1796041729302 } from './migrations/1796041729302-version-history';
import { ShadowVersions1796052483117 } from './migrations/1796052483117-shadow-versions';
import { Replays1796058314159 } from './migrations/1796058314159-replays';
import { ExecutionLeases1796100000000 } from './migrations/1796100000000-execution-leases';
import { DeployNotes1796110000000 } from './migrations/1796110000000-deploy-notes';
import { QualityRollups1796120000000 } from './migrations/1796120000000-quality-rollups';
import { RollupShards1796230000000 } from './migrations/1796230000000-rollup-shards';
import { LiveQualityLabels1796240000000 } from './migrations/1796240000000-live-quality-labels';
import { LabLimits1796240381000 } from './migrations/1796240381000-lab-limits';
import { ReplayClaims1796318420000 } from './migrations/1796318420000-replay-claims';
import { RuleRollups1796330000000 } from './migrations/1796330000000-rule-rollups';
import { OrderedInputs1796331739000 } from './migrations/1796331739000-ordered-inputs';
import { ExecutionSourceGroups1796400000000 } from './migrations/1796400000000-execution-source-groups';
import { ReviewItems1796500000000 } from './migrations/1796500000000-review-items';
import { ReviewAuditReads1796510000000 } from './migrations/1796510000000-review-audit-reads';
import { PlaygroundReservations } from './playground/playground-reservations.store';
import { PlaygroundService } from './playground/playground.service';
import { OutcomesService } from './quality/outcomes.service';
import { QualityService } from './quality/quality.service';
import { QualityStore } from './quality/quality.store';
import { ReplayWorker } from './replays/replay-worker';
import { ReplayStore } from './replays/replay.store';
import { ReplaysHandlers } from './replays/replays.handlers';
import { ReplaysService } from './replays/replays.service';
import { BillingRetention, ExecutionRetention, RETENTION_SOURCE } from './retention/execution-retention';
import { ReviewRecorder } from './reviews/review-recorder';
import { ReviewsHandlers } from './reviews/reviews.handlers';
import { ReviewsService } from './reviews/reviews.service';
import { RunnerHandlers } from './runner.handlers';
import { DestinationCalls } from './runs/destination-calls';
import { RUNNER_JETSTREAM, runnerJetStream } from './runs/jetstream';
import { LEASE_TAKER, LeaseTaker } from './runs/lease-taker';
import { ReservationClient } from './runs/reservation-client';
import { RunExecutor } from './runs/run-executor';
import { RunService } from './runs/run.service';
import { ShadowRunner } from './shadow/shadow-runner';
import { ShadowHandlers } from './shadow/shadow.handlers';
import { ShadowService } from './shadow/shadow.service';

class DecisionRunnerModule {}

export const decisionRunner: ServiceDefinition<DecisionRunnerConfig> = {
  name: 'decision-runner',
  database: {
    schema: 'decision_runner',
    entities: [DecisionEntity, DecisionVersionEntity, ExecutionEntity],
    migrations: [
      Initial1763780000000,
      ExecutionRetention1764400000000,
      DecisionHooks1795448775114,
      SealedHookSecrets1795600000001,
      PlaygroundReservations1796031470523,
      ExecutionTraces1796041729301,
      VersionHistory1796041729302,
      ExecutionOutcomes1796012873514,
      ExecutionRollups1796031415926,
      ShadowVersions1796052483117,
      Replays1796058314159,
      ExecutionLeases1796100000000,
      DeployNotes1796110000000,
      QualityRollups1796120000000,
      RollupShards1796230000000,
      LiveQualityLabels1796240000000,
      LabLimits1796240381000,
      ReplayClaims1796318420000,
      RuleRollups1796330000000,
      OrderedInputs1796331739000,
      ExecutionSourceGroups1796400000000,
      ReviewItems1796500000000,
      ReviewAuditReads1796510000000,
    ],
  },
  readConfig: readDecisionRunnerConfig,
  module: () => ({
    module: DecisionRunnerModule,
    imports: [TypeOrmModule.forFeature([DecisionEntity, DecisionVersionEntity, ExecutionEntity])],
    controllers: [RunnerHandlers, HooksHandlers, ReplaysHandlers, ShadowHandlers, ReviewsHandlers],
    providers: [
      // The stores over the service's one data source, injected where a service needs no transaction of its own.
      { provide: DecisionStore, useFactory: (db: DataSource) => DecisionStore.of(db), inject: [getDataSourceToken()] },
      { provide: ExecutionStore, useFactory: (db: DataSource) => new ExecutionStore(db), inject: [getDataSourceToken()] },
      { provide: ReplayStore, useFactory: (db: DataSource) => ReplayStore.of(db), inject: [getDataSourceToken()] },
      { provide: HookStore, useFactory: (db: DataSource) => new HookStore(db), inject: [getDataSourceToken()] },
      { provide: QualityStore, useFactory: (db: DataSource) => new QualityStore(db), inject: [getDataSourceToken()] },
      RunService,
      RunExecutor,
      ShadowRunner,
      ShadowService,
      ReservationClient,
      DestinationCalls,
      { provide: RUNNER_JETSTREAM, useFactory: (nats: NatsLink) => runnerJetStream(nats), inject: [PLATFORM.nats] },
      {
        provide: LEASE_TAKER,
        useFactory: (config: DecisionRunnerConfig, rpc: RpcClient, logger: Logger) =>
          config.redisUrl && config.billingLeases ? new LeaseTaker(config.redisUrl, rpc, logger) : null,
        inject: [PLATFORM.config, PLATFORM.rpc, PLATFORM.logger],
      },
      DecisionsService,
      DecisionDetails,
      PlaygroundService,
      PlaygroundReservations,
      DecisionCache,
      VersionCache,
      VersionsService,
      ExecutionRecorder,
      ExecutionsQuery,
      OutcomesService,
      ReviewRecorder,
      ReviewsService,
      QualityService,
      LabLimits,
      { provide: LabPool, useFactory: (config: DecisionRunnerConfig) => new LabPool(config.labWorkers), inject: [PLATFORM.config] },
      { provide: LabGate, useFactory: (config: DecisionRunnerConfig) => new LabGate(config.labDbConnections), inject: [PLATFORM.config] },
      OverviewQuery,
      ExecutionRetention,
      HooksService,
      ReplaysService,
      ReplayWorker,
      { provide: RETENTION_SOURCE, useClass: BillingRetention },
    ],
  }),
  background: async (app, runtime) => {
    const retention = app.get(ExecutionRetention);
    retention.start();
    const replays = app.get(ReplayWorker);
    replays.start();
    const decisions = app.get(DecisionsService);
    const deletions = new WorkspaceDeletions(
      runtime.nats.connection,
      'decision-runner',
      (event) => decisions.purgeWorkspace(event.workspaceId),
      runtime.logger,
    );
    await deletions.start();
    return {
      stop: async () => {
        await deletions.stop();
        await retention.stop();
        await replays.stop();
        await app.get(LabPool).close();
        app.get<LeaseTaker | null>(LEASE_TAKER)?.close();
      },
    };
  },
};

if (require.main === module) void runServiceMain(decisionRunner);

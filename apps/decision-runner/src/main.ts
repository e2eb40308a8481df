import 'reflect-metadata';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NatsLink, PLATFORM, runServiceMain, ServiceDefinition, WorkspaceDeletions } from '@ds/platform';
import { DecisionRunnerConfig, readDecisionRunnerConfig } from './config';
import { DecisionCache } from './decisions/decision-cache';
import { DecisionDetails } from './decisions/decision-details';
import { DecisionsService } from './decisions/decisions.service';
import { VersionCache } from './decisions/version-cache';
import { DecisionEntity, DecisionVersionEntity, ExecutionEntity } from './entities';
import { ExecutionRecorder } from './executions/execution-recorder';
import { ExecutionsQuery } from './executions/executions.query';
import { OverviewQuery } from './executions/overview.query';
import { HooksHandlers } from './hooks/hooks.handlers';
import { HooksService } from './hooks/hooks.service';
import { Initial1763780000000 } from './migrations/1763780000000-initial';
import { ExecutionRetention1764400000000 } from './migrations/1764400000000-execution-retention';
import { DecisionHooks1795448775114 } from './migrations/1795448775114-decision-hooks';
import { SealedHookSecrets1795600000001 } from './migrations/1795600000001-sealed-hook-secrets';
import { ExecutionRollups1796031415926 } from './migrations/1796031415926-execution-rollups';
import { BillingRetention, ExecutionRetention, RETENTION_SOURCE } from './retention/execution-retention';
import { PlaygroundService } from './playground/playground.service';
import { RunnerHandlers } from './runner.handlers';
import { ReservationClient } from './runs/reservation-client';
import { DestinationCalls } from './runs/destination-calls';
import { RUNNER_JETSTREAM, runnerJetStream } from './runs/jetstream';
import { RunService } from './runs/run.service';

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
      ExecutionRollups1796031415926,
    ],
  },
  readConfig: readDecisionRunnerConfig,
  module: () => ({
    module: DecisionRunnerModule,
    imports: [TypeOrmModule.forFeature([DecisionEntity, DecisionVersionEntity, ExecutionEntity])],
    controllers: [RunnerHandlers, HooksHandlers],
    providers: [
      RunService,
      ReservationClient,
      DestinationCalls,
      { provide: RUNNER_JETSTREAM, useFactory: (nats: NatsLink) => runnerJetStream(nats), inject: [PLATFORM.nats] },
      DecisionsService,
      DecisionDetails,
      PlaygroundService,
      DecisionCache,
      VersionCache,
      ExecutionRecorder,
      ExecutionsQuery,
      OverviewQuery,
      ExecutionRetention,
      HooksService,
      { provide: RETENTION_SOURCE, useClass: BillingRetention },
    ],
  }),
  background: async (app, runtime) => {
    const retention = app.get(ExecutionRetention);
    retention.start();
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
      },
    };
  },
};

if (require.main === module) void runServiceMain(decisionRunner);

import 'reflect-metadata';
import { TypeOrmModule } from '@nestjs/typeorm';
import { runServiceMain, ServiceDefinition } from '@ds/platform';
import { DecisionRunnerConfig, readDecisionRunnerConfig } from './config';
import { DecisionCache } from './decisions/decision-cache';
import { DecisionDetails } from './decisions/decision-details';
import { DecisionsService } from './decisions/decisions.service';
import { VersionCache } from './decisions/version-cache';
import { DecisionEntity, DecisionVersionEntity, ExecutionEntity } from './entities';
import { ExecutionRecorder } from './executions/execution-recorder';
import { ExecutionsQuery } from './executions/executions.query';
import { Initial1763780000000 } from './migrations/1763780000000-initial';
import { ExecutionRetention1764400000000 } from './migrations/1764400000000-execution-retention';
import { BillingRetention, ExecutionRetention, RETENTION_SOURCE } from './retention/execution-retention';
import { PlaygroundService } from './playground/playground.service';
import { RunnerHandlers } from './runner.handlers';
import { Billing } from './runs/billing';
import { RunService } from './runs/run.service';

class DecisionRunnerModule {}

export const decisionRunner: ServiceDefinition<DecisionRunnerConfig> = {
  name: 'decision-runner',
  database: {
    schema: 'decision_runner',
    entities: [DecisionEntity, DecisionVersionEntity, ExecutionEntity],
    migrations: [Initial1763780000000, ExecutionRetention1764400000000],
  },
  readConfig: readDecisionRunnerConfig,
  module: () => ({
    module: DecisionRunnerModule,
    imports: [TypeOrmModule.forFeature([DecisionEntity, DecisionVersionEntity, ExecutionEntity])],
    controllers: [RunnerHandlers],
    providers: [
      RunService,
      Billing,
      DecisionsService,
      DecisionDetails,
      PlaygroundService,
      DecisionCache,
      VersionCache,
      ExecutionRecorder,
      ExecutionsQuery,
      ExecutionRetention,
      { provide: RETENTION_SOURCE, useClass: BillingRetention },
    ],
  }),
  background: async (app) => {
    const retention = app.get(ExecutionRetention);
    retention.start();
    return { stop: () => retention.stop() };
  },
};

if (require.main === module) void runServiceMain(decisionRunner);

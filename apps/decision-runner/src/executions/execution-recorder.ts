import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Evaluation } from '@ds/decision-schema';
import { ExecutionEntity } from '../entities';

export type ExecutionBase = Pick<
  ExecutionEntity,
  'id' | 'workspaceId' | 'decisionId' | 'decisionSlug' | 'version' | 'source' | 'requestId' | 'livemode' | 'input'
>;

/** Steps 7 to 10 leave an execution behind, failures included; it is written before the caller hears back. */
@Injectable()
export class ExecutionRecorder {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async recordSuccess(base: ExecutionBase, evaluation: Evaluation, metrics: object, destinations: object[] | null, storeOutput: boolean): Promise<void> {
    await this.db.getRepository(ExecutionEntity).insert({
      ...base,
      status: 'success',
      result: storeOutput ? evaluation.result : null,
      confidence: storeOutput ? evaluation.confidence : null,
      scores: storeOutput ? (evaluation.scores ?? null) : null,
      composites: storeOutput ? (evaluation.composites ?? null) : null,
      action: evaluation.action,
      actionReason: evaluation.action_reason,
      metrics,
      destinations,
      error: null,
    });
  }

  async recordError(base: ExecutionBase, error: ServiceError): Promise<void> {
    await this.db.getRepository(ExecutionEntity).insert({
      ...base,
      status: 'error',
      result: null,
      confidence: null,
      scores: null,
      composites: null,
      action: null,
      actionReason: null,
      metrics: null,
      destinations: null,
      error: { code: error.code, message: error.message },
    });
  }
}

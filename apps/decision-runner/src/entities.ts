import type { Deployer } from '@ds/contracts';
import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'decisions' })
export class DecisionEntity {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ type: 'text' }) slug: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ name: 'draft_schema', type: 'jsonb' }) draftSchema: object;
  @Column({ type: 'integer' }) revision: number;
  @Column({ name: 'active_version', type: 'integer', nullable: true }) activeVersion: number | null;
  @Column({ name: 'endpoint_enabled', type: 'boolean' }) endpointEnabled: boolean;
  /** The highest version number deployed; null on rows from before shadows, whose newest version was the active one. */
  @Column({ name: 'latest_version', type: 'integer', nullable: true }) latestVersion: number | null;
  /** A version evaluated after sampled live runs, without answering them; null when no shadow runs. */
  @Column({ name: 'shadow_version', type: 'integer', nullable: true }) shadowVersion: number | null;
  /** Percent of live runs of the active version the shadow also evaluates. */
  @Column({ name: 'shadow_rate', type: 'smallint', nullable: true }) shadowRate: number | null;
  @Column({ name: 'shadow_started_at', type: 'timestamptz', nullable: true }) shadowStartedAt: Date | null;
  @Column({ name: 'shadow_started_by', type: 'jsonb', nullable: true }) shadowStartedBy: Deployer | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

@Entity({ name: 'decision_versions' })
export class DecisionVersionEntity {
  @PrimaryColumn({ name: 'decision_id', type: 'text' }) decisionId: string;
  @PrimaryColumn({ type: 'integer' }) version: number;
  @Column({ type: 'jsonb' }) schema: object;
  @Column({ name: 'deployed_by', type: 'jsonb', nullable: true }) deployedBy: Deployer | null;
  /** Why it was deployed, as the deployer wrote it; null for rollbacks, shadows and deploys without one. */
  @Column({ type: 'text', nullable: true }) note: string | null;
  @Column({ name: 'rolled_back_from', type: 'integer', nullable: true }) rolledBackFrom: number | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity({ name: 'executions' })
export class ExecutionEntity {
  /** Ordering key for cursor paging: strictly increasing in commit order is not needed, only unique and stable. */
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'bigint', generated: 'increment', insert: false }) seq: string;
  @Column({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ name: 'decision_id', type: 'text' }) decisionId: string;
  @Column({ name: 'decision_slug', type: 'text' }) decisionSlug: string;
  @Column({ type: 'integer' }) version: number;
  @Column({ type: 'text' }) source: string;
  @Column({ type: 'text' }) status: 'success' | 'error';
  @Column({ name: 'request_id', type: 'text' }) requestId: string;
  @Column({ type: 'boolean' }) livemode: boolean;
  @Column({ type: 'jsonb', nullable: true }) result: object | null;
  @Column({ type: 'jsonb', nullable: true }) confidence: object | null;
  @Column({ type: 'jsonb', nullable: true }) scores: object | null;
  @Column({ type: 'jsonb', nullable: true }) composites: object | null;
  @Column({ type: 'text', nullable: true }) action: string | null;
  @Column({ name: 'action_reason', type: 'jsonb', nullable: true }) actionReason: object | null;
  @Column({ type: 'jsonb', nullable: true }) metrics: object | null;
  @Column({ type: 'jsonb', nullable: true }) destinations: object | null;
  @Column({ type: 'jsonb', nullable: true }) error: object | null;
  /** How the action was reached (`traceEvaluation`); null for failed runs and runs recorded before traces. */
  @Column({ type: 'jsonb', nullable: true }) trace: object | null;
  /** Kept only when the version's settings say storeInput; no API ever returns it. */
  @Column({ type: 'jsonb', nullable: true }) input: object | null;
  /** Per confidence source, the distributions before calibration; kept with the output (storeOutput). */
  @Column({ type: 'jsonb', nullable: true }) distributions: object | null;
  /** What turned out to be right, as reported afterwards: { answers, action, recorded_at }; null until then. */
  @Column({ type: 'jsonb', nullable: true }) outcome: object | null;
  /** The budget lease step 6 took this run's decision from; null when it was reserved on its own. */
  @Column({ name: 'lease_id', type: 'text', nullable: true }) leaseId: string | null;
  /** For `source` = `shadow`: the live execution whose state the shadow evaluated. */
  @Column({ name: 'shadow_of', type: 'text', nullable: true }) shadowOf: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

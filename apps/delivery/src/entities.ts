import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { DeliveryKind, DeliveryStatus } from '@ds/contracts';

/** The tables as TypeORM knows them; the hot path (consuming and attempting) speaks SQL through DeliveriesStore. */
@Entity({ name: 'deliveries' })
export class DeliveryEntity {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'bigint', insert: false, update: false }) seq: string;
  @Column({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ name: 'decision_id', type: 'text' }) decisionId: string;
  @Column({ name: 'decision_slug', type: 'text' }) decisionSlug: string;
  @Column({ name: 'execution_id', type: 'text' }) executionId: string;
  @Column({ name: 'destination_key', type: 'text' }) destinationKey: string;
  @Column({ type: 'text' }) kind: DeliveryKind;
  @Column({ type: 'boolean' }) livemode: boolean;
  @Column({ type: 'text' }) url: string;
  @Column({ type: 'text' }) method: string;
  @Column({ type: 'jsonb' }) headers: Record<string, string>;
  @Column({ type: 'text' }) body: string;
  @Column({ type: 'text' }) status: DeliveryStatus;
  @Column({ type: 'integer' }) sequence: number;
  @Column({ name: 'attempt_count', type: 'integer' }) attemptCount: number;
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true }) nextAttemptAt: Date | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true }) completedAt: Date | null;
}

@Entity({ name: 'delivery_attempts' })
export class DeliveryAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column({ name: 'delivery_id', type: 'text' }) deliveryId: string;
  @Column({ type: 'integer' }) sequence: number;
  @Column({ type: 'integer' }) attempt: number;
  @Column({ name: 'started_at', type: 'timestamptz' }) startedAt: Date;
  @Column({ type: 'text' }) outcome: string;
  @Column({ name: 'response_status', type: 'integer', nullable: true }) responseStatus: number | null;
  @Column({ name: 'duration_ms', type: 'integer', nullable: true }) durationMs: number | null;
  @Column({ type: 'text', nullable: true }) error: string | null;
  @Column({ name: 'response_content_type', type: 'text', nullable: true }) responseContentType: string | null;
  /** The first 8 KiB of the answer, with secrets and signatures the receiver echoed redacted. */
  @Column({ name: 'response_body', type: 'text', nullable: true }) responseBody: string | null;
  @Column({ name: 'response_truncated', type: 'boolean' }) responseTruncated: boolean;
}

@Entity({ name: 'signing_secrets' })
export class SigningSecretEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  /** Plaintext left from before sealing, until the start-up sweep seals it (SealedSigningSecrets1795600000000). */
  @Column({ name: 'unsealed_secret', type: 'text', nullable: true }) unsealedSecret: string | null;
  /** AES-256-GCM under DELIVERY_SECRETS_KEY, bound to the workspace and this row's id. */
  @Column({ type: 'bytea', nullable: true }) sealed: Buffer | null;
  @Column({ name: 'key_id', type: 'text', nullable: true }) keyId: string | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt: Date | null;
}

export const DELIVERY_ENTITIES = [DeliveryEntity, DeliveryAttemptEntity, SigningSecretEntity];

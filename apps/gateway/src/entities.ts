import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type Role = 'owner' | 'admin' | 'member' | 'viewer';
export type KeyMode = 'live' | 'test';

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'text', unique: true }) email: string;
  @Column({ type: 'text' }) name: string;
  @Column({ name: 'password_hash', type: 'text' }) passwordHash: string;
  @Column({ name: 'failed_sign_ins', type: 'integer' }) failedSignIns: number;
  @Column({ name: 'locked_until', type: 'timestamptz', nullable: true }) lockedUntil: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity({ name: 'sessions' })
export class SessionEntity {
  @PrimaryColumn({ name: 'token_hash', type: 'text' }) tokenHash: string;
  @Column({ name: 'user_id', type: 'text' }) userId: string;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt: Date;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity({ name: 'workspaces' })
export class WorkspaceEntity {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text' }) name: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity({ name: 'memberships' })
export class MembershipEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' }) workspaceId: string;
  @PrimaryColumn({ name: 'user_id', type: 'text' }) userId: string;
  @Column({ type: 'text' }) role: Role;
}

@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'workspace_id', type: 'uuid' }) workspaceId: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'text' }) mode: KeyMode;
  /** SHA-256 of the whole key: keys carry 190 random bits, so a fast hash is enough and lookups stay cheap. */
  @Column({ name: 'key_hash', type: 'text', unique: true }) keyHash: string;
  /** Its last four characters, shown to tell keys apart; null for keys made before they were kept. */
  @Column({ type: 'text', nullable: true }) last4: string | null;
  @Column({ name: 'created_by', type: 'text', nullable: true }) createdBy: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true }) lastUsedAt: Date | null;
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true }) revokedAt: Date | null;
}

import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** `reviewer` stands apart from the others' order: it sees and resolves reviews and reaches no other route. */
export type Role = 'owner' | 'admin' | 'member' | 'viewer' | 'reviewer';
export type KeyMode = 'live' | 'test';
/** How a session was opened. */
export type SessionMethod = 'sign_up' | 'password' | 'sign_in_code' | 'password_reset';

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'text', unique: true }) email: string;
  @Column({ type: 'text' }) name: string;
  /** Null when the account has no password: never set, or taken away when someone else proved the address. */
  @Column({ name: 'password_hash', type: 'text', nullable: true }) passwordHash: string | null;
  @Column({ name: 'email_verified_at', type: 'timestamptz', nullable: true }) emailVerifiedAt: Date | null;
  @Column({ name: 'failed_sign_ins', type: 'integer' }) failedSignIns: number;
  @Column({ name: 'locked_until', type: 'timestamptz', nullable: true }) lockedUntil: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

@Entity({ name: 'sessions' })
export class SessionEntity {
  @PrimaryColumn({ name: 'token_hash', type: 'text' }) tokenHash: string;
  /** What the user sees and ends a session by; the token itself is never shown again. */
  @Column({ type: 'uuid', insert: false }) id: string;
  @Column({ name: 'user_id', type: 'text' }) userId: string;
  @Column({ type: 'text' }) method: SessionMethod;
  @Column({ name: 'user_agent', type: 'text', nullable: true }) userAgent: string | null;
  /** The client address the gateway saw when the session was opened (after `TRUSTED_PROXIES`). */
  @Column({ type: 'text', nullable: true }) address: string | null;
  @Column({ name: 'last_active_at', type: 'timestamptz', nullable: true }) lastActiveAt: Date | null;
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

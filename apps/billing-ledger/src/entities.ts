import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { PlanName } from '@ds/contracts';
import { PlanOverrides } from './plans';

@Entity({ name: 'accounts' })
export class AccountEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ type: 'text' }) plan: PlanName;
  @Column({ type: 'jsonb' }) overrides: PlanOverrides;
  @Column({ name: 'period_anchor', type: 'timestamptz' }) periodAnchor: Date;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn, ValueTransformer } from 'typeorm';
import { Currency, PlanName } from '@ds/contracts';
import { Lease, LeaseMoneyRow, LeaseState, LedgerAccountKind, LedgerName, Transfer, TransferCode, TransferPhase } from '@ds/billing';
import { PlanOverrides } from './plans';

/** PostgreSQL bigint arrives as a string; the ledger computes in bigint so that no amount is ever rounded. */
const bigintValue: ValueTransformer = {
  to: (value: bigint | null | undefined) => (typeof value === 'bigint' ? value.toString() : value),
  from: (value: string | null) => (value === null ? null : BigInt(value)),
};

/** Cents the API shows (caps, grants) stay numbers: they are safe integers by validation. */
const centsValue: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

@Entity({ name: 'accounts' })
export class AccountEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ type: 'text' }) plan: PlanName;
  @Column({ type: 'jsonb' }) overrides: PlanOverrides;
  @Column({ name: 'period_anchor', type: 'timestamptz' }) periodAnchor: Date;
  @Column({ type: 'text' }) currency: Currency;
  @Column({ name: 'spend_cap_cents', type: 'bigint', nullable: true, transformer: centsValue }) spendCapCents: number | null;
  @Column({ name: 'execution_retention_days', type: 'integer', nullable: true }) executionRetentionDays: number | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

@Entity({ name: 'ledger_accounts' })
export class LedgerAccountEntity {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ type: 'text' }) ledger: LedgerName;
  @Column({ type: 'text' }) kind: LedgerAccountKind;
  @Column({ name: 'period_start', type: 'timestamptz', nullable: true }) periodStart: Date | null;
  @Column({ name: 'grant_id', type: 'text', nullable: true }) grantId: string | null;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt: Date | null;
  @Column({ name: 'no_overdraw', type: 'boolean' }) noOverdraw: boolean;
  @Column({ name: 'debits_pending', type: 'bigint', transformer: bigintValue }) debitsPending: bigint;
  @Column({ name: 'debits_posted', type: 'bigint', transformer: bigintValue }) debitsPosted: bigint;
  @Column({ name: 'credits_pending', type: 'bigint', transformer: bigintValue }) creditsPending: bigint;
  @Column({ name: 'credits_posted', type: 'bigint', transformer: bigintValue }) creditsPosted: bigint;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

/** The entries. Append-only: a trigger refuses every UPDATE and DELETE. */
@Entity({ name: 'transfers' })
export class TransferEntity implements Transfer {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'cause_id', type: 'text' }) causeId: string;
  @Column({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ type: 'text' }) ledger: LedgerName;
  @Column({ name: 'debit_account_id', type: 'text' }) debitAccountId: string;
  @Column({ name: 'credit_account_id', type: 'text' }) creditAccountId: string;
  @Column({ type: 'bigint', transformer: bigintValue }) amount: bigint;
  @Column({ type: 'text' }) phase: TransferPhase;
  @Column({ name: 'pending_id', type: 'text', nullable: true }) pendingId: string | null;
  @Column({ type: 'text' }) code: TransferCode;
  @Column({ name: 'decision_id', type: 'text', nullable: true }) decisionId: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

export type ReservationState = 'pending' | 'committed' | 'released';

/** One execution's hold at step 6, and how it was settled. Its entries are the transfers caused by the execution id. */
@Entity({ name: 'reservations' })
export class ReservationEntity {
  @PrimaryColumn({ name: 'execution_id', type: 'text' }) executionId: string;
  @Column({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ type: 'text' }) state: ReservationState;
  @Column({ name: 'period_start', type: 'timestamptz' }) periodStart: Date;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'settled_at', type: 'timestamptz', nullable: true }) settledAt: Date | null;
  @Column({ name: 'settled_by', type: 'text', nullable: true }) settledBy: 'runner' | 'sweeper' | null;
  @Column({ name: 'sweep_claimed_until', type: 'timestamptz', nullable: true }) sweepClaimedUntil: Date | null;
  /** The budget lease that paid for the execution; null when it was reserved on its own. */
  @Column({ name: 'lease_id', type: 'text', nullable: true }) leaseId: string | null;
}

/** A budget lease (see Lease in `@ds/billing`). */
@Entity({ name: 'leases' })
export class LeaseEntity implements Lease {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @Column({ name: 'period_start', type: 'timestamptz' }) periodStart: Date;
  @Column({ type: 'integer' }) units: number;
  @Column({ type: 'integer' }) held: number;
  @Column({ name: 'hold_seq', type: 'integer' }) holdSeq: number;
  @Column({ type: 'text' }) state: LeaseState;
  @Column({ name: 'granted_at', type: 'timestamptz' }) grantedAt: Date;
  @Column({ name: 'takes_until', type: 'timestamptz' }) takesUntil: Date;
  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true }) closedAt: Date | null;
  /** `included`: its units are decisions of the included volume. `credits`: overage decisions and their money. */
  @Column({ type: 'text', default: 'included' }) funding: 'included' | 'credits';
  @Column({ type: 'text', nullable: true }) currency: Currency | null;
  @Column({ name: 'unit_price_micros', type: 'bigint', nullable: true, transformer: bigintValue }) unitPriceMicros: bigint | null;
  @Column({ name: 'money_held', type: 'jsonb', default: () => "'[]'::jsonb" }) moneyHeld: LeaseMoneyRow[];
  /** Whether its grant put it in the counter: until then no run can have taken a unit of it. */
  @Column({ type: 'boolean', default: true }) counted: boolean;
}

/** An operator's grant as asked for, kept to recognise the same grant id again. */
@Entity({ name: 'credit_grants' })
export class CreditGrantEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'text' }) workspaceId: string;
  @PrimaryColumn({ name: 'grant_id', type: 'text' }) grantId: string;
  @Column({ type: 'text' }) kind: 'promotional' | 'paid';
  @Column({ name: 'amount_cents', type: 'bigint', transformer: centsValue }) amountCents: number;
  @Column({ type: 'text' }) currency: Currency;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt: Date | null;
  @Column({ name: 'transfer_id', type: 'text' }) transferId: string;
  /** Set by the service, so that the first answer and every repeat show the same time. */
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

export const BILLING_ENTITIES = [AccountEntity, LedgerAccountEntity, TransferEntity, ReservationEntity, CreditGrantEntity, LeaseEntity];

import { EntityManager, In } from 'typeorm';
import { Currency, PlanName, ServiceError } from '@ds/contracts';
import { DEFAULT_PLAN, PlanOverrides } from './plans';
import {
  availableOf,
  Balances,
  ChargedAccount,
  compareWithExisting,
  CreditSource,
  LedgerAccountKind,
  LedgerAccountSpec,
  LedgerError,
  netChanges,
  PeriodAccounts,
  Transfer,
  transferProblems,
  withLeasedMoney,
  ZERO_BALANCES,
} from '@ds/billing';
import { rowsAffected, rowsReturned } from '@ds/platform';
import { AccountEntity, CreditGrantEntity, LedgerAccountEntity, ReservationEntity, ReservationState, TransferEntity } from './entities';

const PROMOTIONAL_GRANT: LedgerAccountKind = 'promotional_grant';

/**
 * The ledger's persistence inside one transaction. Every write of a workspace happens under the lock on its
 * account row (lockAccount), so the balances read here cannot change before the entries written here land.
 */
export class LedgerStore {
  constructor(private readonly manager: EntityManager) {}

  /** A workspace the ledger has not seen yet starts on the free plan, its billing period anchored now. */
  async ensureAccount(workspaceId: string, now: Date): Promise<void> {
    await this.manager
      .createQueryBuilder()
      .insert()
      .into(AccountEntity)
      .values({ workspaceId, plan: DEFAULT_PLAN, overrides: {}, periodAnchor: now, currency: 'usd', spendCapCents: null })
      .orIgnore()
      .execute();
  }

  /**
   * Locks the workspace's account row, creating it on first sight. NO KEY UPDATE: the key never changes, and the
   * foreign keys of the rows written under the lock need not wait for it.
   */
  async lockAccount(workspaceId: string, now: Date): Promise<AccountEntity> {
    const existing = await this.lockExistingAccount(workspaceId);
    if (existing) return existing;
    await this.ensureAccount(workspaceId, now);
    return (await this.lockExistingAccount(workspaceId))!;
  }

  /** Locks without creating: settling in a workspace the ledger never saw finds no reservation anyway. */
  async lockExistingAccount(workspaceId: string): Promise<AccountEntity | null> {
    return this.manager.getRepository(AccountEntity).findOne({ where: { workspaceId }, lock: { mode: 'for_no_key_update' } });
  }

  /**
   * Locks a period's included-volume account, the budget row that reservations from the included volume update
   * in one statement without the account lock. Nothing is locked when it does not exist yet: that path then
   * finds no row to update either.
   */
  async lockBudget(includedVolumeId: string): Promise<void> {
    await this.manager.query('SELECT 1 FROM ledger_accounts WHERE id = $1 FOR NO KEY UPDATE', [includedVolumeId]);
  }

  /** Locks several workspaces' account rows, in id order so that two transactions taking the same ones cannot deadlock. */
  async lockAccounts(workspaceIds: string[]): Promise<void> {
    if (workspaceIds.length === 0) return;
    await this.manager.query('SELECT 1 FROM accounts WHERE workspace_id = ANY($1::text[]) ORDER BY workspace_id FOR NO KEY UPDATE', [workspaceIds]);
  }

  /** The reservations of these executions that exist, locked until the transaction ends. */
  async lockReservations(
    executionIds: string[],
  ): Promise<Map<string, Pick<ReservationEntity, 'executionId' | 'workspaceId' | 'state' | 'periodStart' | 'leaseId'>>> {
    const rows: Array<{ execution_id: string; workspace_id: string; state: ReservationState; period_start: Date; lease_id: string | null }> =
      await this.manager.query(
        'SELECT execution_id, workspace_id, state, period_start, lease_id FROM reservations WHERE execution_id = ANY($1::text[]) ORDER BY execution_id FOR UPDATE',
        [executionIds],
      );
    return new Map(
      rows.map((row) => [
        row.execution_id,
        { executionId: row.execution_id, workspaceId: row.workspace_id, state: row.state, periodStart: row.period_start, leaseId: row.lease_id },
      ]),
    );
  }

  /** Inserts the reservation unless one exists for the execution id, which it then answers. */
  async claimReservation(reservation: Pick<ReservationEntity, 'executionId' | 'workspaceId' | 'state' | 'periodStart'>): Promise<ReservationEntity | null> {
    const inserted = await this.manager
      .createQueryBuilder()
      .insert()
      .into(ReservationEntity)
      .values(reservation)
      .orIgnore()
      .returning(['execution_id'])
      .execute();
    if (inserted.raw.length > 0) return null;
    return this.manager.getRepository(ReservationEntity).findOneByOrFail({ executionId: reservation.executionId });
  }

  /** Writes reservations settled as they are made (runs taken from budget leases), in one statement. */
  async insertSettled(
    rows: Array<Pick<ReservationEntity, 'executionId' | 'workspaceId' | 'state' | 'periodStart' | 'leaseId'>>,
    settledBy: 'runner' | 'sweeper',
  ): Promise<void> {
    if (rows.length === 0) return;
    await this.manager.query(
      `INSERT INTO reservations (execution_id, workspace_id, state, period_start, settled_at, settled_by, lease_id)
       SELECT execution_id, workspace_id, state, period_start, now(), $6, lease_id
       FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[]) AS settled (execution_id, workspace_id, state, period_start, lease_id)`,
      [
        rows.map((row) => row.executionId),
        rows.map((row) => row.workspaceId),
        rows.map((row) => row.state),
        rows.map((row) => row.periodStart.toISOString()),
        rows.map((row) => row.leaseId),
        settledBy,
      ],
    );
  }

  /** The workspace's account, which must exist. */
  account(workspaceId: string): Promise<AccountEntity> {
    return this.manager.getRepository(AccountEntity).findOneByOrFail({ workspaceId });
  }

  async updateAccount(
    workspaceId: string,
    changes: Partial<Pick<AccountEntity, 'plan' | 'overrides' | 'spendCapCents' | 'executionRetentionDays' | 'currency'>>,
  ): Promise<void> {
    await this.manager.getRepository(AccountEntity).update({ workspaceId }, changes);
  }

  /** An operator's grant as asked for, to recognise the same grant id again. */
  creditGrant(workspaceId: string, grantId: string): Promise<CreditGrantEntity | null> {
    return this.manager.getRepository(CreditGrantEntity).findOneBy({ workspaceId, grantId });
  }

  async hasCreditGrants(workspaceId: string): Promise<boolean> {
    return (await this.manager.getRepository(CreditGrantEntity).countBy({ workspaceId })) > 0;
  }

  async insertCreditGrant(fields: CreditGrantEntity): Promise<CreditGrantEntity> {
    const grants = this.manager.getRepository(CreditGrantEntity);
    const row = grants.create(fields);
    await grants.insert(row);
    return row;
  }

  /** Promotional grants past their expiry that still hold money, the earliest first. */
  expiredGrantsWithMoney(now: Date, limit: number): Promise<LedgerAccountEntity[]> {
    return this.manager
      .getRepository(LedgerAccountEntity)
      .createQueryBuilder('account')
      .where('account.kind = :kind AND account.expires_at <= :now', { kind: PROMOTIONAL_GRANT, now })
      .andWhere('account.credits_posted - account.debits_posted - account.debits_pending > 0')
      .orderBy('account.expires_at')
      .limit(limit)
      .getMany();
  }

  /** The plan, overrides and retention setting of those of these workspaces that have an account. */
  async retentionSettings(
    workspaceIds: string[],
  ): Promise<Array<{ workspace_id: string; plan: PlanName; overrides: PlanOverrides; execution_retention_days: number | null }>> {
    return (await this.manager.query('SELECT workspace_id, plan, overrides, execution_retention_days FROM accounts WHERE workspace_id = ANY($1::text[])', [
      workspaceIds,
    ])) as Array<{ workspace_id: string; plan: PlanName; overrides: PlanOverrides; execution_retention_days: number | null }>;
  }

  /** The period's billed decisions (posted debits of its included and overage volume) per UTC day. */
  async billedByDay(accounts: PeriodAccounts): Promise<Array<{ date: string; billed: number }>> {
    const days = (await this.manager.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, sum(amount)::bigint AS billed
             FROM transfers WHERE debit_account_id = ANY($1::text[]) AND phase IN ('single', 'post')
             GROUP BY 1 ORDER BY 1`,
      [[accounts.includedVolume.id, accounts.overageVolume.id]],
    )) as Array<{ date: string; billed: string }>;
    return days.map((day) => ({ date: day.date, billed: Number(day.billed) }));
  }

  /** The period's billed decisions summed by the decision that ran. */
  async billedByDecision(accounts: PeriodAccounts): Promise<Array<{ decisionId: string | null; amount: string }>> {
    const rows = (await this.manager.query(
      `SELECT decision_id, sum(amount)::bigint AS amount FROM transfers
       WHERE debit_account_id = ANY($1::text[]) AND phase IN ('single', 'post') GROUP BY 1`,
      [[accounts.includedVolume.id, accounts.overageVolume.id]],
    )) as Array<{ decision_id: string | null; amount: string }>;
    return rows.map((row) => ({ decisionId: row.decision_id, amount: row.amount }));
  }

  /** The period's posted charges summed by the decision that ran. */
  async chargedByDecision(accounts: PeriodAccounts): Promise<Array<{ decisionId: string | null; amount: string }>> {
    const rows = (await this.manager.query(
      `SELECT decision_id, sum(amount)::bigint AS amount FROM transfers
       WHERE credit_account_id = $1 AND code = 'decision_charge' AND phase IN ('single', 'post') GROUP BY 1`,
      [accounts.spend.id],
    )) as Array<{ decision_id: string | null; amount: string }>;
    return rows.map((row) => ({ decisionId: row.decision_id, amount: row.amount }));
  }

  /**
   * Claims for `claimMs` up to `limit` reservations still pending `settleAfterMs` after they were made, the oldest
   * first, skipping those another sweeper holds, so that replicas sweep disjoint batches.
   */
  async claimUnsettled(settleAfterMs: number, limit: number, claimMs: number): Promise<Array<{ execution_id: string; workspace_id: string }>> {
    const result: unknown = await this.manager.query(
      `UPDATE reservations SET sweep_claimed_until = now() + make_interval(secs => $3::double precision / 1000)
       WHERE execution_id IN (
         SELECT execution_id FROM reservations
         WHERE state = 'pending' AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
           AND (sweep_claimed_until IS NULL OR sweep_claimed_until <= now())
         ORDER BY created_at
         LIMIT $2
         FOR UPDATE SKIP LOCKED)
       RETURNING execution_id, workspace_id`,
      [settleAfterMs, limit, claimMs],
    );
    return rowsReturned<{ execution_id: string; workspace_id: string }>(result);
  }

  /** Gives back the claims on reservations still pending, for the next sweep. */
  async unclaimUnsettled(executionIds: string[]): Promise<void> {
    if (executionIds.length === 0) return;
    await this.manager.query(`UPDATE reservations SET sweep_claimed_until = NULL WHERE execution_id = ANY($1::text[]) AND state = 'pending'`, [executionIds]);
  }

  /** Records how executions were settled, in one statement. */
  async markSettled(states: Map<string, ReservationState>, settledBy: 'runner' | 'sweeper'): Promise<void> {
    if (states.size === 0) return;
    await this.manager.query(
      `UPDATE reservations SET state = settled.state, settled_at = now(), settled_by = $3, sweep_claimed_until = NULL
       FROM unnest($1::text[], $2::text[]) AS settled (execution_id, state)
       WHERE reservations.execution_id = settled.execution_id`,
      [[...states.keys()], [...states.values()], settledBy],
    );
  }

  async ensureLedgerAccounts(specs: LedgerAccountSpec[]): Promise<void> {
    if (specs.length === 0) return;
    await this.manager
      .createQueryBuilder()
      .insert()
      .into(LedgerAccountEntity)
      .values(specs.map((spec) => ({ ...spec, debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n })))
      .orIgnore()
      .execute();
  }

  /** Balances by account id; an account not created yet has none. */
  async balances(ids: string[]): Promise<Map<string, Balances>> {
    const rows = await this.manager.getRepository(LedgerAccountEntity).findBy({ id: In(ids) });
    const found = new Map(rows.map((row) => [row.id, balancesOf(row)]));
    return new Map(ids.map((id) => [id, found.get(id) ?? ZERO_BALANCES]));
  }

  /**
   * The credit sources a period view lists (those that still hold something) and, besides, those of `leased`
   * (money budget leases hold, by account id) that it does not: a lease may hold all that is left of one. Each
   * counts what leases hold of it as available again, as a reader (or a lease holding its money anew) sees it.
   */
  async sourcesWithLeased(listed: CreditSource[], leased: ReadonlyMap<string, bigint>): Promise<CreditSource[]> {
    const known = new Set(listed.map((source) => source.accountId));
    const missing = [...leased.keys()].filter((id) => !known.has(id));
    const rows =
      missing.length === 0
        ? []
        : await this.manager.getRepository(LedgerAccountEntity).findBy({ id: In(missing), kind: In(['promotional_grant', 'paid_balance']) });
    return withLeasedMoney([...listed, ...rows.map(sourceOf)], leased);
  }

  /**
   * In one query: the balances of a period's accounts (those not created yet listed as missing), and the
   * workspace's promotional grants and paid balance in its currency that still hold something.
   */

  async periodView(accounts: PeriodAccounts, workspaceId: string, currency: Currency): Promise<PeriodView> {
    const ids = [accounts.includedVolume.id, accounts.overageVolume.id, accounts.spend.id];
    const rows = await this.manager
      .getRepository(LedgerAccountEntity)
      .createQueryBuilder('account')
      .where('account.id = ANY(:ids)', { ids })
      .orWhere(
        `(account.workspace_id = :workspaceId AND account.ledger = :currency AND account.kind IN ('promotional_grant', 'paid_balance')
          AND account.credits_posted - account.debits_posted - account.debits_pending > 0)`,
        { workspaceId, currency },
      )
      .getMany();
    const byId = new Map(rows.map((row) => [row.id, row]));
    const balance = (id: string) => (byId.has(id) ? balancesOf(byId.get(id)!) : ZERO_BALANCES);
    return {
      includedVolume: balance(accounts.includedVolume.id),
      overageVolume: balance(accounts.overageVolume.id),
      spend: balance(accounts.spend.id),
      missing: Object.values(accounts).filter((spec) => !byId.has(spec.id)),
      sources: rows.filter((row) => row.kind === 'promotional_grant' || row.kind === 'paid_balance').map(sourceOf),
    };
  }

  /**
   * The holds of several reservations by execution id, with the kind of account each one is paid from, in one
   * query; with `single`, the entries a lease posted for them instead.
   */
  async holdsOfMany(
    executionIds: string[],
    phase: 'pending' | 'single' = 'pending',
  ): Promise<Map<string, { holds: Transfer[]; charged: Map<string, ChargedAccount> }>> {
    const byExecution = new Map<string, { holds: Transfer[]; charged: Map<string, ChargedAccount> }>();
    if (executionIds.length === 0) return byExecution;
    const rows: HoldRow[] = await this.manager.query(
      `SELECT transfer.id, transfer.cause_id, transfer.workspace_id, transfer.ledger, transfer.debit_account_id, transfer.credit_account_id,
              transfer.amount, transfer.phase, transfer.pending_id, transfer.code, debit.kind AS debit_kind, debit.grant_id AS debit_grant_id
       FROM transfers AS transfer JOIN ledger_accounts AS debit ON debit.id = transfer.debit_account_id
       WHERE transfer.cause_id = ANY($1::text[]) AND transfer.phase = $2`,
      [executionIds, phase],
    );
    // Hold ids end in their leg number; shorter first keeps leg 10 after leg 9.
    rows.sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : 1));
    for (const row of rows) {
      const execution = byExecution.get(row.cause_id) ?? { holds: [], charged: new Map<string, ChargedAccount>() };
      execution.holds.push({
        id: row.id,
        causeId: row.cause_id,
        workspaceId: row.workspace_id,
        ledger: row.ledger,
        debitAccountId: row.debit_account_id,
        creditAccountId: row.credit_account_id,
        amount: BigInt(row.amount),
        phase: row.phase,
        pendingId: row.pending_id,
        code: row.code,
      });
      execution.charged.set(row.debit_account_id, { kind: row.debit_kind, grantId: row.debit_grant_id });
      byExecution.set(row.cause_id, execution);
    }
    return byExecution;
  }

  /**
   * Writes entries TigerBeetle-style: an id already written with the same fields is a duplicate and changes
   * nothing; with other fields it is a CONFLICT. Balances move once per new entry, in one update per account.
   */
  async post(transfers: Transfer[]): Promise<void> {
    if (transfers.length === 0) return;
    for (const transfer of transfers) {
      const problems = transferProblems(transfer);
      if (problems.length > 0) throw new LedgerError(`transfer ${transfer.id}: ${problems.join('; ')}`);
    }
    const column = <K extends keyof Transfer>(key: K) => transfers.map((transfer) => transfer[key]);
    const inserted: Array<{ id: string }> = await this.manager.query(
      `INSERT INTO transfers (id, cause_id, workspace_id, ledger, debit_account_id, credit_account_id, amount, phase, pending_id, code, decision_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[])
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      [
        column('id'),
        column('causeId'),
        column('workspaceId'),
        column('ledger'),
        column('debitAccountId'),
        column('creditAccountId'),
        column('amount').map(String),
        column('phase'),
        column('pendingId'),
        column('code'),
        transfers.map((transfer) => transfer.decisionId ?? null),
      ],
    );
    const fresh = new Set(inserted.map((row) => row.id));
    await this.checkDuplicates(transfers.filter((transfer) => !fresh.has(transfer.id)));
    await this.applyBalances(transfers.filter((transfer) => fresh.has(transfer.id)));
  }

  private async checkDuplicates(repeated: Transfer[]): Promise<void> {
    if (repeated.length === 0) return;
    const existing = new Map((await this.manager.getRepository(TransferEntity).findBy({ id: In(repeated.map((t) => t.id)) })).map((row) => [row.id, row]));
    for (const transfer of repeated) {
      const { createdAt: _createdAt, ...stored } = existing.get(transfer.id)!;
      if (compareWithExisting(stored, transfer) === 'conflict') {
        throw new ServiceError('CONFLICT', `Ledger entry ${transfer.id} already exists with other amounts or accounts.`);
      }
    }
  }

  private async applyBalances(transfers: Transfer[]): Promise<void> {
    const net = [...netChanges(transfers)];
    if (net.length === 0) return;
    // The one-statement reservation locks a period's included volume (its budget row) before the decisions-billed
    // account; locking here in that order too, budget rows first, means no cycle of waits with it or between
    // batches. Taken just before the update, so that the budget rows stay locked for as short a time as possible.
    await this.manager.query(`SELECT 1 FROM ledger_accounts WHERE id = ANY($1::text[]) ORDER BY kind <> 'included_volume', id FOR NO KEY UPDATE`, [
      net.map(([id]) => id),
    ]);
    const result: unknown = await this.manager.query(
      `UPDATE ledger_accounts AS account SET
         debits_pending = account.debits_pending + change.debits_pending,
         debits_posted = account.debits_posted + change.debits_posted,
         credits_pending = account.credits_pending + change.credits_pending,
         credits_posted = account.credits_posted + change.credits_posted
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])
         AS change (id, debits_pending, debits_posted, credits_pending, credits_posted)
       WHERE account.id = change.id`,
      [
        net.map(([id]) => id),
        net.map(([, change]) => String(change.debitsPending)),
        net.map(([, change]) => String(change.debitsPosted)),
        net.map(([, change]) => String(change.creditsPending)),
        net.map(([, change]) => String(change.creditsPosted)),
      ],
    );
    const updated = rowsAffected(result);
    if (updated !== net.length) throw new LedgerError(`entries name ${net.length} accounts but ${updated} exist`);
  }
}

interface HoldRow {
  id: string;
  cause_id: string;
  workspace_id: string;
  ledger: Transfer['ledger'];
  debit_account_id: string;
  credit_account_id: string;
  amount: string;
  phase: Transfer['phase'];
  pending_id: string | null;
  code: Transfer['code'];
  debit_kind: string;
  debit_grant_id: string | null;
}

export interface PeriodView {
  includedVolume: Balances;
  overageVolume: Balances;
  spend: Balances;
  missing: LedgerAccountSpec[];
  sources: CreditSource[];
}

function sourceOf(row: LedgerAccountEntity): CreditSource {
  return {
    accountId: row.id,
    kind: row.kind === 'paid_balance' ? 'paid' : 'promotional',
    grantId: row.grantId,
    expiresAt: row.expiresAt,
    grantedAt: row.createdAt,
    availableMicros: availableOf(balancesOf(row)),
  };
}

function balancesOf(row: LedgerAccountEntity): Balances {
  return { debitsPending: row.debitsPending, debitsPosted: row.debitsPosted, creditsPending: row.creditsPending, creditsPosted: row.creditsPosted };
}

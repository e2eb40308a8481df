import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CreditGrantReply, GrantCreditsRequest, ServiceError, ValidationIssue } from '@ds/contracts';
import { CreditGrant, expiryEntries, expiryIssues, grantEntries, sameGrant } from '@ds/billing';
import { CreditGrantEntity } from './entities';
import { LedgerStore } from './ledger.store';
import { checkIds } from './id-checks';

const EXPIRY_BATCH = 500;

@Injectable()
export class CreditsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Grants promotional or paid credits once per grant id. A workspace is billed in one currency: the first grant
   * chooses it (usd until then), and a grant in another currency is a CONFLICT, because converting would need an
   * exchange rate the ledger does not have.
   */
  async grant(request: GrantCreditsRequest): Promise<CreditGrantReply> {
    checkIds({ workspaceId: request.workspaceId, grantId: request.grantId });
    const grant: CreditGrant = {
      kind: request.kind,
      amountCents: request.amount_cents,
      currency: request.currency,
      expiresAt: request.expires_at ? new Date(request.expires_at) : null,
    };
    const now = new Date();
    return this.db.transaction(async (manager) => {
      const ledger = new LedgerStore(manager);
      const account = await ledger.lockAccount(request.workspaceId, now);
      const existing = await ledger.creditGrant(request.workspaceId, request.grantId);
      if (existing) {
        if (sameGrant(grantOf(existing), grant)) return view(existing);
        throw new ServiceError('CONFLICT', `Grant ${request.grantId} was already made with other fields.`);
      }
      const issues = expiryIssues(grant, now);
      if (issues.length > 0) throw invalid(issues);
      if (grant.currency !== account.currency) {
        if (await ledger.hasCreditGrants(request.workspaceId)) {
          throw new ServiceError('CONFLICT', `This workspace is billed in ${account.currency}; credits must be granted in ${account.currency}.`);
        }
        await ledger.updateAccount(request.workspaceId, { currency: grant.currency });
      }
      const entries = grantEntries(request.workspaceId, request.grantId, grant);
      await ledger.ensureLedgerAccounts(entries.accounts);
      await ledger.post([entries.transfer]);
      return view(
        await ledger.insertCreditGrant({
          workspaceId: request.workspaceId,
          grantId: request.grantId,
          ...grant,
          transferId: entries.transfer.id,
          createdAt: now,
        }),
      );
    });
  }

  /** Moves what is left of expired promotional grants to the expired account; returns how many grants it expired. */
  async expireDue(now: Date): Promise<number> {
    const due = await new LedgerStore(this.db.manager).expiredGrantsWithMoney(now, EXPIRY_BATCH);
    let expired = 0;
    for (const grant of due) {
      const done = await this.db.transaction(async (manager) => {
        const ledger = new LedgerStore(manager);
        await ledger.lockAccount(grant.workspaceId, now);
        const entries = expiryEntries(grant, (await ledger.balances([grant.id])).get(grant.id)!);
        if (!entries) return false;
        await ledger.ensureLedgerAccounts(entries.accounts);
        await ledger.post([entries.transfer]);
        return true;
      });
      if (done) expired++;
    }
    return expired;
  }
}

function invalid(issues: ValidationIssue[]): ServiceError {
  return new ServiceError('INVALID_REQUEST', 'The credit grant is not valid.', issues);
}

function grantOf(row: CreditGrantEntity): CreditGrant {
  return { kind: row.kind, amountCents: row.amountCents, currency: row.currency, expiresAt: row.expiresAt };
}

function view(row: CreditGrantEntity): CreditGrantReply {
  return {
    id: row.grantId,
    kind: row.kind,
    amount_cents: row.amountCents,
    currency: row.currency,
    expires_at: row.expiresAt?.toISOString() ?? null,
    granted_at: row.createdAt.toISOString(),
  };
}

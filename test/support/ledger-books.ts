import { DataSource, EntityManager } from 'typeorm';
import { Balances, replayEntries, Transfer, unbalancedLedgers, ZERO_BALANCES } from '@ds/billing';
import { LedgerAccountEntity, TransferEntity } from '../../apps/billing-ledger/src/entities';

export interface BooksCheck {
  /** The entries read. */
  entries: number;
  /** Accounts whose stored balances are not the replay of their entries, with both. */
  drifted: Array<{ id: string; stored: Balances; replayed: Balances }>;
  /** Ledgers (currencies, decisions) whose accounts do not sum to zero. */
  unbalanced: string[];
}

/**
 * The billing ledger's books as its specs check them after whatever ran: every stored balance equals the replay
 * of the account's entries, and every ledger sums to zero. Answers what is off rather than asserting it, so each
 * spec says what it expects (usually nothing off) in its own words.
 */
export async function checkBooks(db: DataSource | EntityManager): Promise<BooksCheck> {
  const entries = (await db.getRepository(TransferEntity).find()).map(({ createdAt: _createdAt, ...transfer }) => transfer as Transfer);
  // Balances are sums, so only the holds-before-resolutions order matters to the replay.
  entries.sort((a, b) => Number(a.pendingId !== null) - Number(b.pendingId !== null));
  const replayed = replayEntries(entries);
  const accounts = await db.getRepository(LedgerAccountEntity).find();
  const drifted: BooksCheck['drifted'] = [];
  for (const account of accounts) {
    const stored: Balances = {
      debitsPending: account.debitsPending,
      debitsPosted: account.debitsPosted,
      creditsPending: account.creditsPending,
      creditsPosted: account.creditsPosted,
    };
    const expected = replayed.get(account.id) ?? ZERO_BALANCES;
    const same = (Object.keys(stored) as Array<keyof Balances>).every((field) => stored[field] === expected[field]);
    if (!same) drifted.push({ id: account.id, stored, replayed: { ...expected } });
  }
  return { entries: entries.length, drifted, unbalanced: unbalancedLedgers(accounts.map((account) => ({ ledger: account.ledger, balances: account }))) };
}

import { Currency } from '@ds/contracts';

/** Decisions are counted on a ledger of their own; money has one ledger per currency. Amounts never cross ledgers. */
export type LedgerName = 'decisions' | Currency;

/**
 * TigerBeetle's two-phase transfers: `pending` holds an amount, `post` or `void` resolves exactly one pending
 * transfer (same accounts, same amount), `single` moves at once.
 */
export type TransferPhase = 'single' | 'pending' | 'post' | 'void';

export type TransferCode = 'included_decision' | 'overage_decision' | 'decision_charge' | 'grant' | 'expiry';

/** One balanced entry: `amount` leaves the debit account and reaches the credit account of the same ledger. */
export interface Transfer {
  id: string;
  /** What caused the entry: an execution id, a grant id, an expired grant's account. */
  causeId: string;
  workspaceId: string;
  ledger: LedgerName;
  debitAccountId: string;
  creditAccountId: string;
  amount: bigint;
  phase: TransferPhase;
  pendingId: string | null;
  code: TransferCode;
  /**
   * The decision whose run a posted entry bills, for usage per decision; null or absent on every other entry and
   * on entries of settlements that did not name it. A label, not part of the entry's amounts or accounts.
   */
  decisionId?: string | null;
}

export interface Balances {
  debitsPending: bigint;
  debitsPosted: bigint;
  creditsPending: bigint;
  creditsPosted: bigint;
}

export const ZERO_BALANCES: Readonly<Balances> = Object.freeze({ debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n });

export class LedgerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerError';
  }
}

export function transferProblems(transfer: Transfer): string[] {
  const problems: string[] = [];
  if (transfer.amount <= 0n) problems.push('amount must be positive');
  if (transfer.debitAccountId === transfer.creditAccountId) problems.push('debit and credit accounts must differ');
  const resolves = transfer.phase === 'post' || transfer.phase === 'void';
  if (resolves !== (transfer.pendingId !== null)) problems.push('exactly the post and void transfers name a pending transfer');
  return problems;
}

/** The post or void of a hold moves exactly what the hold held, between the same accounts. */
export function resolvePending(pending: Transfer, phase: 'post' | 'void'): Transfer {
  if (pending.phase !== 'pending') throw new LedgerError(`transfer ${pending.id} is not pending`);
  return { ...pending, id: `${pending.id}:${phase}`, phase, pendingId: pending.id };
}

/** The answer to a transfer whose id is taken: the very same transfer is a duplicate, anything else a conflict. */
export function compareWithExisting(existing: Transfer, incoming: Transfer): 'duplicate' | 'conflict' {
  const same =
    existing.id === incoming.id &&
    existing.causeId === incoming.causeId &&
    existing.workspaceId === incoming.workspaceId &&
    existing.ledger === incoming.ledger &&
    existing.debitAccountId === incoming.debitAccountId &&
    existing.creditAccountId === incoming.creditAccountId &&
    existing.amount === incoming.amount &&
    existing.phase === incoming.phase &&
    existing.pendingId === incoming.pendingId &&
    existing.code === incoming.code;
  return same ? 'duplicate' : 'conflict';
}

/** What one transfer does to its debit account and to its credit account. */
export function balanceChanges(transfer: Transfer): Array<[string, Balances]> {
  const a = transfer.amount;
  const side = (pending: bigint, posted: bigint) => ({ pending, posted });
  const { pending, posted } = {
    single: side(0n, a),
    pending: side(a, 0n),
    post: side(-a, a),
    void: side(-a, 0n),
  }[transfer.phase];
  return [
    [transfer.debitAccountId, { ...ZERO_BALANCES, debitsPending: pending, debitsPosted: posted }],
    [transfer.creditAccountId, { ...ZERO_BALANCES, creditsPending: pending, creditsPosted: posted }],
  ];
}

export function addBalances(a: Balances, b: Balances): Balances {
  return {
    debitsPending: a.debitsPending + b.debitsPending,
    debitsPosted: a.debitsPosted + b.debitsPosted,
    creditsPending: a.creditsPending + b.creditsPending,
    creditsPosted: a.creditsPosted + b.creditsPosted,
  };
}

/** The changes of several transfers summed per account, so that a batch updates each account once. */
export function netChanges(transfers: Transfer[]): Map<string, Balances> {
  const net = new Map<string, Balances>();
  for (const transfer of transfers) {
    for (const [accountId, change] of balanceChanges(transfer)) net.set(accountId, addBalances(net.get(accountId) ?? ZERO_BALANCES, change));
  }
  return net;
}

/**
 * Rebuilds every account's balances from the entries alone, in order, and checks on the way that each entry is
 * well formed and that each post or void resolves exactly one earlier hold with the same accounts and amount.
 */
export function replayEntries(transfers: Transfer[]): Map<string, Balances> {
  const holds = new Map<string, Transfer>();
  const resolved = new Set<string>();
  const seen = new Set<string>();
  for (const transfer of transfers) {
    const problems = transferProblems(transfer);
    if (problems.length > 0) throw new LedgerError(`transfer ${transfer.id}: ${problems.join('; ')}`);
    if (seen.has(transfer.id)) throw new LedgerError(`transfer ${transfer.id} appears twice`);
    seen.add(transfer.id);
    if (transfer.phase === 'pending') holds.set(transfer.id, transfer);
    if (transfer.pendingId !== null) {
      const hold = holds.get(transfer.pendingId);
      if (!hold) throw new LedgerError(`transfer ${transfer.id} resolves ${transfer.pendingId}, which is no earlier hold`);
      if (resolved.has(hold.id)) throw new LedgerError(`hold ${hold.id} is resolved twice`);
      const matches =
        hold.ledger === transfer.ledger &&
        hold.debitAccountId === transfer.debitAccountId &&
        hold.creditAccountId === transfer.creditAccountId &&
        hold.amount === transfer.amount;
      if (!matches) throw new LedgerError(`transfer ${transfer.id} does not match its hold ${hold.id}`);
      resolved.add(hold.id);
    }
  }
  return netChanges(transfers);
}

/** The ledgers whose debits and credits (posted, and pending) do not add up to the same total; empty when the books balance. */
export function unbalancedLedgers(accounts: Array<{ ledger: string; balances: Balances }>): string[] {
  const totals = new Map<string, { posted: bigint; pending: bigint }>();
  for (const { ledger, balances } of accounts) {
    const total = totals.get(ledger) ?? { posted: 0n, pending: 0n };
    total.posted += balances.creditsPosted - balances.debitsPosted;
    total.pending += balances.creditsPending - balances.debitsPending;
    totals.set(ledger, total);
  }
  return [...totals].filter(([, total]) => total.posted !== 0n || total.pending !== 0n).map(([ledger]) => ledger);
}

/** What an account that may not be overdrawn can still give: credits received minus debits posted or held. */
export function availableOf(balances: Balances): bigint {
  return balances.creditsPosted - balances.debitsPosted - balances.debitsPending;
}

import { Balances, replayEntries, Transfer, unbalancedLedgers } from '@ds/billing';

/**
 * What must hold after any mix of crashes and restarts, checked from what the clients saw and what the services
 * stored. Pure: the chaos run collects the facts, this decides. Each violation names its invariant.
 */

/** One answer a client received (a connection that failed carries status 0). */
export interface Observed {
  workspaceId: string;
  idempotencyKey: string | null;
  status: number;
  body: string;
  retryAfter: string | null;
  replayed: boolean;
}

export interface ExecutionRow {
  id: string;
  workspaceId: string;
  status: 'success' | 'error';
  /** The run's `state.message`, which carries the idempotency key of a keyed run. */
  message: string | null;
}

export interface ReservationRow {
  executionId: string;
  workspaceId: string;
  state: 'pending' | 'committed' | 'released';
}

export interface LedgerAccountRow extends Balances {
  id: string;
  ledger: string;
  workspaceId: string;
}

export interface Caps {
  /** Workspaces on a hard cap: the most decisions they may be billed. */
  hardCaps: Record<string, number>;
  /** Workspaces with a spend cap: the most cents their decisions may cost. */
  spendCaps: Record<string, number>;
}

export interface LeaseRow {
  id: string;
  workspaceId: string;
  state: 'open' | 'draining' | 'closed';
  held: number;
}

export interface Delivered {
  /** Delivery ids the runs answered as `queued`. */
  queued: string[];
  /** Delivery ids queued by executions recorded as successful, whether or not their answer reached a client. */
  recorded: string[];
  /** Every delivery id the receiver saw, once per attempt that reached it. */
  received: string[];
}

export interface Facts {
  observed: Observed[];
  executions: ExecutionRow[];
  reservations: ReservationRow[];
  transfers: Transfer[];
  ledgerAccounts: LedgerAccountRow[];
  /** Budget leases once the run is over; absent where the cluster gave none. */
  leases?: LeaseRow[];
  caps: Caps;
  deliveries: Delivered | null;
  /** Error codes and the status each must come with (libs/contracts). */
  errorStatuses: Record<string, number>;
}

export interface Violation {
  invariant: string;
  detail: string;
}

const MAX_DETAILS_PER_INVARIANT = 5;

export function checkInvariants(facts: Facts): Violation[] {
  const violations: Violation[] = [];
  const report = (invariant: string, detail: string) => {
    if (violations.filter((v) => v.invariant === invariant).length < MAX_DETAILS_PER_INVARIANT) violations.push({ invariant, detail });
    else if (!violations.some((v) => v.invariant === invariant && v.detail === '…and more')) violations.push({ invariant, detail: '…and more' });
  };

  const executions = new Map(facts.executions.map((row) => [row.id, row]));
  const reservations = new Map(facts.reservations.map((row) => [row.executionId, row]));
  const answered = facts.observed.filter((o) => o.status === 200).map((o) => ({ o, body: parse(o.body) }));

  // Every 200 a client received is one recorded, successful execution of that workspace.
  for (const { o, body } of answered) {
    const id = typeof body?.execution_id === 'string' ? body.execution_id : null;
    const row = id ? executions.get(id) : undefined;
    if (!row) report('every 200 has its execution', `${id ?? 'a 200 without execution_id'} was answered but never recorded`);
    else if (row.workspaceId !== o.workspaceId || row.status !== 'success')
      report('every 200 has its execution', `${id} is recorded as ${row.status} in ${row.workspaceId}`);
  }

  // Every execution a client got a fresh 200 for is billed, and every billed execution exactly once.
  for (const { o, body } of answered) {
    if (o.replayed || body?.action_reason?.type === 'engine_error') continue;
    const reservation = reservations.get(body?.execution_id);
    if (reservation?.state !== 'committed')
      report('every fresh 200 is billed', `${body?.execution_id} answered 200 but its reservation is ${reservation?.state ?? 'missing'}`);
  }
  const resolutions = new Map<string, Transfer[]>();
  const holdsByExecution = new Map<string, Transfer[]>();
  for (const transfer of facts.transfers) {
    if (transfer.phase === 'pending') holdsByExecution.set(transfer.causeId, [...(holdsByExecution.get(transfer.causeId) ?? []), transfer]);
    if (transfer.pendingId) resolutions.set(transfer.pendingId, [...(resolutions.get(transfer.pendingId) ?? []), transfer]);
  }
  for (const reservation of facts.reservations) {
    if (reservation.state === 'pending') {
      report('every reservation is settled once', `${reservation.executionId} is still pending after the run`);
      continue;
    }
    const expected = reservation.state === 'committed' ? 'post' : 'void';
    for (const hold of holdsByExecution.get(reservation.executionId) ?? []) {
      const settled = resolutions.get(hold.id) ?? [];
      if (settled.length !== 1 || settled[0]!.phase !== expected) {
        report(
          'every reservation is settled once',
          `${reservation.executionId} is ${reservation.state} but its hold ${hold.id} has ${settled.map((t) => t.phase).join(', ') || 'no'} resolutions`,
        );
      }
    }
    if (reservation.state === 'committed' && executions.get(reservation.executionId)?.status !== 'success') {
      report(
        'only successful executions are billed',
        `${reservation.executionId} is billed but recorded as ${executions.get(reservation.executionId)?.status ?? 'missing'}`,
      );
    }
  }

  // Once every run has ended, every budget lease is closed and holds nothing: no unit stranded, none billed twice.
  for (const lease of facts.leases ?? []) {
    if (lease.state !== 'closed' || lease.held !== 0)
      report('every budget lease is closed and holds nothing', `${lease.id} is ${lease.state} and still holds ${lease.held}`);
  }

  // Caps: never a decision past a hard cap, never a cent past a spend cap.
  const committedBy = countBy(
    facts.reservations.filter((r) => r.state === 'committed'),
    (r) => r.workspaceId,
  );
  for (const [workspaceId, cap] of Object.entries(facts.caps.hardCaps)) {
    const billed = committedBy.get(workspaceId) ?? 0;
    if (billed > cap) report('no workspace passes its hard cap', `${workspaceId} billed ${billed} decisions over a cap of ${cap}`);
  }
  for (const [workspaceId, cap] of Object.entries(facts.caps.spendCaps)) {
    const spent = facts.transfers
      .filter((t) => t.workspaceId === workspaceId && t.code === 'decision_charge' && (t.phase === 'post' || t.phase === 'single'))
      .reduce((sum, t) => sum + BigInt(t.amount), 0n);
    // Money is kept in micro-cents.
    if (spent > BigInt(cap) * 1_000_000n) report('no workspace passes its spend cap', `${workspaceId} spent ${Number(spent) / 1e6} cents over a cap of ${cap}`);
  }

  // The books: each balance is the sum of its entries, and each ledger sums to zero.
  const ordered = [...facts.transfers].sort((a, b) => Number(a.pendingId !== null) - Number(b.pendingId !== null));
  let replayed: Map<string, Balances>;
  try {
    replayed = replayEntries(ordered);
  } catch (error) {
    report('balances equal their entries', `the entries do not replay: ${(error as Error).message}`);
    replayed = new Map();
  }
  for (const account of facts.ledgerAccounts) {
    const expected = replayed.get(account.id) ?? { debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n };
    for (const field of ['debitsPending', 'debitsPosted', 'creditsPending', 'creditsPosted'] as const) {
      if (BigInt(account[field]) !== expected[field])
        report('balances equal their entries', `${account.id} ${field} is ${account[field]}, its entries sum to ${expected[field]}`);
    }
  }
  for (const ledger of unbalancedLedgers(facts.ledgerAccounts.map((account) => ({ ledger: account.ledger, balances: account })))) {
    report('balances equal their entries', `ledger ${ledger} does not sum to zero`);
  }

  // Idempotency: one key, one run; every answer to it byte for byte the first.
  const byKey = new Map<string, Array<{ o: Observed; body: any }>>();
  for (const answer of answered) if (answer.o.idempotencyKey) byKey.set(keyOf(answer.o), [...(byKey.get(keyOf(answer.o)) ?? []), answer]);
  for (const [key, answers] of byKey) {
    if (new Set(answers.map((a) => a.o.body)).size > 1)
      report('a replay is the first answer byte for byte', `${key} was answered ${new Set(answers.map((a) => a.o.body)).size} different ways`);
  }
  const successfulRunsByKey = countBy(
    facts.executions.filter((e) => e.status === 'success' && e.message?.startsWith('key:')),
    (e) => `${e.workspaceId}/${e.message!.slice(4)}`,
  );
  for (const [key, runs] of successfulRunsByKey) if (runs > 1) report('no idempotency key runs twice', `${key} ran ${runs} times`);

  // Deliveries: each one queued by a successful run reached the receiver. (A run that queued its deliveries and
  // then failed, say its database went away before the execution was written, may still deliver: that is allowed.)
  if (facts.deliveries) {
    const received = new Set(facts.deliveries.received);
    for (const id of new Set([...facts.deliveries.queued, ...facts.deliveries.recorded])) {
      if (!received.has(id)) report('every queued delivery arrives', `${id} never reached the receiver`);
    }
  }

  // Refusals: the one error shape, its code's status, and 5xx only as a retryable 503 or 504.
  for (const o of facts.observed) {
    if (o.status === 0 || (o.status >= 200 && o.status < 300)) continue;
    const error = parse(o.body)?.error;
    if (typeof error?.code !== 'string' || typeof error?.message !== 'string' || typeof error?.request_id !== 'string') {
      report('errors have the error shape', `a ${o.status} answered ${o.body.slice(0, 120)}`);
      continue;
    }
    if (facts.errorStatuses[error.code] !== o.status) report('errors have the error shape', `${error.code} came with ${o.status}`);
    if (o.status >= 500 && (![503, 504].includes(o.status) || !o.retryAfter))
      report('5xx only as 503/504 with Retry-After', `${o.status} ${error.code} retry-after ${o.retryAfter ?? 'missing'}`);
  }
  return violations;
}

function keyOf(o: Observed): string {
  return `${o.workspaceId}/${o.idempotencyKey}`;
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

import { Currency, PlanView } from '@ds/contracts';
import { chart } from './chart';
import { CreditSource } from './consumption';
import { Transfer } from './ledger';
import { leaseHold, leaseRate, leaseSettlement, leaseSize } from './leases';
import { decisionPriceMicros } from './units';
import {
  leaseTakesUntil,
  LeaseSource,
  MoneyLease,
  moneyLeaseHolds,
  moneyLeaseRehold,
  moneyLeaseRoom,
  moneyLeaseSettlement,
  moneyLeaseSources,
} from './money-leases';
import { Period } from './periods';
import { includedRoom } from './room';

/**
 * A budget lease as the ledger keeps it, and the rules that move it: which lease a grant answers or makes, what a
 * settlement, a reclaim, a drain or a close does to it, and when its money is held again from the front of the
 * consumption order. Every function here answers a new lease and the entries to post; the ledger locks, loads,
 * calls and saves.
 */

/**
 * `open`: its counter in Redis gives units until `takesUntil`. `draining`: its counter is gone and its untaken
 * rest freed; it still holds the units taken by runs not settled yet. `closed`: it holds nothing.
 */
export type LeaseState = 'open' | 'draining' | 'closed';

/** What a money lease still holds of one credit source, as its row stores it (micro-cents as text: jsonb has no bigint). */
export interface LeaseMoneyRow {
  account_id: string;
  kind: 'promotional' | 'paid';
  grant_id: string | null;
  micros: string;
}

export interface Lease {
  id: string;
  workspaceId: string;
  periodStart: Date;
  /** Decisions granted. */
  units: number;
  /** Decisions still held: granted, less those settled against it and those freed. */
  held: number;
  /** The number of its current holds. */
  holdSeq: number;
  state: LeaseState;
  grantedAt: Date;
  takesUntil: Date;
  closedAt: Date | null;
  /** `included`: its units are decisions of the included volume. `credits`: overage decisions and their money. */
  funding: 'included' | 'credits';
  currency: Currency | null;
  unitPriceMicros: bigint | null;
  moneyHeld: LeaseMoneyRow[];
  /** Whether its grant put it in the counter: until then no run can have taken a unit of it. */
  counted: boolean;
}

/** A money lease as its row records it, with the accounts its holds move between. */
export function moneyLeaseOf(lease: Lease): MoneyLease {
  if (lease.funding !== 'credits' || lease.currency === null || lease.unitPriceMicros === null) throw new Error(`lease ${lease.id} is not a money lease`);
  return {
    id: lease.id,
    workspaceId: lease.workspaceId,
    currency: lease.currency,
    seq: lease.holdSeq,
    held: lease.held,
    unitPriceMicros: lease.unitPriceMicros,
    sources: lease.moneyHeld.map((row) => ({ accountId: row.account_id, kind: row.kind, grantId: row.grant_id, heldMicros: BigInt(row.micros) })),
    accounts: {
      overageVolumeId: chart.overageVolume(lease.workspaceId, lease.periodStart).id,
      decisionsBilledId: chart.decisionsBilled(lease.workspaceId).id,
      spendId: chart.spend(lease.workspaceId, lease.currency, lease.periodStart).id,
    },
  };
}

export function moneyRows(sources: LeaseSource[]): LeaseMoneyRow[] {
  return sources.map((source) => ({ account_id: source.accountId, kind: source.kind, grant_id: source.grantId, micros: source.heldMicros.toString() }));
}

/** What moves a lease: billed executions (each under its decision in `decisions`), units freed, the state it is left in. */
export interface LeaseMove {
  billed?: string[];
  freed: number;
  state?: LeaseState;
  decisions?: ReadonlyMap<string, string | null>;
}

/**
 * A lease's holds moved on by what settled against it: billed executions posted, `freed` units back to the budget
 * (with their money for a money lease), and its new holds, state and close time (`now` when it closes now). Answers
 * the lease as it is after the move and the entries to post.
 */
export function settleLease(lease: Lease, move: LeaseMove, now: Date): { lease: Lease; transfers: Transfer[] } {
  const billed = move.billed ?? [];
  const decisions = move.decisions ?? new Map<string, string | null>();
  let next: Lease = { ...lease };
  let transfers: Transfer[] = [];
  if (lease.held > 0 && lease.funding === 'credits') {
    const moved = moneyLeaseSettlement(moneyLeaseOf(lease), billed, move.freed, decisions);
    transfers = moved.transfers;
    next = { ...next, held: moved.next.held, holdSeq: moved.next.seq, moneyHeld: moneyRows(moved.next.sources) };
  } else if (lease.held > 0) {
    const current = leaseHold(lease.id, lease.holdSeq, lease.workspaceId, lease.held, {
      includedVolumeId: chart.includedVolume(lease.workspaceId, lease.periodStart).id,
      decisionsBilledId: chart.decisionsBilled(lease.workspaceId).id,
    });
    const moved = leaseSettlement(current, billed, move.freed, decisions);
    transfers = moved.transfers;
    if (moved.next !== current) next = { ...next, held: moved.next ? Number(moved.next.amount) : 0, holdSeq: moved.next ? lease.holdSeq + 1 : lease.holdSeq };
  }
  const state = move.state ?? lease.state;
  next.state = state !== 'open' && next.held === 0 ? 'closed' : state;
  next.closedAt = next.state === 'closed' ? (lease.closedAt ?? now) : null;
  return { lease: next, transfers };
}

/**
 * A reclaim of an open lease: its units still in the counter go back (`inCounter`, null when the counter no
 * longer has it: never put, so no unit was taken and all of it goes back; or replaced, being drained, or lost with
 * Redis, and what it holds is voided when it closes), and it drains. Null when it is not open.
 */
export function reclaimMove(lease: Lease, inCounter: number | null): LeaseMove | null {
  if (lease.state !== 'open') return null;
  return { freed: Math.min(inCounter ?? (lease.counted ? 0 : lease.held), lease.held), state: 'draining' };
}

/** The counter no longer gives units of this open lease: its `left` untaken units go back, the rest stays held for the runs in flight. */
export function drainMove(lease: Lease, left: number): LeaseMove | null {
  return lease.state === 'open' ? { freed: Math.min(left, lease.held), state: 'draining' } : null;
}

/** No run can settle against the lease any more: what it still holds is voided. Null when already closed. */
export function closeMove(lease: Lease): LeaseMove | null {
  return lease.state === 'closed' ? null : { freed: lease.held, state: 'closed' };
}

/** Whether a money lease's money is held again from the front: open, holding, and still giving units. */
export function mayHoldFromFront(lease: Lease, now: Date): boolean {
  return lease.state === 'open' && lease.funding === 'credits' && lease.held > 0 && lease.takesUntil > now;
}

export type Rehold = { kind: 'unchanged' } | { kind: 'uncovered' } | { kind: 'moved'; lease: Lease; transfers: Transfer[] };

/**
 * A money lease's money held again from the front of the consumption order (`ordered`: the workspace's usable
 * sources in that order, counting what this lease holds of them). `uncovered` when they no longer cover it (one
 * expired just now): it then keeps what it holds.
 */
export function reholdLease(lease: Lease, ordered: CreditSource[]): Rehold {
  const money = moneyLeaseOf(lease);
  if (money.held > 0 && moneyLeaseSources(ordered, money.unitPriceMicros, money.held) === null) return { kind: 'uncovered' };
  const rehold = moneyLeaseRehold(money, ordered);
  if (rehold.transfers.length === 0) return { kind: 'unchanged' };
  return { kind: 'moved', lease: { ...lease, holdSeq: rehold.next.seq, moneyHeld: moneyRows(rehold.next.sources) }, transfers: rehold.transfers };
}

/** Whether a grant answers the workspace's latest lease: still giving units, and not the one the asking runner saw used up. */
export function answersLatest(latest: Lease | null, seenLeaseId: string | null, now: Date): latest is Lease {
  return latest !== null && latest.state === 'open' && latest.takesUntil > now && latest.id !== seenLeaseId;
}

export interface GrantFacts {
  now: Date;
  period: Period;
  plan: Pick<PlanView, 'included_decisions' | 'hard_cap' | 'price_per_million_cents'>;
  /** The workspace's latest lease, when answersLatest did not answer it. */
  latest: Pick<Lease, 'id' | 'units' | 'grantedAt'> | null;
  /** The lease the asking runner saw, and how many of its units it saw taken. */
  seenLeaseId: string | null;
  seenTaken?: number;
  /** Decisions of the period's included volume taken, held ones included. */
  includedUsed: number;
  /** Whether leases past the included volume are granted at all. */
  moneyLeases: boolean;
  /** Whether an open included lease may be reclaimed first (once per grant). */
  mayReclaim: boolean;
  /** Read only when the decision is `past-included`. */
  overage?: OverageFacts;
}

/** Past the included volume: an open included lease (whose untaken rest goes first), or what pays for decisions. */
export type OverageFacts =
  { openIncludedLease: true } | { openIncludedLease: false; sources: CreditSource[]; spentMicros: bigint; spendCapCents: number | null; currency: Currency };

export type GrantDecision =
  | { kind: 'included'; units: number; takesUntil: Date }
  | { kind: 'credits'; units: number; currency: Currency; unitPriceMicros: bigint; moneyHeld: LeaseMoneyRow[]; takesUntil: Date }
  /** The included volume is used up and the plan allows leases past it: decide again with `overage`. */
  | { kind: 'past-included' }
  /** The included volume is all held, part of it by an open lease no run may have taken from yet: reclaim it, then decide again. */
  | { kind: 'reclaim-first' }
  | { kind: 'none' };

/**
 * A new lease for the workspace, sized by the previous lease's rate and the room left: in the included volume, or
 * past it in what the credits pay for and the spend cap allows (a priced plan without a hard cap, with money
 * leases on). None when the room is too small for a lease: the last decisions before an edge go one at a time.
 * Never past the period's end: a run after it is the next period's, and takes its own decision.
 */
export function decideGrant(facts: GrantFacts): GrantDecision {
  const { latest, plan, now } = facts;
  // What the asking runner saw taken of the lease it saw, when that is the latest; else all of the latest's units.
  const taken =
    latest && latest.id === facts.seenLeaseId && Number.isInteger(facts.seenTaken) ? Math.min(Math.max(facts.seenTaken!, 0), latest.units) : latest?.units;
  const ratePerSecond = leaseRate(latest ? { units: taken!, grantedAt: latest.grantedAt } : null, now);
  const room = includedRoom(plan.included_decisions, facts.includedUsed);
  if (room > 0) {
    const units = leaseSize({ ratePerSecond, room });
    return units === 0 ? { kind: 'none' } : { kind: 'included', units, takesUntil: leaseTakesUntil(now, facts.period.end) };
  }
  if (!facts.moneyLeases || plan.hard_cap || plan.price_per_million_cents === null) return { kind: 'none' };
  const overage = facts.overage;
  if (!overage) return { kind: 'past-included' };
  if (overage.openIncludedLease) return facts.mayReclaim ? { kind: 'reclaim-first' } : { kind: 'none' };
  const unitPriceMicros = decisionPriceMicros(plan.price_per_million_cents);
  const units = leaseSize({
    ratePerSecond,
    room: moneyLeaseRoom({ unitPriceMicros, sources: overage.sources, spentMicros: overage.spentMicros, spendCapCents: overage.spendCapCents }),
  });
  if (units === 0) return { kind: 'none' };
  // The room is at most what the sources pay for, so they cover the lease.
  const held = moneyLeaseSources(overage.sources, unitPriceMicros, units)!;
  const paying = overage.sources.filter((source) => held.some((part) => part.accountId === source.accountId));
  return {
    kind: 'credits',
    units,
    currency: overage.currency,
    unitPriceMicros,
    moneyHeld: moneyRows(held),
    takesUntil: leaseTakesUntil(now, facts.period.end, paying),
  };
}

/** The lease a grant decision makes, open and holding all its units, and the entries of its holds. */
export function grantedLease(
  decision: Extract<GrantDecision, { kind: 'included' | 'credits' }>,
  fields: { id: string; workspaceId: string; periodStart: Date; now: Date },
): { lease: Lease; transfers: Transfer[] } {
  const lease: Lease = {
    id: fields.id,
    workspaceId: fields.workspaceId,
    periodStart: fields.periodStart,
    units: decision.units,
    held: decision.units,
    holdSeq: 0,
    state: 'open',
    grantedAt: fields.now,
    takesUntil: decision.takesUntil,
    closedAt: null,
    funding: decision.kind,
    currency: decision.kind === 'credits' ? decision.currency : null,
    unitPriceMicros: decision.kind === 'credits' ? decision.unitPriceMicros : null,
    moneyHeld: decision.kind === 'credits' ? decision.moneyHeld : [],
    counted: false,
  };
  const transfers =
    decision.kind === 'credits'
      ? moneyLeaseHolds(moneyLeaseOf(lease))
      : [
          leaseHold(lease.id, 0, lease.workspaceId, lease.units, {
            includedVolumeId: chart.includedVolume(lease.workspaceId, lease.periodStart).id,
            decisionsBilledId: chart.decisionsBilled(lease.workspaceId).id,
          }),
        ];
  return { lease, transfers };
}

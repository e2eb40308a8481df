import { chart } from './chart';
import { CreditSource } from './consumption';
import { LEASE_LIMITS } from './leases';
import {
  answersLatest,
  closeMove,
  decideGrant,
  drainMove,
  GrantFacts,
  grantedLease,
  Lease,
  mayHoldFromFront,
  moneyLeaseOf,
  reclaimMove,
  reholdLease,
  settleLease,
} from './lease-rules';
import { replayEntries } from './ledger';
import { centsToMicros, decisionPriceMicros } from './units';

const WS = '8f9f2c1e-0000-4000-8000-000000000003';
const PERIOD = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') };
const NOW = new Date('2026-11-20T10:00:00.000Z');
const LATER = new Date('2026-11-20T10:00:05.000Z');

const included = (fields: Partial<Lease> = {}): Lease => ({
  id: 'lease_included0000000000',
  workspaceId: WS,
  periodStart: PERIOD.start,
  units: 10,
  held: 10,
  holdSeq: 0,
  state: 'open',
  grantedAt: NOW,
  takesUntil: new Date(NOW.getTime() + LEASE_LIMITS.ttlMs),
  closedAt: null,
  funding: 'included',
  currency: null,
  unitPriceMicros: null,
  moneyHeld: [],
  counted: true,
  ...fields,
});

const source = (accountId: string, availableMicros: bigint, fields: Partial<CreditSource> = {}): CreditSource => ({
  accountId,
  kind: 'promotional',
  grantId: `grant_${accountId}`,
  expiresAt: null,
  grantedAt: new Date('2026-10-01T00:00:00Z'),
  availableMicros,
  ...fields,
});

/** A money lease of `units` decisions at 100 micro-cents, its money held from `a` (250) then `b`. */
const money = (units = 4, fields: Partial<Lease> = {}): Lease =>
  included({
    id: 'lease_money000000000000',
    units,
    held: units,
    funding: 'credits',
    currency: 'usd',
    unitPriceMicros: 100n,
    moneyHeld: [
      { account_id: 'a', kind: 'promotional', grant_id: 'grant_a', micros: String(Math.min(units * 100, 250)) },
      ...(units * 100 > 250 ? [{ account_id: 'b', kind: 'paid' as const, grant_id: null, micros: String(units * 100 - 250) }] : []),
    ],
    ...fields,
  });

describe('moneyLeaseOf', () => {
  it('reads a money lease’s row: its holds per source and the accounts they move between', () => {
    const read = moneyLeaseOf(money(4));
    expect(read).toMatchObject({ id: 'lease_money000000000000', seq: 0, held: 4, unitPriceMicros: 100n, currency: 'usd' });
    expect(read.sources).toEqual([
      { accountId: 'a', kind: 'promotional', grantId: 'grant_a', heldMicros: 250n },
      { accountId: 'b', kind: 'paid', grantId: null, heldMicros: 150n },
    ]);
    expect(read.accounts).toEqual({
      overageVolumeId: chart.overageVolume(WS, PERIOD.start).id,
      decisionsBilledId: chart.decisionsBilled(WS).id,
      spendId: chart.spend(WS, 'usd', PERIOD.start).id,
    });
  });

  it('refuses a lease of the included volume, or one missing its currency or price', () => {
    expect(() => moneyLeaseOf(included())).toThrow('is not a money lease');
    expect(() => moneyLeaseOf(money(4, { currency: null }))).toThrow('is not a money lease');
    expect(() => moneyLeaseOf(money(4, { unitPriceMicros: null }))).toThrow('is not a money lease');
  });
});

describe('settleLease', () => {
  it('posts billed runs of an included lease, frees units, and holds the rest under the next number, leaving the lease given unchanged', () => {
    const lease = included();
    const { lease: next, transfers } = settleLease(lease, { billed: ['exec_a', 'exec_b'], freed: 3, decisions: new Map([['exec_a', 'dec_x']]) }, LATER);
    expect(next).toMatchObject({ held: 5, holdSeq: 1, state: 'open', closedAt: null });
    expect(lease).toEqual(included());
    expect(transfers.map((t) => [t.id, t.phase, t.amount, t.decisionId ?? null])).toEqual([
      ['lease_included0000000000:hold:0:void', 'void', 10n, null],
      ['lease_included0000000000:hold:1', 'pending', 5n, null],
      ['exec_a:lease', 'single', 1n, 'dec_x'],
      ['exec_b:lease', 'single', 1n, null],
    ]);
  });

  it('changes nothing when nothing settled, and moves only its state when it holds nothing', () => {
    expect(settleLease(included(), { freed: 0 }, LATER)).toEqual({ lease: included(), transfers: [] });
    const empty = included({ held: 0, holdSeq: 3, state: 'draining' });
    expect(settleLease(empty, { freed: 0 }, LATER)).toEqual({ lease: { ...empty, state: 'closed', closedAt: LATER }, transfers: [] });
  });

  it('closes a draining lease once it holds nothing, at the time given, and keeps an earlier close time', () => {
    const drained = settleLease(included({ held: 2, state: 'draining' }), { billed: ['exec_a'], freed: 1 }, LATER);
    expect(drained.lease).toMatchObject({ held: 0, holdSeq: 0, state: 'closed', closedAt: LATER });
    expect(drained.transfers.map((t) => t.id)).toEqual(['lease_included0000000000:hold:0:void', 'exec_a:lease']);
    const closedAt = new Date('2026-11-20T09:00:00Z');
    expect(settleLease(included({ held: 0, state: 'closed', closedAt }), { freed: 0 }, LATER).lease.closedAt).toBe(closedAt);
  });

  it('keeps an open lease open even when all it held is settled, and moves it to the state asked', () => {
    expect(settleLease(included({ held: 1 }), { billed: ['exec_a'], freed: 0 }, LATER).lease).toMatchObject({ held: 0, state: 'open', closedAt: null });
    expect(settleLease(included(), { freed: 4, state: 'draining' }, LATER).lease).toMatchObject({ held: 6, state: 'draining' });
    expect(settleLease(included(), { freed: 10, state: 'closed' }, LATER).lease).toMatchObject({ held: 0, state: 'closed', closedAt: LATER });
  });

  it('refuses to settle more than the lease holds', () => {
    expect(() => settleLease(included({ held: 2 }), { billed: ['exec_a', 'exec_b'], freed: 1 }, LATER)).toThrow();
    expect(() => settleLease(money(2), { billed: ['exec_a'], freed: 2 }, LATER)).toThrow();
  });

  it('pays a money lease’s billed runs from the front of its money and gives freed units’ money back from the rear', () => {
    const { lease: next, transfers } = settleLease(money(4), { billed: ['exec_a', 'exec_b', 'exec_c'], freed: 1 }, LATER);
    expect(next).toMatchObject({ held: 0, holdSeq: 0, state: 'open' });
    expect(next.moneyHeld).toEqual([
      { account_id: 'a', kind: 'promotional', grant_id: 'grant_a', micros: '0' },
      { account_id: 'b', kind: 'paid', grant_id: null, micros: '0' },
    ]);
    const charges = transfers.filter((t) => t.code === 'decision_charge' && t.phase === 'single');
    expect(charges.map((t) => [t.id, t.debitAccountId, t.amount])).toEqual([
      ['exec_a:lease:0', 'a', 100n],
      ['exec_b:lease:0', 'a', 100n],
      ['exec_c:lease:0', 'a', 50n],
      ['exec_c:lease:1', 'b', 50n],
    ]);
    const partly = settleLease(money(4), { billed: ['exec_a'], freed: 1 }, LATER).lease;
    expect(partly).toMatchObject({ held: 2, holdSeq: 1 });
    expect(partly.moneyHeld.map((row) => row.micros)).toEqual(['150', '50']);
  });

  it('posts entries that balance: every hold voided once, nothing minted', () => {
    const { transfers } = settleLease(money(4), { billed: ['exec_a'], freed: 2 }, LATER);
    const all = [
      ...grantedLease(
        { kind: 'credits', units: 4, currency: 'usd', unitPriceMicros: 100n, moneyHeld: money(4).moneyHeld, takesUntil: LATER },
        {
          id: 'lease_money000000000000',
          workspaceId: WS,
          periodStart: PERIOD.start,
          now: NOW,
        },
      ).transfers,
      ...transfers,
    ];
    expect(() => replayEntries(all)).not.toThrow();
  });
});

describe('the moves of a reclaim, a drain and a close', () => {
  it('reclaims what the counter still has, all of a lease never put in it, nothing of one the counter lost', () => {
    expect(reclaimMove(included(), 4)).toEqual({ freed: 4, state: 'draining' });
    expect(reclaimMove(included({ held: 3 }), 4)).toEqual({ freed: 3, state: 'draining' });
    expect(reclaimMove(included({ counted: false }), null)).toEqual({ freed: 10, state: 'draining' });
    expect(reclaimMove(included({ counted: true }), null)).toEqual({ freed: 0, state: 'draining' });
    expect(reclaimMove(included({ state: 'draining' }), 4)).toBeNull();
    expect(reclaimMove(included({ state: 'closed' }), 4)).toBeNull();
  });

  it('drains an open lease by its untaken rest, at most what it holds', () => {
    expect(drainMove(included(), 6)).toEqual({ freed: 6, state: 'draining' });
    expect(drainMove(included({ held: 2 }), 6)).toEqual({ freed: 2, state: 'draining' });
    expect(drainMove(included({ state: 'draining' }), 6)).toBeNull();
  });

  it('closes what is not closed, voiding all it holds', () => {
    expect(closeMove(included({ held: 3, state: 'draining' }))).toEqual({ freed: 3, state: 'closed' });
    expect(closeMove(included())).toEqual({ freed: 10, state: 'closed' });
    expect(closeMove(included({ held: 0, state: 'closed' }))).toBeNull();
  });
});

describe('holding a money lease’s money again from the front', () => {
  it('is done only for an open money lease that holds units and still gives them', () => {
    expect(mayHoldFromFront(money(), NOW)).toBe(true);
    expect(mayHoldFromFront(included(), NOW)).toBe(false);
    expect(mayHoldFromFront(money(4, { state: 'draining' }), NOW)).toBe(false);
    expect(mayHoldFromFront(money(4, { held: 0 }), NOW)).toBe(false);
    expect(mayHoldFromFront(money(), money().takesUntil)).toBe(false);
  });

  it('moves the money to a source that came back to the front, leaves a lease already at the front, and keeps one no longer covered', () => {
    const lease = money(4);
    // What the lease holds counts as available again: a (250) and b (150), plus an earlier grant that came back.
    const early = source('early', 300n, { expiresAt: new Date('2026-11-25T00:00:00Z') });
    const moved = reholdLease(lease, [early, source('a', 250n), source('b', 150n, { kind: 'paid', grantId: null })]);
    expect(moved.kind).toBe('moved');
    if (moved.kind !== 'moved') return;
    expect(moved.lease).toMatchObject({ holdSeq: 1, held: 4 });
    expect(moved.lease.moneyHeld).toEqual([
      { account_id: 'early', kind: 'promotional', grant_id: 'grant_early', micros: '300' },
      { account_id: 'a', kind: 'promotional', grant_id: 'grant_a', micros: '100' },
    ]);
    expect(moved.transfers.filter((t) => t.phase === 'void')).toHaveLength(3);
    expect(reholdLease(lease, [source('a', 250n), source('b', 150n, { kind: 'paid', grantId: null })])).toEqual({ kind: 'unchanged' });
    expect(reholdLease(lease, [source('a', 250n)])).toEqual({ kind: 'uncovered' });
  });
});

describe('answersLatest', () => {
  it('answers the latest lease while it gives units, unless it is the one the runner saw', () => {
    const latest = included();
    expect(answersLatest(null, null, NOW)).toBe(false);
    expect(answersLatest(latest, null, NOW)).toBe(true);
    expect(answersLatest(latest, 'lease_other0000000000000', NOW)).toBe(true);
    expect(answersLatest(latest, latest.id, NOW)).toBe(false);
    expect(answersLatest(included({ state: 'draining' }), null, NOW)).toBe(false);
    expect(answersLatest(latest, null, latest.takesUntil)).toBe(false);
    expect(answersLatest(latest, null, new Date(latest.takesUntil.getTime() - 1))).toBe(true);
  });
});

describe('decideGrant', () => {
  const plan = { included_decisions: 1_000, hard_cap: false, price_per_million_cents: 100 };
  const facts = (fields: Partial<GrantFacts> = {}): GrantFacts => ({
    now: NOW,
    period: PERIOD,
    plan,
    latest: null,
    seenLeaseId: null,
    includedUsed: 0,
    moneyLeases: true,
    mayReclaim: true,
    ...fields,
  });
  // 200 units in 0.5 s: 400 a second, a lease of 400.
  const busy = { id: 'lease_seen000000000000000', units: 200, grantedAt: new Date(NOW.getTime() - 500) };

  it('leases from the included volume while it has room, sized by the previous lease’s rate, until its period’s end', () => {
    expect(decideGrant(facts())).toEqual({ kind: 'included', units: LEASE_LIMITS.minUnits, takesUntil: new Date(NOW.getTime() + LEASE_LIMITS.ttlMs) });
    expect(decideGrant(facts({ latest: busy }))).toMatchObject({ kind: 'included', units: 400 });
    const late = new Date(PERIOD.end.getTime() - 500);
    expect(decideGrant(facts({ now: late }))).toMatchObject({ kind: 'included', takesUntil: PERIOD.end });
  });

  it('sizes by what the runner saw taken of the lease it saw, clamped to the lease, and by all of another', () => {
    const seen = { latest: busy, seenLeaseId: busy.id };
    expect(decideGrant(facts({ ...seen, seenTaken: 50 }))).toMatchObject({ units: 100 });
    expect(decideGrant(facts({ ...seen, seenTaken: 5_000 }))).toMatchObject({ units: 400 });
    expect(decideGrant(facts({ ...seen, seenTaken: -3 }))).toMatchObject({ units: LEASE_LIMITS.minUnits });
    expect(decideGrant(facts({ ...seen, seenTaken: 1.5 }))).toMatchObject({ units: 400 });
    expect(decideGrant(facts({ ...seen, seenTaken: undefined }))).toMatchObject({ units: 400 });
    expect(decideGrant(facts({ latest: busy, seenLeaseId: 'lease_other0000000000000', seenTaken: 50 }))).toMatchObject({ units: 400 });
  });

  it('takes at most half the included room, and none for the last few decisions, which go one at a time', () => {
    expect(decideGrant(facts({ latest: busy, includedUsed: 900 }))).toMatchObject({ kind: 'included', units: 50 });
    expect(decideGrant(facts({ includedUsed: 996 }))).toMatchObject({ kind: 'included', units: 2 });
    expect(decideGrant(facts({ includedUsed: 997 }))).toEqual({ kind: 'none' });
    expect(decideGrant(facts({ includedUsed: 999 }))).toEqual({ kind: 'none' });
  });

  it('at the included volume’s edge, asks for what pays past it when the plan allows leases there, and grants none otherwise', () => {
    expect(decideGrant(facts({ includedUsed: 1_000 }))).toEqual({ kind: 'past-included' });
    expect(decideGrant(facts({ includedUsed: 1_200 }))).toEqual({ kind: 'past-included' });
    expect(decideGrant(facts({ includedUsed: 1_000, moneyLeases: false }))).toEqual({ kind: 'none' });
    expect(decideGrant(facts({ includedUsed: 1_000, plan: { ...plan, hard_cap: true } }))).toEqual({ kind: 'none' });
    expect(decideGrant(facts({ includedUsed: 1_000, plan: { ...plan, price_per_million_cents: null } }))).toEqual({ kind: 'none' });
  });

  it('reclaims an open included lease first, once', () => {
    const past = { includedUsed: 1_000, overage: { openIncludedLease: true } as const };
    expect(decideGrant(facts(past))).toEqual({ kind: 'reclaim-first' });
    expect(decideGrant(facts({ ...past, mayReclaim: false }))).toEqual({ kind: 'none' });
  });

  describe('past the included volume', () => {
    const price = decisionPriceMicros(plan.price_per_million_cents); // 100 micro-cents
    const overage = (sources: CreditSource[], fields: { spentMicros?: bigint; spendCapCents?: number | null } = {}) =>
      ({ openIncludedLease: false, sources, spentMicros: fields.spentMicros ?? 0n, spendCapCents: fields.spendCapCents ?? null, currency: 'usd' }) as const;
    const past = (sources: CreditSource[], fields: { spentMicros?: bigint; spendCapCents?: number | null } = {}, more: Partial<GrantFacts> = {}) =>
      decideGrant(facts({ includedUsed: 1_000, latest: busy, overage: overage(sources, fields), ...more }));

    it('leases overage decisions with their money from the sources in the order given', () => {
      const decision = past([source('a', 250n), source('b', 1_000_000n, { kind: 'paid', grantId: null })]);
      expect(price).toBe(100n);
      expect(decision).toEqual({
        kind: 'credits',
        units: 400,
        currency: 'usd',
        unitPriceMicros: 100n,
        moneyHeld: [
          { account_id: 'a', kind: 'promotional', grant_id: 'grant_a', micros: '250' },
          { account_id: 'b', kind: 'paid', grant_id: null, micros: '39750' },
        ],
        takesUntil: new Date(NOW.getTime() + LEASE_LIMITS.ttlMs),
      });
    });

    it('takes at most half of what the credits pay for, and none at the edge of the credits', () => {
      expect(past([source('a', 2_000n)])).toMatchObject({ kind: 'credits', units: 10 });
      expect(past([source('a', 400n)])).toMatchObject({ kind: 'credits', units: 2 });
      expect(past([source('a', 399n)])).toEqual({ kind: 'none' });
      expect(past([])).toEqual({ kind: 'none' });
    });

    it('takes at most half of what fits under the spend cap, and none at the cap', () => {
      const rich = [source('a', 10n ** 12n)];
      const cap = centsToMicros(1);
      expect(past(rich, { spendCapCents: 1, spentMicros: cap - 2_000n })).toMatchObject({ kind: 'credits', units: 10 });
      expect(past(rich, { spendCapCents: 1, spentMicros: cap - 400n })).toMatchObject({ kind: 'credits', units: 2 });
      expect(past(rich, { spendCapCents: 1, spentMicros: cap - 399n })).toEqual({ kind: 'none' });
      expect(past(rich, { spendCapCents: 1, spentMicros: cap })).toEqual({ kind: 'none' });
      expect(past(rich, { spendCapCents: 0 })).toEqual({ kind: 'none' });
    });

    it('gives no units past a promotional grant’s expiry or the period’s end', () => {
      const expires = new Date(NOW.getTime() + 700);
      expect(past([source('a', 10n ** 9n, { expiresAt: expires })])).toMatchObject({ kind: 'credits', takesUntil: expires });
      // A source it takes nothing from does not shorten it.
      expect(past([source('a', 10n ** 9n), source('b', 10n ** 9n, { expiresAt: expires })])).toMatchObject({
        takesUntil: new Date(NOW.getTime() + LEASE_LIMITS.ttlMs),
      });
      const late = new Date(PERIOD.end.getTime() - 300);
      expect(past([source('a', 10n ** 9n)], {}, { now: late, latest: { ...busy, grantedAt: new Date(late.getTime() - 500) } })).toMatchObject({
        takesUntil: PERIOD.end,
      });
    });

    it('leases decisions of a price of 0 until the cap is passed', () => {
      const free = { ...plan, price_per_million_cents: 0 };
      expect(past([], {}, { plan: free })).toMatchObject({ kind: 'credits', units: 400, unitPriceMicros: 0n, moneyHeld: [] });
      expect(past([], { spendCapCents: 1, spentMicros: centsToMicros(1) + 1n }, { plan: free })).toEqual({ kind: 'none' });
    });
  });
});

describe('grantedLease', () => {
  const fields = { id: 'lease_new00000000000000', workspaceId: WS, periodStart: PERIOD.start, now: NOW };

  it('makes an open included lease holding all its units, with its one hold of the included volume', () => {
    const takesUntil = new Date(NOW.getTime() + 1_000);
    const { lease, transfers } = grantedLease({ kind: 'included', units: 7, takesUntil }, fields);
    expect(lease).toEqual({
      id: fields.id,
      workspaceId: WS,
      periodStart: PERIOD.start,
      units: 7,
      held: 7,
      holdSeq: 0,
      state: 'open',
      grantedAt: NOW,
      takesUntil,
      closedAt: null,
      funding: 'included',
      currency: null,
      unitPriceMicros: null,
      moneyHeld: [],
      counted: false,
    });
    expect(transfers).toEqual([
      expect.objectContaining({
        id: `${fields.id}:hold:0`,
        causeId: fields.id,
        debitAccountId: chart.includedVolume(WS, PERIOD.start).id,
        creditAccountId: chart.decisionsBilled(WS).id,
        amount: 7n,
        phase: 'pending',
      }),
    ]);
  });

  it('makes a money lease holding its overage decisions and their money per source', () => {
    const moneyHeld = money(4).moneyHeld;
    const { lease, transfers } = grantedLease({ kind: 'credits', units: 4, currency: 'usd', unitPriceMicros: 100n, moneyHeld, takesUntil: LATER }, fields);
    expect(lease).toMatchObject({ funding: 'credits', currency: 'usd', unitPriceMicros: 100n, moneyHeld, held: 4, counted: false });
    expect(transfers.map((t) => [t.id, t.debitAccountId, t.amount])).toEqual([
      [`${fields.id}:hold:0`, chart.overageVolume(WS, PERIOD.start).id, 4n],
      [`${fields.id}:hold:0:0`, 'a', 250n],
      [`${fields.id}:hold:0:1`, 'b', 150n],
    ]);
  });
});

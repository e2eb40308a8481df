import { chart } from './chart';
import { LEASE_LIMITS, leaseHold, leaseRate, leaseSettlement, leaseSize, refillShare } from './leases';
import { LedgerError, replayEntries } from './ledger';

const WS = '8f9f2c1e-0000-4000-8000-000000000001';
const PERIOD = new Date('2026-11-01T00:00:00Z');
const accounts = { includedVolumeId: chart.includedVolume(WS, PERIOD).id, decisionsBilledId: chart.decisionsBilled(WS).id };

describe('leaseRate', () => {
  it('is the previous lease’s units over the time since it was granted, and 0 without one', () => {
    expect(leaseRate(null, new Date())).toBe(0);
    expect(leaseRate({ units: 300, grantedAt: new Date('2026-11-26T10:00:00.000Z') }, new Date('2026-11-26T10:00:00.500Z'))).toBe(600);
    // A grant asked for in the same millisecond does not divide by zero.
    expect(leaseRate({ units: 3, grantedAt: new Date(1_000) }, new Date(1_000))).toBe(3_000);
  });
});

describe('leaseSize', () => {
  it('holds about a second of the recent rate, up to the largest lease', () => {
    expect(leaseSize({ ratePerSecond: 400, room: 1_000_000 })).toBe(400);
    expect(leaseSize({ ratePerSecond: 12.2, room: 1_000_000 })).toBe(13);
    expect(leaseSize({ ratePerSecond: 1e9, room: 1e12 })).toBe(LEASE_LIMITS.maxUnits);
  });

  it('reaches a ramping workspace’s rate at the second grant, and gives a quiet one a small lease again', () => {
    const granted = new Date('2026-11-26T10:00:00.000Z');
    // The first lease of two was used up 10 ms after its grant: 200 a second.
    expect(leaseSize({ ratePerSecond: leaseRate({ units: 2, grantedAt: granted }, new Date(granted.getTime() + 10)), room: 1e6 })).toBe(200);
    // A lease of 500 asked to be replaced a minute later: the workspace went quiet.
    expect(leaseSize({ ratePerSecond: leaseRate({ units: 500, grantedAt: granted }, new Date(granted.getTime() + 60_000)), room: 1e6 })).toBe(9);
  });

  it('starts a workspace with no history at the smallest lease', () => {
    expect(leaseSize({ ratePerSecond: 0, room: 1_000 })).toBe(LEASE_LIMITS.minUnits);
  });

  it('shrinks to half the room left as the edge nears, and grants nothing for the last decisions', () => {
    expect(leaseSize({ ratePerSecond: 1_000, room: 101 })).toBe(50);
    expect(leaseSize({ ratePerSecond: 1_000, room: 4 })).toBe(2);
    expect(leaseSize({ ratePerSecond: 1_000, room: 3 })).toBe(0);
    expect(leaseSize({ ratePerSecond: 1_000, room: 1 })).toBe(0);
    expect(leaseSize({ ratePerSecond: 1_000, room: 0 })).toBe(0);
    expect(leaseSize({ ratePerSecond: 1_000, room: -5 })).toBe(0);
  });

  it('never holds more than half the room, whatever the rate', () => {
    for (let room = 0; room < 300; room++) {
      for (const rate of [0, 1, 7, 150, 10_000]) {
        const size = leaseSize({ ratePerSecond: rate, room });
        expect(size * 2).toBeLessThanOrEqual(room);
      }
    }
  });
});

describe('when the next lease is asked for', () => {
  it('asks at half while grants are quick, earlier as they slow, and at once when they take half a window', () => {
    expect(refillShare(0)).toBe(0.5);
    expect(refillShare(120)).toBe(0.5);
    expect(refillShare(LEASE_LIMITS.windowMs * 0.3)).toBeCloseTo(0.6, 9);
    expect(refillShare(LEASE_LIMITS.windowMs * 0.5)).toBe(1);
    expect(refillShare(LEASE_LIMITS.windowMs * 3)).toBe(1);
    expect(refillShare(-5)).toBe(0.5);
  });
});

describe('lease holds and settlements', () => {
  it('holds the lease’s units from the included volume, caused by the lease', () => {
    expect(leaseHold('lease_1', 0, WS, 5, accounts)).toEqual({
      id: 'lease_1:hold:0',
      causeId: 'lease_1',
      workspaceId: WS,
      ledger: 'decisions',
      debitAccountId: accounts.includedVolumeId,
      creditAccountId: accounts.decisionsBilledId,
      amount: 5n,
      phase: 'pending',
      pendingId: null,
      code: 'included_decision',
    });
    expect(() => leaseHold('lease_1', 0, WS, 0, accounts)).toThrow(LedgerError);
    expect(() => leaseHold('lease_1', 0, WS, 1.5, accounts)).toThrow(LedgerError);
  });

  it('posts each billed execution, frees what is handed back, and holds the rest under the next hold', () => {
    const hold = leaseHold('lease_1', 0, WS, 5, accounts);
    const { transfers, next } = leaseSettlement(hold, ['exec_a', 'exec_b'], 1, new Map([['exec_a', 'dec_a']]));
    expect(next).toMatchObject({ id: 'lease_1:hold:1', amount: 2n, phase: 'pending' });
    // Each billed execution's entry names its decision; one whose settlement named none is booked under none.
    expect(transfers.map((transfer) => [transfer.id, transfer.phase, transfer.amount, transfer.causeId, transfer.decisionId ?? null])).toEqual([
      ['lease_1:hold:0:void', 'void', 5n, 'lease_1', null],
      ['lease_1:hold:1', 'pending', 2n, 'lease_1', null],
      ['exec_a:lease', 'single', 1n, 'exec_a', 'dec_a'],
      ['exec_b:lease', 'single', 1n, 'exec_b', null],
    ]);
    const balances = replayEntries([hold, ...transfers]);
    expect(balances.get(accounts.includedVolumeId)).toEqual({ debitsPending: 2n, debitsPosted: 2n, creditsPending: 0n, creditsPosted: 0n });
    expect(balances.get(accounts.decisionsBilledId)).toEqual({ debitsPending: 0n, debitsPosted: 0n, creditsPending: 2n, creditsPosted: 2n });
  });

  it('resolves the hold whole when nothing is left, and changes nothing when nothing is settled', () => {
    const hold = leaseHold('lease_1', 3, WS, 2, accounts);
    const settled = leaseSettlement(hold, ['exec_a'], 1);
    expect(settled.next).toBeNull();
    expect(settled.transfers.map((transfer) => transfer.id)).toEqual(['lease_1:hold:3:void', 'exec_a:lease']);
    expect(leaseSettlement(hold, [], 0)).toEqual({ transfers: [], next: hold });
  });

  it('refuses to take more than the hold holds', () => {
    const hold = leaseHold('lease_1', 0, WS, 2, accounts);
    expect(() => leaseSettlement(hold, ['a', 'b'], 1)).toThrow(LedgerError);
    expect(() => leaseSettlement(hold, [], -1)).toThrow(LedgerError);
  });
});

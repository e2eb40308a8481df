import fc from 'fast-check';
import { allocate, consumptionOrder, CreditSource, totalAvailable } from './consumption';

const now = new Date('2026-03-01T00:00:00Z');
const source = (accountId: string, fields: Partial<CreditSource> = {}): CreditSource => ({
  accountId,
  kind: 'promotional',
  grantId: accountId,
  expiresAt: null,
  grantedAt: new Date('2026-01-01T00:00:00Z'),
  availableMicros: 100n,
  ...fields,
});

describe('consumptionOrder', () => {
  it('takes promotional credits soonest-expiring first, undated ones next, the paid balance last', () => {
    const sources = [
      source('paid', { kind: 'paid', grantId: null }),
      source('undated'),
      source('late', { expiresAt: new Date('2026-06-01T00:00:00Z') }),
      source('soon', { expiresAt: new Date('2026-04-01T00:00:00Z') }),
    ];
    expect(consumptionOrder(sources, now).map((s) => s.accountId)).toEqual(['soon', 'late', 'undated', 'paid']);
  });

  it('breaks ties by grant time, then by account', () => {
    const expiresAt = new Date('2026-04-01T00:00:00Z');
    const sources = [source('b', { expiresAt }), source('a', { expiresAt }), source('older', { expiresAt, grantedAt: new Date('2025-12-01T00:00:00Z') })];
    expect(consumptionOrder(sources, now).map((s) => s.accountId)).toEqual(['older', 'a', 'b']);
  });

  it('leaves out expired and empty sources', () => {
    const sources = [source('expired', { expiresAt: now }), source('empty', { availableMicros: 0n }), source('ok')];
    expect(consumptionOrder(sources, now).map((s) => s.accountId)).toEqual(['ok']);
  });
});

describe('allocate', () => {
  it('splits a price across sources in order', () => {
    const sources = [source('a', { availableMicros: 30n }), source('b', { availableMicros: 100n }), source('c')];
    expect(allocate(sources, 50n)?.map((a) => [a.source.accountId, a.amountMicros])).toEqual([
      ['a', 30n],
      ['b', 20n],
    ]);
    expect(allocate(sources, 30n)?.map((a) => [a.source.accountId, a.amountMicros])).toEqual([['a', 30n]]);
  });

  it('refuses what the sources do not cover, and a free decision takes nothing', () => {
    expect(allocate([source('a', { availableMicros: 30n })], 31n)).toBeNull();
    expect(allocate([], 1n)).toBeNull();
    expect(allocate([], 0n)).toEqual([]);
  });

  it('never takes more than a source holds, and covers the cost exactly or not at all', () => {
    const sources = fc
      .array(fc.bigInt({ min: 0n, max: 1_000n }), { maxLength: 6 })
      .map((amounts) => amounts.map((availableMicros, i) => source(`s${i}`, { availableMicros })));
    fc.assert(
      fc.property(sources, fc.bigInt({ min: 0n, max: 3_000n }), (list, cost) => {
        const allocations = allocate(list, cost);
        if (allocations === null) return totalAvailable(list) < cost;
        const taken = allocations.reduce((sum, a) => sum + a.amountMicros, 0n);
        return taken === cost && allocations.every((a) => a.amountMicros > 0n && a.amountMicros <= a.source.availableMicros);
      }),
    );
  });
});

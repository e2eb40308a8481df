import { checkOverrides, effectivePlan, MAX_PRICE_PER_MILLION_CENTS, PLANS } from './plans';

describe('plans', () => {
  it('has the spec rate limits and decision counts', () => {
    expect([PLANS.genesis, PLANS.developer, PLANS.growth, PLANS.enterprise].map((p) => p.rate_limit_per_minute)).toEqual([60, 300, 2000, 10000]);
    expect([PLANS.genesis, PLANS.developer, PLANS.growth, PLANS.enterprise].map((p) => p.max_decisions)).toEqual([2, 10, null, null]);
    expect([PLANS.genesis, PLANS.developer, PLANS.growth, PLANS.enterprise].map((p) => p.retention_days)).toEqual([7, 14, 30, 365]);
    expect(PLANS.genesis.included_decisions).toBe(1_000_000);
    expect(PLANS.genesis.hard_cap).toBe(false);
  });

  it('applies overrides over the catalogue', () => {
    expect(effectivePlan('developer', { hard_cap: true, included_decisions: 7 })).toMatchObject({
      name: 'developer',
      hard_cap: true,
      included_decisions: 7,
      rate_limit_per_minute: 300,
    });
  });

  it('reports every bad override', () => {
    expect(checkOverrides({ hard_cap: 'yes', rate_limit_per_minute: 0, color: 'red' })).toEqual([
      { path: 'overrides.hard_cap', message: 'must be a boolean' },
      { path: 'overrides.rate_limit_per_minute', message: 'must be a whole number from 1 to 1000000' },
      { path: 'overrides.color', message: 'unknown override' },
    ]);
    expect(checkOverrides([])).toEqual([{ path: 'overrides', message: 'must be an object' }]);
    expect(checkOverrides(undefined)).toEqual([]);
    expect(checkOverrides({ price_per_million_cents: null })).toEqual([]);
    expect(checkOverrides({ max_decisions: 3 })).toEqual([]);
    expect(checkOverrides({ max_decisions: null })).toEqual([]);
    expect(checkOverrides({ max_decisions: -1 })).toEqual([{ path: 'overrides.max_decisions', message: expect.stringContaining('from 0 to') }]);
    expect(effectivePlan('growth', { max_decisions: 4 }).max_decisions).toBe(4);
  });

  it('refuses numbers past what the ledger stores and sums exactly', () => {
    for (const value of [1e300, 2 ** 53, 2 ** 63, 1.5, '5']) {
      expect(checkOverrides({ included_decisions: value, max_decisions: value, price_per_million_cents: value }).map((issue) => issue.path)).toEqual([
        'overrides.included_decisions',
        'overrides.max_decisions',
        'overrides.price_per_million_cents',
      ]);
    }
    expect(checkOverrides({ included_decisions: 2 ** 53 - 1, max_decisions: 2 ** 31 })).toEqual([]);
    expect(checkOverrides({ price_per_million_cents: MAX_PRICE_PER_MILLION_CENTS })).toEqual([]);
    expect(checkOverrides({ price_per_million_cents: MAX_PRICE_PER_MILLION_CENTS + 1 })).toHaveLength(1);
  });

  it('knows only its own overrides, whatever Object.prototype holds', () => {
    expect(checkOverrides(JSON.parse('{"constructor":1,"toString":"x","hasOwnProperty":true,"__proto__":{},"valueOf":null}'))).toEqual(
      ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'].map((key) => ({ path: `overrides.${key}`, message: 'unknown override' })),
    );
  });
});

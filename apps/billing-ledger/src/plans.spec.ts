import { checkOverrides, effectivePlan, PLANS } from './plans';

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
      { path: 'overrides.hard_cap', message: 'has an invalid value' },
      { path: 'overrides.rate_limit_per_minute', message: 'has an invalid value' },
      { path: 'overrides.color', message: 'unknown override' },
    ]);
    expect(checkOverrides([])).toEqual([{ path: 'overrides', message: 'must be an object' }]);
    expect(checkOverrides(undefined)).toEqual([]);
    expect(checkOverrides({ price_per_million_cents: null })).toEqual([]);
    expect(checkOverrides({ max_decisions: 3 })).toEqual([]);
    expect(checkOverrides({ max_decisions: null })).toEqual([]);
    expect(checkOverrides({ max_decisions: -1 })).toEqual([{ path: 'overrides.max_decisions', message: 'has an invalid value' }]);
    expect(effectivePlan('growth', { max_decisions: 4 }).max_decisions).toBe(4);
  });

  it('knows only its own overrides, whatever Object.prototype holds', () => {
    expect(checkOverrides(JSON.parse('{"constructor":1,"toString":"x","hasOwnProperty":true,"__proto__":{},"valueOf":null}'))).toEqual(
      ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'].map((key) => ({ path: `overrides.${key}`, message: 'unknown override' })),
    );
  });
});

import { isValidCallerToken, newId, randomAlphanumeric } from './index';

describe('ids', () => {
  it('makes prefixed ids of 20 letters and digits', () => {
    for (const prefix of ['dec', 'exec', 'key', 'dlv', 'req'] as const) {
      expect(newId(prefix)).toMatch(new RegExp(`^${prefix}_[A-Za-z0-9]{20}$`));
    }
  });

  it('never repeats in a large draw', () => {
    const seen = new Set(Array.from({ length: 10000 }, () => randomAlphanumeric(20)));
    expect(seen.size).toBe(10000);
  });

  it.each([
    ['a', true],
    ['A-Za-z0-9._:-', true],
    ['x'.repeat(128), true],
    ['x'.repeat(129), false],
    ['', false],
    ['has space', false],
    ['slash/', false],
    [42, false],
    [undefined, false],
  ])('caller token %p valid=%p', (value, valid) => {
    expect(isValidCallerToken(value)).toBe(valid);
  });
});

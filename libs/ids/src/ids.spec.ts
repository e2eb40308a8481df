import { isNewId, isValidCallerToken, newId, randomAlphanumeric, looksLikeId } from './index';

describe('ids', () => {
  it('makes prefixed ids of 20 letters and digits', () => {
    for (const prefix of ['dec', 'exec', 'key', 'dlv', 'req', 'lease'] as const) {
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

  it('tells an id of a kind from anything else, NUL bytes and other kinds included', () => {
    expect(looksLikeId('dlv', newId('dlv'))).toBe(true);
    expect(looksLikeId('dlv', 'dlv_abc123')).toBe(true);
    for (const value of ['dlv_', 'dec_abc', 'dlv_a\u0000', '\u0000', 'dlv_a-b', `dlv_${'a'.repeat(65)}`, 42, null, undefined]) {
      expect(looksLikeId('dlv', value)).toBe(false);
    }
  });

  it('tells an id newId makes from one of another length, kind or alphabet', () => {
    expect(isNewId('lease', newId('lease'))).toBe(true);
    expect(isNewId('lease', `lease_${'A1'.repeat(10)}`)).toBe(true);
    for (const value of [
      `lease_${'a'.repeat(19)}`,
      `lease_${'a'.repeat(21)}`,
      `dec_${'a'.repeat(20)}`,
      `lease_${'a'.repeat(19)}-`,
      `lease_${'a'.repeat(19)}\u0000`,
      42,
      null,
    ]) {
      expect(isNewId('lease', value)).toBe(false);
    }
  });
});

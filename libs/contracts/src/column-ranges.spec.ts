import { integerIssue, isBigintText, isStorableInteger, storableTimestamp, INT4_MAX } from './column-ranges';

describe('integers from outside', () => {
  it.each([
    [0, 'integer', true],
    [INT4_MAX, 'integer', true],
    [2 ** 31, 'integer', false],
    [-(2 ** 31), 'integer', true],
    [-(2 ** 31) - 1, 'integer', false],
    [2 ** 53 - 1, 'bigint', true],
    [2 ** 53, 'bigint', false],
    [2 ** 63, 'bigint', false],
    [1e300, 'bigint', false],
    [1e300, 'integer', false],
    [1.5, 'bigint', false],
    [Infinity, 'bigint', false],
    [NaN, 'integer', false],
    ['12', 'integer', false],
    [null, 'integer', false],
  ] as const)('%p fits %s: %p', (value, column, fits) => {
    expect(isStorableInteger(value, column)).toBe(fits);
  });

  it('narrows to a range inside the column, never past it', () => {
    expect(isStorableInteger(0, 'integer', { min: 1 })).toBe(false);
    expect(isStorableInteger(2 ** 40, 'integer', { max: 2 ** 50 })).toBe(false);
    expect(integerIssue(2 ** 31, 'limits.monthly_decisions', 'integer', { min: 0 })).toEqual({
      path: 'limits.monthly_decisions',
      message: `must be a whole number from 0 to ${INT4_MAX}`,
    });
    expect(integerIssue(5, 'x', 'integer', { min: 0 })).toBeNull();
    expect(integerIssue('5', 'x', 'bigint', { min: 0 }, ', or null')?.message).toBe(`must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, or null`);
  });

  it('reads row sequences up to bigint and no further', () => {
    expect(isBigintText('9223372036854775807')).toBe(true);
    expect(isBigintText('9223372036854775808')).toBe(false);
    expect(isBigintText('9999999999999999999')).toBe(false);
    expect(isBigintText('0')).toBe(true);
    expect(isBigintText('')).toBe(false);
    expect(isBigintText('-1')).toBe(false);
    expect(isBigintText('1'.repeat(40))).toBe(false);
  });
});

describe('timestamps from outside', () => {
  it.each([
    ['2026-11-26T10:00:00.000Z', true],
    ['0001-01-01T00:00:00.000Z', true],
    ['9999-12-31T23:59:59.999Z', true],
    ['+010000-01-01T00:00:00.000Z', false],
    ['+275760-09-13T00:00:00.000Z', false],
    ['-271821-04-20T00:00:00.000Z', false],
    ['-000001-01-01T00:00:00.000Z', false],
    ['+294277-01-01T00:00:00.000Z', false],
    ['not a date', false],
    ['', false],
  ])('%s is storable: %p', (text, storable) => {
    expect(storableTimestamp(text) !== null).toBe(storable);
  });

  it('refuses what is not a string', () => {
    expect(storableTimestamp(1_700_000_000_000)).toBeNull();
    expect(storableTimestamp(null)).toBeNull();
  });
});

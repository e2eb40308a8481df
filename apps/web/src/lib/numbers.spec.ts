import { formatAnswer, formatAxisValue, formatCompact, formatCount, formatDecimal, formatShare, formatUsd } from './numbers';

describe('numbers for people', () => {
  it('groups thousands in the reader’s language', () => {
    expect(formatCount(1_000_000, 'en')).toBe('1,000,000');
    expect(formatCount(1_000_000, 'pt')).toBe('1.000.000');
    expect(formatCount(0, 'en')).toBe('0');
  });

  it('rounds decimals and drops trailing zeros', () => {
    expect(formatDecimal(2.5730000000000004, 'en')).toBe('2.57');
    expect(formatDecimal(3, 'en')).toBe('3');
    expect(formatDecimal(-0.125, 'en')).toBe('-0.13');
    expect(formatDecimal(2.5, 'pt')).toBe('2,5');
  });

  it('shows shares as whole percentages without claiming certainty or nothing', () => {
    expect(formatShare(0.731, 'en')).toBe('73%');
    expect(formatShare(1, 'en')).toBe('100%');
    expect(formatShare(0, 'en')).toBe('0%');
    expect(formatShare(0.9996, 'en')).toBe('>99%');
    expect(formatShare(0.0004, 'en')).toBe('<1%');
  });

  it('shows answers without JSON quotes, numbers rounded', () => {
    expect(formatAnswer('billing', 'en')).toBe('billing');
    expect(formatAnswer(0.73120001, 'en')).toBe('0.73');
    expect(formatAnswer(undefined, 'en')).toBe('—');
    expect(formatAnswer({ a: 1 }, 'en')).toBe('{"a":1}');
  });

  it('shortens axis figures', () => {
    expect(formatCompact(1_000_000, 'en')).toBe('1M');
    expect(formatCompact(750_000, 'en')).toBe('750K');
    expect(formatCompact(1_250, 'en')).toBe('1.3K');
    expect(formatCompact(12, 'en')).toBe('12');
  });

  it('keeps the small steps of an axis apart instead of rounding them all to 0', () => {
    expect([0, 0.0025, 0.005, 0.0075, 0.01].map((tick) => formatAxisValue(tick, 'en'))).toEqual(['0', '0.0025', '0.005', '0.0075', '0.01']);
    expect(formatAxisValue(0.15, 'en')).toBe('0.15');
    expect(formatAxisValue(250, 'en')).toBe('250');
    expect(formatAxisValue(1_000_000, 'en')).toBe('1M');
  });

  it('shows a run’s cost in dollars to two significant digits, not rounded to cents', () => {
    expect(formatUsd(0.000251, 'en')).toBe('$0.00025');
    expect(formatUsd(1.2345, 'en')).toBe('$1.2');
    expect(formatUsd(0, 'en')).toBe('$0.00');
  });
});

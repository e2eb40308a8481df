import fc from 'fast-check';
import { centsToMicros, decisionPriceMicros, MICROS_PER_CENT, microsToCents } from './units';

describe('units', () => {
  it('converts cents to micro-cents exactly', () => {
    expect(centsToMicros(0)).toBe(0n);
    expect(centsToMicros(1)).toBe(1_000_000n);
    expect(centsToMicros(Number.MAX_SAFE_INTEGER)).toBe(BigInt(Number.MAX_SAFE_INTEGER) * MICROS_PER_CENT);
    expect(() => centsToMicros(1.5)).toThrow(RangeError);
  });

  it('rounds micro-cents down to cents, below zero too', () => {
    expect(microsToCents(999_999n)).toBe(0);
    expect(microsToCents(1_000_000n)).toBe(1);
    expect(microsToCents(2_500_000n)).toBe(2);
    expect(microsToCents(-1n)).toBe(-1);
    expect(microsToCents(-1_000_000n)).toBe(-1);
    expect(microsToCents(-1_000_001n)).toBe(-2);
  });

  it('prices one decision in micro-cents as the price per million in cents', () => {
    // $500 per million = 50,000 cents per million = 0.05 cent per decision = 50,000 micro-cents.
    expect(decisionPriceMicros(50_000)).toBe(50_000n);
    expect(centsToMicros(50_000) / 1_000_000n).toBe(decisionPriceMicros(50_000));
    expect(() => decisionPriceMicros(-1)).toThrow(RangeError);
    expect(() => decisionPriceMicros(0.5)).toThrow(RangeError);
  });

  it('never shows more cents than there are micro-cents', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), (micros) => {
        const cents = BigInt(microsToCents(micros));
        return cents * MICROS_PER_CENT <= micros && micros < (cents + 1n) * MICROS_PER_CENT;
      }),
    );
  });
});

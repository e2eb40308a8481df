import { axisScale, lonePoints, niceStep, stackedTotals } from './scale';

describe('axisScale', () => {
  it('ends a cost axis at the first round tick above the data, not at a whole dollar', () => {
    expect(axisScale([0, 0.15, 0], { minSpan: 0.01 })).toEqual({ domain: [0, 0.15], ticks: [0, 0.05, 0.1, 0.15] });
    expect(axisScale([0.11], { minSpan: 0.01 })).toEqual({ domain: [0, 0.15], ticks: [0, 0.05, 0.1, 0.15] });
  });

  it('starts at 0 and takes round steps for rates and latencies', () => {
    expect(axisScale([20, null, 0], { minSpan: 1 })).toEqual({ domain: [0, 20], ticks: [0, 5, 10, 15, 20] });
    expect(axisScale([6, 30], { minSpan: 10 })).toEqual({ domain: [0, 30], ticks: [0, 10, 20, 30] });
    expect(axisScale([31], { minSpan: 10 })).toEqual({ domain: [0, 40], ticks: [0, 10, 20, 30, 40] });
    expect(axisScale([0.37], { minSpan: 0 }).domain[1]).toBeCloseTo(0.4);
  });

  it('keeps a minimum span, so an all-zero or empty series is a line at 0 under a labelled axis', () => {
    expect(axisScale([0, 0, 0], { minSpan: 1, integer: true })).toEqual({ domain: [0, 1], ticks: [0, 1] });
    expect(axisScale([], { minSpan: 0.01 })).toEqual({ domain: [0, 0.01], ticks: [0, 0.0025, 0.005, 0.0075, 0.01] });
    expect(axisScale([null, undefined, Number.NaN], { minSpan: 10 }).domain).toEqual([0, 10]);
  });

  it('gives whole-number ticks for counts', () => {
    expect(axisScale([3], { minSpan: 1, integer: true })).toEqual({ domain: [0, 3], ticks: [0, 1, 2, 3] });
    expect(axisScale([7], { minSpan: 1, integer: true })).toEqual({ domain: [0, 8], ticks: [0, 2, 4, 6, 8] });
    expect(axisScale([10], { minSpan: 1, integer: true }).ticks.every(Number.isInteger)).toBe(true);
    expect(axisScale([1_000_000, 245], { minSpan: 1, integer: true })).toEqual({ domain: [0, 1_000_000], ticks: [0, 250_000, 500_000, 750_000, 1_000_000] });
  });

  it('covers every value with ticks that are evenly spaced and at most a step above the largest', () => {
    for (const largest of [0.0003, 0.013, 0.5, 1, 1.7, 9.99, 42, 99, 101, 777, 12_345]) {
      const { domain, ticks } = axisScale([largest / 3, largest], { minSpan: 0 });
      expect(domain[0]).toBe(0);
      expect(domain[1]).toBeGreaterThanOrEqual(largest);
      const step = ticks[1]! - ticks[0]!;
      expect(domain[1] - largest).toBeLessThan(step * 1.0001);
      ticks.forEach((tick, index) => expect(tick).toBeCloseTo(index * step, 10));
      expect(ticks.length).toBeGreaterThanOrEqual(3);
      expect(ticks.length).toBeLessThanOrEqual(7);
    }
  });
});

describe('niceStep', () => {
  it('takes 1, 2, 2.5 or 5 times a power of ten', () => {
    expect(niceStep(0.15, 4)).toBeCloseTo(0.05);
    expect(niceStep(100, 4)).toBe(25);
    expect(niceStep(7, 4, true)).toBe(2);
    expect(niceStep(2, 4, true)).toBe(1);
    expect(niceStep(9, 4, true)).toBe(3);
  });
});

describe('lonePoints', () => {
  it('finds the values a line cannot draw: alone, or between gaps', () => {
    expect(lonePoints([20])).toEqual([0]);
    expect(lonePoints([null, null, 20, null])).toEqual([2]);
    expect(lonePoints([null, 1, null, 2, 3, null, 4])).toEqual([1, 6]);
    expect(lonePoints([0, 0, 0])).toEqual([]);
    expect(lonePoints([null, undefined, null])).toEqual([]);
    expect(lonePoints([])).toEqual([]);
  });
});

describe('stackedTotals', () => {
  it('adds up stacked series per category, and lists every value otherwise', () => {
    const data = [
      { label: 'a', block: 3, continue: 5, errors: 2 },
      { label: 'b', block: 0, continue: null, errors: 1 },
    ];
    expect(stackedTotals(data, ['block', 'continue', 'errors'], true)).toEqual([10, 1]);
    expect(stackedTotals(data, ['block', 'continue'], false)).toEqual([3, 5, 0]);
  });
});

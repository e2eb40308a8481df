import { binOf, binsOf, binSumsOf, expectedCalibrationError, stepOf, thresholdsOf, emptyStepSums } from './bins';

describe('bins', () => {
  it.each([
    [0, 0],
    [0.05, 0],
    [0.1, 1],
    [0.3, 3],
    [0.7, 7],
    [0.8999, 8],
    [0.9, 9],
    [1, 9],
    [-0.1, 0],
    [1.5, 9],
  ])('puts %p in bin %p', (p, bin) => {
    expect(binOf(p)).toBe(bin);
  });

  it.each([
    [0, 0],
    [0.049, 0],
    [0.05, 1],
    [0.5, 10],
    [0.95, 19],
    [1, 19],
  ])('puts the confidence %p at step %p', (c, step) => {
    expect(stepOf(c)).toBe(step);
  });

  it('has ten equal-width bins from 0 to 1 with their mean prediction and hit rate', () => {
    const bins = binsOf(
      binSumsOf([
        { predicted: 0.92, observed: true },
        { predicted: 0.98, observed: false },
        { predicted: 0.15, observed: false },
      ]),
    );
    expect(bins.map((bin) => [bin.from, bin.to])).toEqual(Array.from({ length: 10 }, (_, i) => [i / 10, (i + 1) / 10]));
    expect(bins[9]).toEqual({ from: 0.9, to: 1, count: 2, confidence: 0.95, accuracy: 0.5 });
    expect(bins[1]).toEqual({ from: 0.1, to: 0.2, count: 1, confidence: 0.15, accuracy: 0 });
    expect(bins[5]).toEqual({ from: 0.5, to: 0.6, count: 0, confidence: null, accuracy: null });
  });

  it('ECE is the count-weighted mean gap between hit rate and confidence', () => {
    // Bin 9: 10 at 0.9, 6 right (gap 0.3); bin 2: 10 at 0.2, 2 right (gap 0): ECE = (10·0.3 + 10·0) / 20.
    const pairs = [
      ...Array.from({ length: 10 }, (_, i) => ({ predicted: 0.9, observed: i < 6 })),
      ...Array.from({ length: 10 }, (_, i) => ({ predicted: 0.2, observed: i < 2 })),
    ];
    expect(expectedCalibrationError(binSumsOf(pairs))).toBeCloseTo(0.15, 12);
  });

  it('ECE is 0 when calibrated, null without predictions', () => {
    expect(expectedCalibrationError(binSumsOf([{ predicted: 1, observed: true }]))).toBe(0);
    expect(expectedCalibrationError(binSumsOf([]))).toBeNull();
  });

  it('a threshold keeps every answer at or above its step, with the accuracy of those kept', () => {
    const steps = emptyStepSums();
    steps[2] = { count: 4, correct: 1 }; // confidences in [0.10, 0.15)
    steps[18] = { count: 6, correct: 6 }; // confidences in [0.90, 0.95)
    const thresholds = thresholdsOf(steps);
    expect(thresholds).toHaveLength(20);
    expect(thresholds.map((t) => t.min_confidence)).toEqual(Array.from({ length: 20 }, (_, j) => Math.round(j * 5) / 100));
    expect(thresholds[0]).toEqual({ min_confidence: 0, kept: 10, coverage: 1, accuracy: 0.7 });
    expect(thresholds[2]).toEqual({ min_confidence: 0.1, kept: 10, coverage: 1, accuracy: 0.7 });
    expect(thresholds[3]).toEqual({ min_confidence: 0.15, kept: 6, coverage: 0.6, accuracy: 1 });
    expect(thresholds[18]).toEqual({ min_confidence: 0.9, kept: 6, coverage: 0.6, accuracy: 1 });
    expect(thresholds[19]).toEqual({ min_confidence: 0.95, kept: 0, coverage: 0, accuracy: null });
  });

  it('thresholds without labels have no coverage', () => {
    expect(thresholdsOf(emptyStepSums())[0]).toEqual({ min_confidence: 0, kept: 0, coverage: null, accuracy: null });
  });
});

import { fullSchema, normalized } from '../__fixtures__/schemas';
import { binSumsOf, expectedCalibrationError } from './bins';
import { calibrateDistribution, calibrateYes } from './calibration';
import { crossValidatedError, FitSample, fitMap, fitPlatt, fitQuestion, fitTemperature, isotonicPoints, MIN_OUTCOMES_TO_FIT, predictionOf } from './fit';

// fullSchema: intent (choice: refund, exchange, other), urgency (score: calm, annoyed, furious), fraud (probability).
const schema = normalized(fullSchema());
const [intent, , fraud] = schema.questions as [(typeof schema.questions)[0], (typeof schema.questions)[0], (typeof schema.questions)[0]];

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The engine says `ps` every time; the first outcome is right with probability `rate`, else the second. */
function constant(ps: number[], rate: number, n: number, seed = 1): FitSample[] {
  const random = seeded(seed);
  return Array.from({ length: n }, () => ({ ps, truth: random() < rate ? 0 : 1 }));
}

describe('predictionOf', () => {
  it('choice and score: the top probability and whether it was right; probability: p(yes) and whether yes happened', () => {
    expect(predictionOf('choice', [0.2, 0.7, 0.1], 1)).toEqual({ predicted: 0.7, observed: true });
    expect(predictionOf('score', [0.2, 0.7, 0.1], 0)).toEqual({ predicted: 0.7, observed: false });
    expect(predictionOf('probability', [0.3, 0.7], 0)).toEqual({ predicted: 0.3, observed: true });
    expect(predictionOf('probability', [0.3, 0.7], 1)).toEqual({ predicted: 0.3, observed: false });
  });
});

describe('fitting', () => {
  it('a temperature brings a constant 0.9 that is right 60 % of the time down to 0.6', () => {
    const samples = constant([0.9, 0.1, 0], 0.6, 2000);
    const rate = samples.filter((s) => s.truth === 0).length / samples.length;
    const t = fitTemperature(samples);
    const after = calibrateDistribution(intent, { method: 'temperature', temperature: t }, { refund: 0.9, exchange: 0.1, other: 0 });
    expect(after.refund).toBeCloseTo(rate, 3);
    expect(t).toBeGreaterThan(1);
  });

  it('a temperature below 1 sharpens an underconfident engine', () => {
    expect(fitTemperature(constant([0.6, 0.4, 0], 0.95, 1000))).toBeLessThan(1);
  });

  it('a temperature ignores samples whose right outcome had no probability, and is 1 without usable ones', () => {
    expect(fitTemperature([{ ps: [1, 0, 0], truth: 2 }])).toBe(1);
    const mixed = [...constant([0.9, 0.1, 0], 0.6, 500), { ps: [0.9, 0.1, 0], truth: 2 }];
    expect(fitTemperature(mixed)).toBeCloseTo(fitTemperature(constant([0.9, 0.1, 0], 0.6, 500)), 6);
  });

  it('Platt scaling maps a constant p(yes) = 0.9 to the observed rate and keeps a ≥ 0', () => {
    const samples = constant([0.9, 0.1], 0.6, 2000, 7);
    const rate = samples.filter((s) => s.truth === 0).length / samples.length;
    const map = fitMap('probability', 'platt', samples);
    expect(map.method).toBe('platt');
    expect(calibrateYes(map, 0.9)).toBeCloseTo(rate, 2);
    // Yes happens less often the more the engine believes it: the monotone fit flattens instead of reversing.
    const reversed = [...Array.from({ length: 200 }, () => ({ x: 2, y: 0 })), ...Array.from({ length: 200 }, () => ({ x: -2, y: 1 }))];
    expect(fitPlatt(reversed).a).toBe(0);
  });

  it('Platt scaling recovers a known logistic relation', () => {
    const random = seeded(3);
    const points = Array.from({ length: 4000 }, () => {
      const x = random() * 8 - 4;
      return { x, y: random() < 1 / (1 + Math.exp(-(0.5 * x - 0.3))) ? 1 : 0 };
    });
    const { a, b } = fitPlatt(points);
    expect(a).toBeCloseTo(0.5, 1);
    expect(b).toBeCloseTo(-0.3, 1);
  });

  it('isotonic regression pools violators into a non-decreasing map', () => {
    const points = isotonicPoints([
      { predicted: 0.1, observed: false },
      { predicted: 0.2, observed: true },
      { predicted: 0.3, observed: false },
      { predicted: 0.8, observed: true },
      { predicted: 0.9, observed: true },
    ]);
    expect(points).toEqual([
      [0.1, 0],
      [0.25, 0.5],
      [0.85, 1],
    ]);
    for (let i = 1; i < points.length; i++) {
      expect(points[i]![0]).toBeGreaterThanOrEqual(points[i - 1]![0]);
      expect(points[i]![1]).toBeGreaterThanOrEqual(points[i - 1]![1]);
    }
  });

  it('isotonic maps keep at most 50 points', () => {
    const predictions = Array.from({ length: 500 }, (_, i) => ({ predicted: i / 500, observed: i % 2 === 0 ? i > 100 : i > 300 }));
    const points = isotonicPoints(predictions);
    expect(points.length).toBeLessThanOrEqual(50);
    expect(points[0]![1]).toBeLessThanOrEqual(points.at(-1)![1]);
  });

  it('cross-validation predicts each sample with a map fitted without it', () => {
    const samples = constant([0.9, 0.1, 0], 0.6, 500, 11);
    const error = crossValidatedError(intent, 'temperature', samples);
    expect(error).toBeLessThan(0.05);
    const before = expectedCalibrationError(binSumsOf(samples.map((s) => predictionOf('choice', s.ps, s.truth))))!;
    expect(before).toBeGreaterThan(0.25);
  });
});

describe('fitQuestion', () => {
  it(`lists a question with fewer than ${MIN_OUTCOMES_TO_FIT} outcomes instead of fitting it`, () => {
    expect(fitQuestion(fraud, constant([0.9, 0.1], 0.6, MIN_OUTCOMES_TO_FIT - 1))).toEqual({
      question: 'fraud',
      status: 'not_enough_outcomes',
      outcomes: MIN_OUTCOMES_TO_FIT - 1,
      needed: MIN_OUTCOMES_TO_FIT,
    });
    expect(fitQuestion(fraud, constant([0.9, 0.1], 0.6, MIN_OUTCOMES_TO_FIT)).status).toBe('fitted');
  });

  it('picks the candidate with the lowest cross-validated error and reports the error before and after', () => {
    const fit = fitQuestion(intent, constant([0.9, 0.1, 0], 0.6, 400, 5));
    if (fit.status !== 'fitted') throw new Error('not fitted');
    expect(Object.keys(fit.candidates).sort()).toEqual(['isotonic', 'temperature']);
    expect(fit.ece_after).toBe(Math.min(...Object.values(fit.candidates)));
    expect(fit.candidates[fit.method]).toBe(fit.ece_after);
    expect(fit.ece_before).toBeGreaterThan(0.25);
    expect(fit.ece_after).toBeLessThan(0.06);
    expect(fit.map.method).toBe(fit.method);
  });

  it('offers Platt and isotonic for probability questions', () => {
    const fit = fitQuestion(fraud, constant([0.9, 0.1], 0.6, 400, 9));
    if (fit.status !== 'fitted') throw new Error('not fitted');
    expect(Object.keys(fit.candidates).sort()).toEqual(['isotonic', 'platt']);
  });

  it('isotonic wins where the miscalibration is not a temperature: right at the extremes, wrong in the middle', () => {
    const random = seeded(13);
    const samples: FitSample[] = Array.from({ length: 1500 }, () => {
      const p = 0.05 + random() * 0.9;
      // The truth follows a step: yes whenever p > 0.5 (a sharper engine than it says), regardless of how sure it sounds.
      return { ps: [p, 1 - p], truth: p > 0.5 ? (random() < 0.97 ? 0 : 1) : random() < 0.03 ? 0 : 1 };
    });
    const fit = fitQuestion(fraud, samples);
    if (fit.status !== 'fitted') throw new Error('not fitted');
    expect(fit.method).toBe('isotonic');
    expect(fit.ece_after).toBeLessThan(fit.ece_before);
  });
});

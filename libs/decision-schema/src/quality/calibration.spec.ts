import { fullSchema, normalized } from '../__fixtures__/schemas';
import { evaluate } from '../evaluate';
import {
  calibrateDistribution,
  calibrateDistributions,
  calibrateYes,
  interpolate,
  logit,
  sigmoid,
  temperatureScale,
  topIndex,
  withTopProbability,
} from './calibration';

// fullSchema: intent (choice: refund, exchange, other; minConfidence 0.6), urgency (score), fraud (probability).
const schema = normalized(fullSchema());
const [intent, urgency, fraud] = schema.questions as [(typeof schema.questions)[0], (typeof schema.questions)[0], (typeof schema.questions)[0]];
const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);

describe('calibration maps', () => {
  it('interpolates between points and stays flat beyond the ends', () => {
    const points: [number, number][] = [
      [0.2, 0.1],
      [0.6, 0.5],
      [0.9, 0.7],
    ];
    expect(interpolate(points, 0)).toBe(0.1);
    expect(interpolate(points, 0.2)).toBe(0.1);
    expect(interpolate(points, 0.4)).toBeCloseTo(0.3, 12);
    expect(interpolate(points, 0.75)).toBeCloseTo(0.6, 12);
    expect(interpolate(points, 1)).toBe(0.7);
    expect(interpolate([[0.5, 0.4]], 0.9)).toBe(0.4);
    expect(interpolate([], 0.3)).toBe(0.3);
    expect(
      interpolate(
        [
          [0.5, 0.2],
          [0.5, 0.8],
        ],
        0.5,
      ),
    ).toBe(0.2);
  });

  it('logit and sigmoid invert each other, logit clamped away from 0 and 1', () => {
    for (const p of [0.01, 0.3, 0.5, 0.9]) expect(sigmoid(logit(p))).toBeCloseTo(p, 12);
    expect(Number.isFinite(logit(0))).toBe(true);
    expect(Number.isFinite(logit(1))).toBe(true);
    expect(sigmoid(-1000)).toBe(0);
    expect(sigmoid(1000)).toBe(1);
  });

  it('temperature above 1 flattens, below 1 sharpens, 1 leaves alone, zeros stay zero, order kept', () => {
    const ps = [0.9, 0.1, 0];
    expect(temperatureScale(ps, 1).map((p) => +p.toFixed(12))).toEqual([0.9, 0.1, 0]);
    const flat = temperatureScale(ps, 4);
    expect(flat[0]).toBeLessThan(0.9);
    expect(flat[0]).toBeGreaterThan(flat[1]!);
    expect(flat[2]).toBe(0);
    expect(temperatureScale(ps, 0.25)[0]).toBeGreaterThan(0.9);
    expect(flat.reduce((a, b) => a + b)).toBeCloseTo(1, 12);
    // 0.9^β / (0.9^β + 0.1^β) = 0.6 at β = ln 1.5 / ln 9.
    expect(temperatureScale(ps, Math.log(9) / Math.log(1.5))[0]).toBeCloseTo(0.6, 12);
    expect(temperatureScale([1e-300, 1e-300], 0.01)).toEqual([0.5, 0.5]);
  });

  it('topIndex breaks ties towards the first outcome', () => {
    expect(topIndex([0.4, 0.4, 0.2])).toBe(0);
    expect(topIndex([0.2, 0.5, 0.3])).toBe(1);
  });

  it('withTopProbability rescales the rest in proportion and never changes the answer', () => {
    expect(withTopProbability([0.8, 0.15, 0.05], 0.6).map((p) => +p.toFixed(12))).toEqual([0.6, 0.3, 0.1]);
    // 0.3 would let the second (0.4 · 0.7 / 0.5 = 0.56) overtake: the top stops where they tie.
    const held = withTopProbability([0.5, 0.4, 0.1], 0.3);
    expect(topIndex(held)).toBe(0);
    expect(held[0]).toBeCloseTo(held[1]!, 12);
    expect(held.reduce((a, b) => a + b)).toBeCloseTo(1, 12);
    // Everything on the top: what it gives up is shared equally.
    expect(withTopProbability([1, 0, 0], 0.6).map((p) => +p.toFixed(12))).toEqual([0.6, 0.2, 0.2]);
    expect(withTopProbability([0.7, 0.3], 1.2)).toEqual([1, 0]);
  });

  it('maps p(yes) by Platt, isotonic or temperature', () => {
    expect(calibrateYes({ method: 'platt', a: 1, b: 0 }, 0.8)).toBeCloseTo(0.8, 9);
    expect(calibrateYes({ method: 'platt', a: 0, b: logit(0.6) }, 0.99)).toBeCloseTo(0.6, 9);
    expect(calibrateYes({ method: 'isotonic', points: [[0.9, 0.6]] }, 0.95)).toBe(0.6);
    expect(calibrateYes({ method: 'temperature', temperature: 1 }, 0.7)).toBeCloseTo(0.7, 12);
  });

  it('calibrates each kind of distribution into one over the same outcomes, summing to 1', () => {
    const choice = calibrateDistribution(intent, { method: 'temperature', temperature: 3 }, { refund: 0.9, exchange: 0.1, other: 0 });
    expect(Object.keys(choice)).toEqual(['refund', 'exchange', 'other']);
    expect(sum(choice)).toBeCloseTo(1, 12);
    expect(choice.refund).toBeLessThan(0.9);
    const score = calibrateDistribution(urgency, { method: 'isotonic', points: [[0.7, 0.5]] }, { calm: 0.1, annoyed: 0.7, furious: 0.2 });
    expect(score.annoyed).toBeCloseTo(0.5, 12);
    expect(score.furious).toBeCloseTo(0.2 * (0.5 / 0.3), 12);
    const probability = calibrateDistribution(fraud, { method: 'platt', a: 0, b: logit(0.25) }, { yes: 0.9, no: 0.1 });
    expect(probability.yes).toBeCloseTo(0.25, 9);
    expect(probability.no).toBeCloseTo(0.75, 9);
    const platted = calibrateDistribution(intent, { method: 'platt', a: 0, b: logit(0.7) }, { refund: 0.2, exchange: 0.8, other: 0 });
    expect(platted.exchange).toBeCloseTo(0.7, 9);
  });

  it('calibrates only the questions of the source that have a map', () => {
    const calibrated = normalized({ ...fullSchema(), calibration: { model: { fraud: { method: 'platt', a: 0, b: 0 } } } });
    const distributions = { intent: { refund: 1, exchange: 0, other: 0 }, urgency: { calm: 1, annoyed: 0, furious: 0 }, fraud: { yes: 0.9, no: 0.1 } };
    const out = calibrateDistributions(calibrated, 'model', distributions);
    expect(out.fraud!.yes).toBeCloseTo(0.5, 12);
    expect(out.intent).toBe(distributions.intent);
    expect(calibrateDistributions(calibrated, 'tokens', distributions)).toBe(distributions);
    expect(calibrateDistributions(schema, 'model', distributions)).toBe(distributions);
  });

  it('a calibrated version answers, gates and decides on its calibrated distributions, and keeps the engine’s own', () => {
    // intent's minConfidence is 0.6: 0.95 passes uncalibrated; flattened by a temperature of 5 it does not.
    const calibrated = normalized({ ...fullSchema(), calibration: { model: { intent: { method: 'temperature', temperature: 5 } } } });
    const answer = { intent: { refund: 0.95, exchange: 0.05, other: 0 }, urgency: { calm: 1, annoyed: 0, furious: 0 }, fraud: { yes: 0.05, no: 0.95 } };
    const plain = evaluate(schema, answer);
    const after = evaluate(calibrated, answer);
    expect(plain.action_reason.type).not.toBe('low_confidence');
    expect(after.action_reason).toMatchObject({ type: 'low_confidence', question: 'intent' });
    expect(after.result.intent).toBe('refund');
    expect(after.probabilities.intent!.refund).toBeLessThan(0.95);
    expect(after.recorded.intent).toEqual(answer.intent);
    expect(after.confidence.intent).toBeLessThan(plain.confidence.intent!);
  });
});

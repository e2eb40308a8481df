// Calibration: monotone maps from a question's distribution to one whose probabilities come true as often as
// they say. Choice and score questions: temperature scaling (every probability raised to 1/T, then rescaled:
// the order of the outcomes never changes) or isotonic regression of the top answer's probability (the rest
// rescaled in proportion, the top answer kept on top). Probability questions: Platt scaling of p(yes)
// (σ(a·logit p + b), a ≥ 0) or isotonic regression of p(yes). Isotonic maps are stored as points joined by
// straight lines and flat beyond the first and the last.
import type { Distribution, Distributions } from '../distributions';
import { outcomesOf } from '../outcomes';
import type { CalibrationMap, ConfidenceSource, NormalizedQuestion, NormalizedSchema } from '../schema-types';

/** Probabilities are kept this far from 0 and 1 where a logarithm or a logit is taken. */
export const PROBABILITY_FLOOR = 1e-6;

export function clampProbability(p: number): number {
  return Math.min(1 - PROBABILITY_FLOOR, Math.max(PROBABILITY_FLOOR, p));
}

export function logit(p: number): number {
  const q = clampProbability(p);
  return Math.log(q / (1 - q));
}

export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** Piecewise-linear through the points (sorted by x), flat beyond the ends. */
export function interpolate(points: readonly (readonly [number, number])[], x: number): number {
  const first = points[0];
  const last = points.at(-1);
  if (!first || !last) return x;
  if (x <= first[0]) return first[1];
  if (x >= last[0]) return last[1];
  for (let i = 1; i < points.length; i++) {
    const [x1, y1] = points[i]!;
    if (x <= x1) {
      const [x0, y0] = points[i - 1]!;
      return x1 === x0 ? y1 : y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
    }
  }
  return last[1];
}

/** p(yes) of a probability question after the map. */
export function calibrateYes(map: CalibrationMap, yes: number): number {
  switch (map.method) {
    case 'platt':
      return sigmoid(map.a * logit(yes) + map.b);
    case 'isotonic':
      return interpolate(map.points, yes);
    case 'temperature':
      return temperatureScale([yes, 1 - yes], map.temperature)[0]!;
  }
}

/** pᵢ^(1/T), rescaled to sum to 1; outcomes at 0 stay at 0. */
export function temperatureScale(ps: readonly number[], temperature: number): number[] {
  const beta = 1 / temperature;
  const top = Math.max(...ps);
  // Dividing by the top first keeps the powers away from underflow at small temperatures.
  const powered = ps.map((p) => (p > 0 ? Math.pow(p / top, beta) : 0));
  const sum = powered.reduce((a, b) => a + b, 0);
  return powered.map((p) => p / sum);
}

/** Index of the largest probability; ties go to the first, as evaluate breaks them. */
export function topIndex(ps: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < ps.length; i++) if (ps[i]! > ps[best]!) best = i;
  return best;
}

/**
 * The top answer's probability set to `top`, the others rescaled in proportion to share what is left. The new
 * top never drops below what keeps the same answer on top, so calibration changes confidences, never answers.
 */
export function withTopProbability(ps: readonly number[], top: number): number[] {
  const t = topIndex(ps);
  const old = ps[t]!;
  const rest = 1 - old;
  const second = ps.reduce((m, p, i) => (i === t ? m : Math.max(m, p)), 0);
  const floor = rest > 0 ? second / (rest + second) : 0;
  const value = Math.min(1, Math.max(top, floor));
  if (rest <= 0) {
    // Every other outcome was at 0: what is taken from the top is shared equally.
    const share = ps.length > 1 ? (1 - value) / (ps.length - 1) : 0;
    return ps.map((_, i) => (i === t ? value : share));
  }
  return ps.map((p, i) => (i === t ? value : (p * (1 - value)) / rest));
}

/** One distribution (every outcome listed, in outcome order) after the map. */
export function calibrateDistribution(question: NormalizedQuestion, map: CalibrationMap, distribution: Distribution): Distribution {
  const outcomes = outcomesOf(question);
  const ps = outcomes.map((outcome) => distribution[outcome] ?? 0);
  let mapped: number[];
  if (question.kind === 'probability') {
    const yes = calibrateYes(map, distribution.yes ?? 0);
    mapped = outcomes.map((outcome) => (outcome === 'yes' ? yes : 1 - yes));
  } else if (map.method === 'temperature') {
    mapped = temperatureScale(ps, map.temperature);
  } else if (map.method === 'isotonic') {
    mapped = withTopProbability(ps, interpolate(map.points, ps[topIndex(ps)]!));
  } else {
    // A Platt map on a choice or score question scales the top answer's probability.
    mapped = withTopProbability(ps, sigmoid(map.a * logit(ps[topIndex(ps)]!) + map.b));
  }
  return Object.fromEntries(outcomes.map((outcome, i) => [outcome, mapped[i]!]));
}

/** The distributions of one source after the schema's calibration of that source; questions without a map are left as they are. */
export function calibrateDistributions(schema: NormalizedSchema, source: ConfidenceSource, distributions: Distributions): Distributions {
  const maps = schema.calibration?.[source];
  if (!maps) return distributions;
  const out: Distributions = { ...distributions };
  for (const question of schema.questions) {
    const map = maps[question.key];
    const distribution = distributions[question.key];
    if (map && distribution) out[question.key] = calibrateDistribution(question, map, distribution);
  }
  return out;
}

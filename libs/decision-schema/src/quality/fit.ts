// Fitting a calibration per question from executions whose outcome is known. Candidates are compared by their
// expected calibration error under 5-fold cross-validation (each prediction made by a map fitted without it);
// the lowest wins, the parametric map on a tie.
import { binSumsOf, expectedCalibrationError } from './bins';
import { calibrateDistribution, logit, sigmoid, topIndex } from './calibration';
import { outcomesOf } from '../outcomes';
import type { CalibrationMap, CalibrationMethod, NormalizedQuestion, QuestionKind } from '../schema-types';

/** Questions with fewer labelled executions than this are listed, not fitted. */
export const MIN_OUTCOMES_TO_FIT = 30;
export const FOLDS = 5;
/** Isotonic maps keep at most this many points, so a map stays small inside the schema. */
export const ISOTONIC_POINTS_MAX = 50;

/** One labelled execution: the question's probabilities in outcome order, and the index of the outcome that was right. */
export interface FitSample {
  ps: number[];
  truth: number;
}

/** What the reliability diagram plots for one answer: choice and score: the top answer's probability and whether it was right; probability: p(yes) and whether yes happened. */
export interface Prediction {
  predicted: number;
  observed: boolean;
}

export function predictionOf(kind: QuestionKind, ps: readonly number[], truth: number): Prediction {
  if (kind === 'probability') return { predicted: ps[0]!, observed: truth === 0 };
  const top = topIndex(ps);
  return { predicted: ps[top]!, observed: top === truth };
}

export function candidateMethods(kind: QuestionKind): CalibrationMethod[] {
  return kind === 'probability' ? ['platt', 'isotonic'] : ['temperature', 'isotonic'];
}

export type QuestionFit =
  | {
      question: string;
      status: 'fitted';
      outcomes: number;
      method: CalibrationMethod;
      map: CalibrationMap;
      /** ECE of the distributions as they were answered. */
      ece_before: number;
      /** Cross-validated ECE of the chosen map. */
      ece_after: number;
      /** Cross-validated ECE of every candidate. */
      candidates: Partial<Record<CalibrationMethod, number>>;
    }
  | { question: string; status: 'not_enough_outcomes'; outcomes: number; needed: number };

export function fitQuestion(question: NormalizedQuestion, samples: readonly FitSample[]): QuestionFit {
  if (samples.length < MIN_OUTCOMES_TO_FIT)
    return { question: question.key, status: 'not_enough_outcomes', outcomes: samples.length, needed: MIN_OUTCOMES_TO_FIT };
  const before = ece(samples.map((sample) => predictionOf(question.kind, sample.ps, sample.truth)));
  const candidates: Partial<Record<CalibrationMethod, number>> = {};
  let best: { method: CalibrationMethod; error: number } | null = null;
  for (const method of candidateMethods(question.kind)) {
    const error = crossValidatedError(question, method, samples);
    candidates[method] = error;
    if (best === null || error < best.error - 1e-12) best = { method, error };
  }
  const chosen = best!;
  return {
    question: question.key,
    status: 'fitted',
    outcomes: samples.length,
    method: chosen.method,
    map: fitMap(question.kind, chosen.method, samples),
    ece_before: before,
    ece_after: chosen.error,
    candidates,
  };
}

function ece(predictions: Prediction[]): number {
  return expectedCalibrationError(binSumsOf(predictions)) ?? 0;
}

/** Fold k holds the samples whose index is k modulo FOLDS. */
export function crossValidatedError(question: NormalizedQuestion, method: CalibrationMethod, samples: readonly FitSample[]): number {
  const held: Prediction[] = [];
  for (let fold = 0; fold < FOLDS; fold++) {
    const train = samples.filter((_, i) => i % FOLDS !== fold);
    const test = samples.filter((_, i) => i % FOLDS === fold);
    if (test.length === 0 || train.length === 0) continue;
    const map = fitMap(question.kind, method, train);
    for (const sample of test) held.push(predictionOf(question.kind, applyMap(question, map, sample.ps), sample.truth));
  }
  return ece(held);
}

function applyMap(question: NormalizedQuestion, map: CalibrationMap, ps: readonly number[]): number[] {
  const outcomes = outcomesOf(question);
  const mapped = calibrateDistribution(question, map, Object.fromEntries(outcomes.map((outcome, i) => [outcome, ps[i] ?? 0])));
  return outcomes.map((outcome) => mapped[outcome]!);
}

export function fitMap(kind: QuestionKind, method: CalibrationMethod, samples: readonly FitSample[]): CalibrationMap {
  switch (method) {
    case 'temperature':
      return { method, temperature: significant(fitTemperature(samples)) };
    case 'platt': {
      const { a, b } = fitPlatt(samples.map((sample) => ({ x: logit(sample.ps[0]!), y: sample.truth === 0 ? 1 : 0 })));
      return { method, a: significant(a), b: significant(b) };
    }
    case 'isotonic':
      return { method, points: isotonicPoints(samples.map((sample) => predictionOf(kind, sample.ps, sample.truth))) };
  }
}

/**
 * The temperature that minimises the negative log-likelihood of the right outcomes. With β = 1/T the loss is
 * convex in β, so a golden-section search over log β finds its minimum. Samples whose right outcome had
 * probability 0 lose the same at every temperature (0 stays 0) and are left out.
 */
export function fitTemperature(samples: readonly FitSample[]): number {
  const usable = samples.filter((sample) => (sample.ps[sample.truth] ?? 0) > 0);
  if (usable.length === 0) return 1;
  const loss = (logBeta: number): number => {
    const beta = Math.exp(logBeta);
    let total = 0;
    for (const { ps, truth } of usable) {
      const top = Math.max(...ps);
      let sum = 0;
      for (const p of ps) if (p > 0) sum += Math.pow(p / top, beta);
      total -= beta * Math.log(ps[truth]! / top) - Math.log(sum);
    }
    return total;
  };
  return 1 / Math.exp(goldenMinimum(loss, Math.log(0.01), Math.log(100)));
}

function goldenMinimum(f: (x: number) => number, low: number, high: number): number {
  const ratio = (Math.sqrt(5) - 1) / 2;
  let a = low;
  let b = high;
  let c = b - ratio * (b - a);
  let d = a + ratio * (b - a);
  let fc = f(c);
  let fd = f(d);
  for (let i = 0; i < 100 && b - a > 1e-9; i++) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - ratio * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + ratio * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

/** Weight of the pull towards the identity map (a = 1, b = 0): keeps the fit defined when every p is the same. */
const PLATT_RIDGE = 1e-2;

/** Logistic regression of y on x = logit(p) by Newton's method, with a kept at 0 or above so the map stays monotone. */
export function fitPlatt(points: readonly { x: number; y: number }[]): { a: number; b: number } {
  let a = 1;
  let b = 0;
  for (let iteration = 0; iteration < 100; iteration++) {
    let ga = 2 * PLATT_RIDGE * (a - 1);
    let gb = 2 * PLATT_RIDGE * b;
    let haa = 2 * PLATT_RIDGE;
    let hab = 0;
    let hbb = 2 * PLATT_RIDGE;
    for (const { x, y } of points) {
      const s = sigmoid(a * x + b);
      const w = s * (1 - s);
      ga += (s - y) * x;
      gb += s - y;
      haa += w * x * x;
      hab += w * x;
      hbb += w;
    }
    const det = haa * hbb - hab * hab;
    if (!(det > 0)) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a = Math.max(0, a - da);
    b -= db;
    if (Math.abs(da) < 1e-10 && Math.abs(db) < 1e-10) break;
  }
  return { a, b };
}

/**
 * Pool-adjacent-violators: the non-decreasing step function closest (least squares) to the outcomes, ordered by
 * prediction. Each block becomes a point (mean prediction, mean outcome).
 */
export function isotonicPoints(predictions: readonly Prediction[]): [number, number][] {
  const sorted = [...predictions].sort((p, q) => p.predicted - q.predicted);
  const blocks: { x: number; y: number; n: number }[] = [];
  for (const { predicted, observed } of sorted) {
    blocks.push({ x: predicted, y: observed ? 1 : 0, n: 1 });
    while (blocks.length > 1 && blocks.at(-2)!.y >= blocks.at(-1)!.y) {
      const last = blocks.pop()!;
      const previous = blocks.at(-1)!;
      const n = previous.n + last.n;
      previous.x = (previous.x * previous.n + last.x * last.n) / n;
      previous.y = (previous.y * previous.n + last.y * last.n) / n;
      previous.n = n;
    }
  }
  const points = blocks.map((block): [number, number] => [significant(block.x), significant(block.y)]);
  return thin(points, ISOTONIC_POINTS_MAX);
}

/** At most max points, the first and the last kept, evenly spaced between: still non-decreasing. */
function thin(points: [number, number][], max: number): [number, number][] {
  if (points.length <= max) return points;
  return Array.from({ length: max }, (_, i) => points[Math.round((i * (points.length - 1)) / (max - 1))]!);
}

function significant(value: number): number {
  return Number(value.toPrecision(6));
}

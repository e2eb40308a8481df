// Expected calibration error over ten equal-width bins of the predicted probability, and coverage and accuracy
// at each minConfidence from 0 to 0.95 by 0.05. The report groups rows into cells in SQL with the same bin and
// step arithmetic as these functions, so a report and a fit agree on which bin a prediction falls in.

export const BIN_COUNT = 10;
export const THRESHOLD_STEPS = 20;

/** 0..9: [0, 0.1), [0.1, 0.2), …, [0.9, 1]; SQL: least(floor(p * 10), 9). */
export function binOf(predicted: number): number {
  return Math.min(Math.max(Math.floor(predicted * BIN_COUNT), 0), BIN_COUNT - 1);
}

/** 0..19: the largest minConfidence step j (j / 20) that the confidence reaches; SQL: least(floor(c * 20), 19). */
export function stepOf(confidence: number): number {
  return Math.min(Math.max(Math.floor(confidence * THRESHOLD_STEPS), 0), THRESHOLD_STEPS - 1);
}

export interface Bin {
  from: number;
  to: number;
  count: number;
  /** Mean predicted probability in the bin; null when empty. */
  confidence: number | null;
  /** How often the prediction came true in the bin; null when empty. */
  accuracy: number | null;
}

/** Sums over the predictions of one bin. */
export interface BinSums {
  count: number;
  predicted: number;
  observed: number;
}

export function emptyBinSums(): BinSums[] {
  return Array.from({ length: BIN_COUNT }, () => ({ count: 0, predicted: 0, observed: 0 }));
}

/** Bin sums of (predicted probability, came true) pairs. */
export function binSumsOf(pairs: Iterable<{ predicted: number; observed: boolean }>): BinSums[] {
  const sums = emptyBinSums();
  for (const pair of pairs) {
    const bin = sums[binOf(pair.predicted)]!;
    bin.count++;
    bin.predicted += pair.predicted;
    bin.observed += pair.observed ? 1 : 0;
  }
  return sums;
}

export function binsOf(sums: readonly BinSums[]): Bin[] {
  return sums.map((sum, i) => ({
    from: round(i / BIN_COUNT),
    to: round((i + 1) / BIN_COUNT),
    count: sum.count,
    confidence: sum.count > 0 ? sum.predicted / sum.count : null,
    accuracy: sum.count > 0 ? sum.observed / sum.count : null,
  }));
}

/** Σ over bins of (bin count / total) × |accuracy − confidence|; null without any prediction. */
export function expectedCalibrationError(sums: readonly BinSums[]): number | null {
  const total = sums.reduce((n, sum) => n + sum.count, 0);
  if (total === 0) return null;
  return sums.reduce((ece, sum) => (sum.count === 0 ? ece : ece + Math.abs(sum.observed - sum.predicted) / total), 0);
}

export interface Threshold {
  min_confidence: number;
  /** Answers a minConfidence of this value would keep. */
  kept: number;
  /** kept / labelled; null without labelled answers. */
  coverage: number | null;
  /** How often the kept top answers were right; null when none is kept. */
  accuracy: number | null;
}

/** Per step: answers whose confidence falls in that step, and how many of them were right. */
export interface StepSums {
  count: number;
  correct: number;
}

export function emptyStepSums(): StepSums[] {
  return Array.from({ length: THRESHOLD_STEPS }, () => ({ count: 0, correct: 0 }));
}

/** A threshold at step j keeps every answer in steps j and above. */
export function thresholdsOf(steps: readonly StepSums[]): Threshold[] {
  const total = steps.reduce((n, step) => n + step.count, 0);
  const out: Threshold[] = [];
  let kept = 0;
  let correct = 0;
  for (let j = THRESHOLD_STEPS - 1; j >= 0; j--) {
    kept += steps[j]!.count;
    correct += steps[j]!.correct;
    out.push({ min_confidence: round(j / THRESHOLD_STEPS), kept, coverage: total > 0 ? kept / total : null, accuracy: kept > 0 ? correct / kept : null });
  }
  return out.reverse();
}

/** Bin edges printed as 0.1 rather than 0.30000000000000004. */
function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

import type { ConfidenceSource, NormalizedSchema, QuestionKind } from '../schema-types';
import { type Bin, binsOf, emptyBinSums, emptyStepSums, expectedCalibrationError, type Threshold, thresholdsOf } from './bins';

/**
 * Sums over the labels of one question and source that share a bin of the predicted probability and a
 * minConfidence step of the confidence: what the database groups a million labels into.
 */
export interface QualityCell {
  question: string;
  kind: QuestionKind | 'action';
  source: ConfidenceSource;
  /** null for the action. */
  bin: number | null;
  step: number | null;
  count: number;
  predicted: number;
  observed: number;
  correct: number;
  /** Σ (p − y)² over probability questions' labels. */
  brier: number;
  /** Σ −(y ln p + (1 − y) ln(1 − p)), p kept within [1e-6, 1 − 1e-6]. */
  log_loss: number;
}

export interface SourceQuality {
  labelled: number;
  /** choice and score: how often the top answer was right; null for probability questions or without labels. */
  accuracy: number | null;
  /** probability questions only. */
  brier: number | null;
  log_loss: number | null;
  ece: number | null;
  bins: Bin[];
  thresholds: Threshold[];
}

export interface QuestionQuality {
  key: string;
  kind: QuestionKind;
  min_confidence: number | null;
  labelled: number;
  sources: Partial<Record<ConfidenceSource, SourceQuality>>;
}

export interface QualityReport {
  questions: QuestionQuality[];
  action: { labelled: number; agreement: number | null };
}

/** Every question of the version, in question order, each with the sources that have labels (model always). */
export function qualityReport(schema: NormalizedSchema, cells: readonly QualityCell[]): QualityReport {
  const actionCells = cells.filter((cell) => cell.kind === 'action');
  const actionLabelled = sum(actionCells, (cell) => cell.count);
  return {
    questions: schema.questions.map((question) => {
      const mine = cells.filter((cell) => cell.question === question.key && cell.kind === question.kind);
      const sources: Partial<Record<ConfidenceSource, SourceQuality>> = {
        model: sourceQuality(
          question.kind,
          mine.filter((cell) => cell.source === 'model'),
        ),
      };
      const tokens = mine.filter((cell) => cell.source === 'tokens');
      if (tokens.length > 0) sources.tokens = sourceQuality(question.kind, tokens);
      return { key: question.key, kind: question.kind, min_confidence: question.minConfidence, labelled: sources.model!.labelled, sources };
    }),
    action: { labelled: actionLabelled, agreement: actionLabelled > 0 ? sum(actionCells, (cell) => cell.correct) / actionLabelled : null },
  };
}

function sourceQuality(kind: QuestionKind, cells: readonly QualityCell[]): SourceQuality {
  const bins = emptyBinSums();
  const steps = emptyStepSums();
  for (const cell of cells) {
    if (cell.bin !== null) {
      const bin = bins[cell.bin]!;
      bin.count += cell.count;
      bin.predicted += cell.predicted;
      bin.observed += cell.observed;
    }
    if (cell.step !== null) {
      const step = steps[cell.step]!;
      step.count += cell.count;
      step.correct += cell.correct;
    }
  }
  const labelled = sum(cells, (cell) => cell.count);
  const mean = (value: number) => (labelled > 0 ? value / labelled : null);
  const probability = kind === 'probability';
  return {
    labelled,
    accuracy: probability ? null : mean(sum(cells, (cell) => cell.correct)),
    brier: probability ? mean(sum(cells, (cell) => cell.brier)) : null,
    log_loss: probability ? mean(sum(cells, (cell) => cell.log_loss)) : null,
    ece: expectedCalibrationError(bins),
    bins: binsOf(bins),
    thresholds: thresholdsOf(steps),
  };
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  return items.reduce((total, item) => total + of(item), 0);
}

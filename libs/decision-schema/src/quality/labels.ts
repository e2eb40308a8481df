import type { Distributions } from '../distributions';
import { entropyConfidence } from '../evaluate';
import { outcomesOf } from '../outcomes';
import { CONFIDENCE_SOURCES, type ConfidenceSource, type NormalizedQuestion, type NormalizedSchema, type QuestionKind } from '../schema-types';
import { calibrateDistributions, topIndex } from './calibration';
import { predictionOf } from './fit';
import type { Outcome, OutcomeValue } from './outcome';

/**
 * One labelled answer, as the quality report counts it: per question and confidence source, and one for the
 * action (`kind` = `action`, `question` = ``, `source` = `model`).
 */
export interface QualityLabel {
  question: string;
  kind: QuestionKind | 'action';
  source: ConfidenceSource;
  /** The confidence the run reported (what minConfidence compares); null for the action. */
  confidence: number | null;
  /** choice, score: the top answer's probability; probability: p(yes). Null for the action. */
  predicted: number | null;
  /** choice, score: the top answer was right; probability: the yes happened. Null for the action. */
  observed: boolean | null;
  /** The top answer (probability: p(yes) ≥ 0.5 read as yes) or the action was right. */
  correct: boolean;
}

/** The distributions an execution recorded, per source, before any calibration. */
export type RecordedDistributions = Partial<Record<ConfidenceSource, Distributions>>;

/**
 * The labels of one execution's outcome. Distributions are calibrated by the version's own calibration first, so a
 * calibrated version is judged on what it answered. Questions the outcome does not name, or whose distribution
 * was not stored, give no label.
 */
export function outcomeLabels(
  schema: NormalizedSchema,
  recorded: RecordedDistributions | null,
  outcome: Outcome,
  executedAction: string | null,
): QualityLabel[] {
  const labels: QualityLabel[] = [];
  for (const source of CONFIDENCE_SOURCES) {
    const raw = recorded?.[source];
    if (!raw) continue;
    const distributions = calibrateDistributions(schema, source, raw);
    for (const question of schema.questions) {
      const truth = outcome.answers[question.key];
      const distribution = distributions[question.key];
      if (truth === undefined || !distribution) continue;
      labels.push(
        questionLabel(
          question,
          source,
          outcomesOf(question).map((o) => distribution[o] ?? 0),
          truth,
        ),
      );
    }
  }
  if (outcome.action !== null && executedAction !== null) {
    labels.push({
      question: '',
      kind: 'action',
      source: 'model',
      confidence: null,
      predicted: null,
      observed: null,
      correct: executedAction === outcome.action,
    });
  }
  return labels;
}

/** The index of the outcome a reported value names, in outcome order (probability questions: yes is 0, no is 1). */
export function truthIndex(question: NormalizedQuestion, value: OutcomeValue): number {
  if (question.kind === 'probability') return value === true ? 0 : 1;
  return outcomesOf(question).indexOf(value as string);
}

function questionLabel(question: NormalizedQuestion, source: ConfidenceSource, ps: number[], value: OutcomeValue): QualityLabel {
  const truth = truthIndex(question, value);
  const { predicted, observed } = predictionOf(question.kind, ps, truth);
  if (question.kind === 'probability') {
    const yes = ps[0]!;
    return {
      question: question.key,
      kind: question.kind,
      source,
      confidence: Math.abs(2 * yes - 1),
      predicted,
      observed,
      correct: yes >= 0.5 === (truth === 0),
    };
  }
  return { question: question.key, kind: question.kind, source, confidence: entropyConfidence(ps), predicted, observed, correct: topIndex(ps) === truth };
}

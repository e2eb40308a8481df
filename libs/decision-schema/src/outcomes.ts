import type { NormalizedQuestion, ScoreLevel, ScoreLevelInput } from './schema-types';

export const PROBABILITY_OUTCOMES = ['yes', 'no'] as const;

/** A text level is its own label; a rubric level without a label is known by its 1-based position. */
export function levelLabel(level: ScoreLevel | ScoreLevelInput, index: number): string {
  if (typeof level === 'string') return level;
  return level.label ?? String(index + 1);
}

export function levelLabels(question: { levels: readonly (ScoreLevel | ScoreLevelInput)[] }): string[] {
  return question.levels.map(levelLabel);
}

/** The outcomes a question's distribution ranges over, in the order ties are broken. */
export function outcomesOf(question: NormalizedQuestion): string[] {
  switch (question.kind) {
    case 'choice':
      return question.options.map((option) => option.value);
    case 'score':
      return levelLabels(question);
    case 'probability':
      return [...PROBABILITY_OUTCOMES];
  }
}

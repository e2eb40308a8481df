import { fullSchema, normalized } from './__fixtures__/schemas';
import { levelLabels, outcomesOf } from './outcomes';
import type { NormalizedQuestion, ScoreQuestion } from './schema-types';

// fullSchema has three questions: intent, urgency and fraud, in that order.
const [intent, urgency, fraud] = normalized(fullSchema()).questions as [NormalizedQuestion, NormalizedQuestion, NormalizedQuestion];

describe('outcomesOf', () => {
  it('choice: option values with other last', () => {
    expect(outcomesOf(intent)).toEqual(['refund', 'exchange', 'other']);
  });

  it('score: level labels in order', () => {
    expect(outcomesOf(urgency)).toEqual(['calm', 'annoyed', 'furious']);
  });

  it('probability: yes and no', () => {
    expect(outcomesOf(fraud)).toEqual(['yes', 'no']);
  });
});

describe('levelLabels', () => {
  it('reads text, labelled and rubric levels, numbering unlabelled rubrics from 1', () => {
    expect(levelLabels(urgency as ScoreQuestion)).toEqual(['calm', 'annoyed', 'furious']);
    expect(levelLabels({ levels: [{ rubric: { a: 1 } }, 'b', { label: 'c', description: null }, { rubric: 'x' }] })).toEqual(['1', 'b', 'c', '4']);
  });
});
